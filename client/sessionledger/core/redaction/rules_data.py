# ruff: noqa: E501  (data: one regex or example per line reads better than a wrapped one)
"""The redaction rules, as data (TOML in a Python string so that the stdlib-only client ships it
without package-data configuration). Loaded by rules.load_specs; documented in docs/redaction.md.

Each `[[rule]]`: `id`, `kind` (the `[REDACTED:<kind>]` marker and the count key), `category`,
`description`, `source`, the matching fields described in rules.py, and example templates `tp`
(true positives: each `«…»` must be redacted with this rule's kind, the rest kept byte for byte)
and `fp` (false positives: must come back unchanged). Templates are expanded by examples.py.

Sources. Token formats come from each provider's documentation and from the public rule sets and
test material of secret scanners. Where a regex or example follows gitleaks
(https://github.com/gitleaks/gitleaks, config/gitleaks.toml and cmd/generate/config/rules/*.go), the
rule's `source` says so; that material is used under its MIT licence:

    MIT License. Copyright (c) 2019 Zachary Rice.
    Permission is hereby granted, free of charge, to any person obtaining a copy of this software
    and associated documentation files (the "Software"), to deal in the Software without
    restriction, including without limitation the rights to use, copy, modify, merge, publish,
    distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
    Software is furnished to do so, subject to the following conditions: The above copyright notice
    and this permission notice shall be included in all copies or substantial portions of the
    Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
    INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE
    AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
    DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
    OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.

Examples marked "detect-secrets" follow Yelp/detect-secrets' tests (Apache-2.0). Formats checked
against trufflehog's detectors were only read, never copied (AGPL).

Order matters: where two rules match overlapping text the earlier one wins, so provider formats
come first and keyword rules (passwords, generic assignments) last.
"""

RULES_TOML = r"""
# ============================================================================ private keys

[[rule]]
id = "private-key-pem"
kind = "private_key"
category = "private_key"
description = "PEM/OpenSSH/PGP private key block, also split across Read line numbers (`     5→`), diff lines and structuredPatch strings"
source = "RFC 7468; gitleaks private-key (MIT)"
prefixes = ["-----BEGIN"]
follow = '''[ A-Z0-9_-]{0,40}PRIVATE KEY'''
regex = '''-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=:,. \t]|-(?!----)|<<KEY_BREAK>>){0,65536}(?:-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----)?'''
validator = "pem_body"
multiline = true
tp = [
  "$ cat ~/.ssh/id_rsa\n«{pem:RSA PRIVATE KEY}»\n",
  "«{pem:OPENSSH PRIVATE KEY}»",
  "«{pem:PRIVATE KEY}»",
  "«{pem:EC PRIVATE KEY}»",
  "«{pem:PGP PRIVATE KEY BLOCK}»",
  "KEY = (\n    \"«-----BEGIN RSA PRIVATE KEY-----\\n\"\n    \"{b64:64}\\n\"\n    \"{b64:40}==\\n\"\n    \"-----END RSA PRIVATE KEY-----»\\n\"\n)",
  "> «-----BEGIN PRIVATE KEY-----\n> {b64:64}\n> {b64:40}==\n> -----END PRIVATE KEY-----»",
  "String key = \"«-----BEGIN RSA PRIVATE KEY-----\" +\n\"{b64:64}\" +\n\"{b64:40}==\" +\n\"-----END RSA PRIVATE KEY-----»\";",
  '''{{"type": "service_account", "private_key": "«-----BEGIN PRIVATE KEY-----\\n{b64:64}\\n{b64:64}\\n{b64:40}==\\n-----END PRIVATE KEY-----»\\n"}}''',
]
fp = [
  '''if pem.startswith("-----BEGIN RSA PRIVATE KEY-----"):''',
  "-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----",
  "-----BEGIN CERTIFICATE-----\n{b64:64}\n{b64:64}\n-----END CERTIFICATE-----",
  "-----BEGIN PUBLIC KEY-----\n{b64:64}\n{b64:40}==\n-----END PUBLIC KEY-----",
]

[[rule]]
id = "private-key-base64-pem"
kind = "private_key"
category = "private_key"
description = "Base64 of a PEM private key, under any name or none (kubeconfig client-key-data, Kubernetes tls.key, ssh-privatekey, PRIVATE_KEY_B64=)"
source = "Kubernetes docs: kubeconfig client-key-data, Secret types kubernetes.io/tls and ssh-auth"
# base64 of `-----BEGIN ` always starts `LS0tLS1CRUdJTi`; the validator reads `PRIVATE KEY` in what follows
prefixes = ["LS0tLS1CRUdJTi"]
regex = '''<<START>>(?P<secret>LS0tLS1CRUdJTi[A-Za-z0-9+/]{80,65536}={0,2})(?![A-Za-z0-9+/=])'''
validator = "b64_private_key"
tp = [
  "    client-key-data: «LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ{b64:200}»",
  "  tls.key: «LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t{b64:200}»",
  "PRIVATE_KEY_B64=«LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ{b64:200}»",
  "the deploy key, base64ed: «LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0{b64:200}»",
]
fp = ["    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t{b64:200}", "  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t{b64:200}", "PUBLIC_KEY_B64=LS0tLS1CRUdJTiBQVUJMSUMgS0VZLS0tLS0{b64:200}"]

[[rule]]
id = "openvpn-static-key"
kind = "private_key"
category = "private_key"
description = "An OpenVPN static key block (`ta.key`, `static.key`, `<tls-auth>`/`<tls-crypt>` in a .ovpn file): 256 bytes of key in hex lines; whoever holds it passes the server's HMAC firewall or decrypts a static-key tunnel"
source = "OpenVPN manual: --secret, --tls-auth, --tls-crypt, --genkey"
prefixes = ["-----BEGIN"]
follow = ''' OpenVPN Static key V1-----'''
regex = '''-----BEGIN OpenVPN Static key V1-----(?:[0-9a-fA-F \t]|<<BREAK>>){32,4096}(?:-----END OpenVPN Static key V1-----)?'''
multiline = true
tp = [
  "$ cat /etc/openvpn/ta.key\n«-----BEGIN OpenVPN Static key V1-----\n{hex:32}\n{hex:32}\n{hex:32}\n{hex:32}\n-----END OpenVPN Static key V1-----»\n",
  "<tls-crypt>\n«-----BEGIN OpenVPN Static key V1-----\n{hex:32}\n{hex:32}\n{hex:32}\n-----END OpenVPN Static key V1-----»\n</tls-crypt>",
]
fp = ["grep -- '-----BEGIN OpenVPN Static key V1-----' ta.key"]

[[rule]]
id = "private-key-ssh2"
kind = "private_key"
category = "private_key"
description = "An SSH.com (SECSH, RFC 4716 style) private key block, `---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----`, as ssh-keygen -e or PuTTYgen export it"
source = "RFC 4716 (the SSH public key file format whose armour it shares); OpenSSH ssh-keygen(1) -e/-i"
prefixes = ["---- BEGIN SSH2"]
follow = ''' ENCRYPTED PRIVATE KEY ----'''
regex = '''---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----(?:[A-Za-z0-9+/=:,."\t ]|-(?!--- END)|<<KEY_BREAK>>){64,65536}(?:---- END SSH2 ENCRYPTED PRIVATE KEY ----)?'''
validator = "pem_body"
multiline = true
tp = ["«---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key-20260101\"\n{b64:64}\n{b64:64}\n{b64:40}==\n---- END SSH2 ENCRYPTED PRIVATE KEY ----»"]
fp = ["---- BEGIN SSH2 PUBLIC KEY ----\nComment: \"rsa-key\"\n{b64:64}\n---- END SSH2 PUBLIC KEY ----"]

[[rule]]
id = "putty-private-key"
kind = "private_key"
category = "private_key"
description = "PuTTY private key file (.ppk)"
source = "PuTTY documentation, appendix C (PPK file format)"
prefixes = ["PuTTY-User-Key-File-"]
follow = '''[23]:'''
# the file ends with its MAC: the lines after it stay (possessive: one pass, no backtracking)
regex = '''PuTTY-User-Key-File-[23]:(?:(?!Private-MAC:)(?:[A-Za-z0-9+/=:,. \t@_-]|<<BREAK>>)){0,65536}+(?:Private-MAC:[ \t]{0,4}[0-9a-fA-F]{40,64}(?![0-9a-fA-F]))?'''
multiline = true
validator = "pem_body"
tp = ["«PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: dev@laptop\nPublic-Lines: 2\n{b64:64}\n{b64:20}\nPrivate-Lines: 1\n{b64:64}\nPrivate-MAC: {hex:64}»"]
fp = ["PuTTY-User-Key-File-3 is the header of a .ppk file"]

[[rule]]
id = "age-secret-key"
kind = "private_key"
category = "private_key"
description = "age encryption secret key"
source = "age specification (C2SP); gitleaks age-secret-key (MIT)"
prefixes = ["AGE-SECRET-KEY-1"]
regex = '''<<START>>AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}<<END>>'''
tp = ["# created: 2024\n«AGE-SECRET-KEY-1{bech32:58}»"]
fp = ["the key starts with AGE-SECRET-KEY-1"]

[[rule]]
id = "der-private-key-base64"
kind = "private_key"
category = "private_key"
description = "A private key as base64 DER in one run, without PEM lines (PKCS#8 RSA, EC, Ed25519/Ed448/X25519/X448; PKCS#1 RSA of 1024 to 4096 bits): found by the base64 of its version and first member"
source = "RFC 5208 (PKCS#8), RFC 8017 (PKCS#1), RFC 5915 (SEC1 EC)"
# the version `INTEGER 0` and the modulus (PKCS#1), the inner RSA key's start (PKCS#8), the EC and
# Edwards/Montgomery algorithm ids (PKCS#8), the version `INTEGER 1` and the key's octets (SEC1 EC):
# each starts with `A`, a literal a scan already passes over
anchors = ['''AKCA[QgY]EA''', '''AKBgQ''', '''AgEAAo[GI]''', '''AgEAMB[AM]GByqGSM49''', '''AQAwBQYDK2V[uvwx]''', '''AQEEI''', '''AgEBB[DE]''']
lead = "A-Za-z0-9+/"
lead_max = 80
regex = '''(?:(?<![A-Za-z0-9+/])|<<AFTER_ESCAPE>>)(?P<secret>M[A-Za-z0-9+/]{40,8000}={0,2})(?![A-Za-z0-9+/=])'''
validator = "der_private_key"
tp = [
  "the key is «MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ{b64:1500}»",
  "«MIIEpAIBAAKCAQEA{b64:1500}»",
  "ed25519 private key: «MC4CAQAwBQYDK2VwBCIEI{b64:22}»",
  "«MHcCAQEEI{b64:150}»",
]
fp = [
  "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA{b64:300}IDAQAB",
  "MCowBQYDK2VwAyEA{b64:43}=",
]

[[rule]]
id = "pkcs12-base64"
kind = "private_key"
category = "private_key"
description = "A PKCS#12 file (`.pfx`, `.p12`: a private key and its certificates, in the clear or under a password) as base64 in one run, as Azure, Kubernetes and CI variables keep certificates"
source = "RFC 7292 (PKCS #12 v1.1): a PFX of version 3 whose authSafe is pkcs7-data"
# the version `INTEGER 3`, the authSafe's SEQUENCE and its pkcs7-data OID in a file of 256 bytes to
# 64 KB: starts with `A`, a literal a scan already passes over
anchors = ['''AzCC[A-Za-z0-9+/]{4}CSqGSIb3DQEHA''']
lead = "A-Za-z0-9+/"
lead_max = 8
regex = '''(?:(?<![A-Za-z0-9+/])|<<AFTER_ESCAPE>>)(?P<secret>MII[A-Za-z0-9+/]{5}AzCC[A-Za-z0-9+/]{40,60000}={0,2})(?![A-Za-z0-9+/=])'''
validator = "pkcs12"
tp = [
  "AZURE_CLIENT_CERTIFICATE=«MIIJogIBAzCCCVgGCSqGSIb3DQEHAaCCCUkEgglF{b64:3000}»",
  '''{{"apiVersion": "v1", "kind": "Secret", "data": {{"tls.pfx": "«MIIKYQIBAzCCCicGCSqGSIb3DQEHAaCCChgEggoU{b64:4000}==»"}}}}''',
]
fp = [
  "MIIDdzCCAl+gAwIBAgIUJ{b64:900}",
  "not a file: QUJDAzCCAAAACSqGSIb3DQEHAaCC{b64:100}",
  "MIIJogIBAzCCCVgGCSqGSIb3DQEHAaCC is how a PFX starts",
]

[[rule]]
id = "jwk-private-d"
kind = "private_key"
category = "private_key"
description = "A JSON Web Key's private exponent or scalar `d` (RSA, EC), found beside the RSA `p`/`dp` member or the EC curve; OKP keys, and the RSA primes and their exponents, have rules of their own below"
source = "RFC 7517 (JWK), RFC 7518 §6 (RSA and EC private members)"
# `"p":`/`"dp":` (an RSA key's primes) and an EC curve (`P-256`, `secp256k1`) hold a `p` the scans
# already find. `d` is the member right before `p` (RFC order) or `dp` (sorted): looked for behind,
# across one comma only (the lead stops at the one before `d`, so a run of members costs nothing);
# an EC key's `d` comes after its curve: looked for ahead
lower_anchors = ['''<<JWK_P>>[ \t]{0,4}:''', '''p-(?:256|384|521)\\{0,3}"''', '''p256k1\\{0,3}"''']
lead = '''A-Za-z0-9_":\\ \t\n-'''
lead_gap = '''",\\ \t\nd'''
lead_max = 2000
regex = '''(?:<<JS>><<JQ>>(?:[Pp]-(?:256|384|521)|secp256k1)<<JQ>>[^{}]{0,1500}?)?<<JS>><<JQ>>d<<JKV>>(?P<secret><<JB64>>)'''
validator = "random_token"
tp = [
  '''{{"kty":"RSA","n":"{b64url:342}","e":"AQAB","d":"«{b64url:342}»","p":"«{b64url:171}»"}}''',
  '''{{"d": "«{b64url:342}»", "dp": "«{b64url:171}»"}}''',
  '''{{\n  "kty": "EC",\n  "crv": "P-256",\n  "x": "{b64url:43}",\n  "y": "{b64url:43}",\n  "d": "«{b64url:43}»"\n}}''',
  '''{{"crv":"P-384","d":"«{b64url:64}»","kty":"EC","x":"{b64url:64}","y":"{b64url:64}"}}''',
]
fp = [
  '''{{"kty":"RSA","n":"{b64url:342}","e":"AQAB","alg":"RS256","kid":"2024-01","use":"sig"}}''',
  '''{{"kty":"EC","crv":"P-256","x":"{b64url:43}","y":"{b64url:43}"}}''',
  '''{{"p": 1, "d": "2026-01-29", "q": "select 1"}}''',
]

[[rule]]
id = "jwk-okp-d"
kind = "private_key"
category = "private_key"
description = "An OKP JSON Web Key's private key `d` (Ed25519, X25519, Ed448) after its key type `OKP`, in the RFC's order (kty, crv, x, d)"
source = "RFC 8037 §2"
lower_anchors = ['''<<JWK_OKP>>''']
regex = '''P<<JQ>>[^{}]{0,160}?<<JQ>>d<<JKV>>(?P<secret><<JB64>>)'''
validator = "random_token"
tp = ['''{{"kty": "OKP", "crv": "X25519", "x": "{b64url:43}", "d": "«{b64url:43}»"}}''']
fp = ['''{{"kty":"OKP","crv":"Ed25519","x":"{b64url:43}"}}''']

[[rule]]
id = "jwk-okp-d-sorted"
kind = "private_key"
category = "private_key"
description = "An OKP JSON Web Key's private key `d` a member or two before its key type `OKP`, as sorted members put it (crv, d, kty, x)"
source = "RFC 8037 §2"
lower_anchors = ['''<<JWK_OKP>>''']
lead = '''A-Za-z0-9_":,\\ \t\n-'''
lead_max = 120
regex = '''<<JQ>>d<<JKV>>(?P<secret><<JB64>>)'''
validator = "random_token"
tp = ['''{{"crv":"Ed25519","d":"«{b64url:43}»","kty":"OKP","x":"{b64url:43}"}}''']
fp = ['''{{"crv":"Ed25519","kty":"OKP","x":"{b64url:43}"}}''']

[[rule]]
id = "jwk-rsa-prime"
kind = "private_key"
category = "private_key"
description = "An RSA JSON Web Key's prime `p` or its exponent `dp`, at the member the scan found"
source = "RFC 7518 §6.3.2"
lower_anchors = ['''<<JWK_P>>[ \t]{0,4}:''']
lead = '''\\"d'''
lead_max = 4
regex = '''<<JQ>>d?p<<JKV>>(?P<secret><<JB64>>)'''
validator = "random_token"
tp = ['''"d":"«{b64url:342}»","p":"«{b64url:171}»","q":"«{b64url:171}»"''', '''"dp": "«{b64url:171}»"''']
fp = ['''{{"p": "the-name-of-a-page-in-the-docs-for-users"}}''']

[[rule]]
id = "jwk-rsa-next"
kind = "private_key"
category = "private_key"
description = "An RSA JSON Web Key's `q` or `dq`: the member after `p` or `dp`"
source = "RFC 7518 §6.3.2"
lower_anchors = ['''<<JWK_P>>[ \t]{0,4}:''']
lead = '''\\"d'''
lead_max = 4
regex = '''<<JQ>>d?p<<JKV>><<JB64>><<JNEXT>>d?q<<JKV>>(?P<secret><<JB64>>)'''
validator = "random_token"
tp = ['''"p":"«{b64url:171}»","q":"«{b64url:171}»"''', "\"dp\": \"«{b64url:171}»\",\n  \"dq\": \"«{b64url:171}»\""]
fp = ['''{{"p": 1, "q": "{b64url:171}"}}''']

[[rule]]
id = "jwk-rsa-coefficient"
kind = "private_key"
category = "private_key"
description = "An RSA JSON Web Key's `qi`: two members after `dp` in the RFC's order (p, q, dp, dq, qi), after `p` in sorted order (dp, dq, …, p, q, qi)"
source = "RFC 7518 §6.3.2"
lower_anchors = ['''<<JWK_P>>[ \t]{0,4}:''']
lead = '''\\"d'''
lead_max = 4
regex = '''<<JQ>>d?p<<JKV>><<JB64>><<JNEXT>>d?q<<JKV>><<JB64>><<JNEXT>>qi<<JKV>>(?P<secret><<JB64>>)'''
validator = "random_token"
tp = ['''"dp":"«{b64url:171}»","dq":"«{b64url:171}»","qi":"«{b64url:171}»"''', '''"p": "«{b64url:171}»", "q": "«{b64url:171}»", "qi": "«{b64url:171}»"''']
fp = ['''{{"dp": "x", "dq": "y", "qi": "{b64url:171}"}}''']

[[rule]]
id = "xml-rsa-private-key"
kind = "private_key"
category = "private_key"
description = "An RSA private key in .NET's XML (`RSA.ToXmlString(true)`, `.xml` key files): an `<RSAKeyValue>` with more members than the public modulus and exponent, every member taken"
source = ".NET RSA.ToXmlString and the XML-Signature RSAKeyValue it extends with P, Q, DP, DQ, InverseQ and D"
# on the `A` scan, `<RS` behind it (a `ke` anchor would be tried at every `key`); a public key's
# two members stay
prefixes = ["<RSAKeyValue>"]
regex = '''<RSAKeyValue>(?P<secret>(?:(?:[ \t\r\n]|\\{1,8}[nrt]){0,16}<(?:Modulus|Exponent|P|Q|DP|DQ|InverseQ|D)>[A-Za-z0-9+/]{1,1400}={0,2}</[A-Za-z]{1,8}>){3,8}+)'''
tp = [
  "<RSAKeyValue>«<Modulus>{b64:172}</Modulus><Exponent>AQAB</Exponent><P>{b64:86}</P><Q>{b64:86}</Q><DP>{b64:86}</DP><DQ>{b64:86}</DQ><InverseQ>{b64:86}</InverseQ><D>{b64:172}</D>»</RSAKeyValue>",
  "<RSAKeyValue>«\n  <Modulus>{b64:172}</Modulus>\n  <Exponent>AQAB</Exponent>\n  <D>{b64:172}</D>»\n</RSAKeyValue>",
  "xml = \"<RSAKeyValue>«\\n<Modulus>{b64:172}</Modulus>\\n<Exponent>AQAB</Exponent>\\n<P>{b64:86}</P>»\\n</RSAKeyValue>\"",
]
fp = ["<RSAKeyValue><Modulus>{b64:172}</Modulus><Exponent>AQAB</Exponent></RSAKeyValue>", "var xml = rsa.ToXmlString(true); // <RSAKeyValue> with P and Q"]

# ============================================================================ cloud

[[rule]]
id = "aws-access-key-id"
kind = "aws_access_key"
category = "cloud"
description = "AWS access key id (long-term AKIA, temporary ASIA, and other unique-id prefixes)"
source = "AWS IAM docs: unique identifier prefixes; gitleaks aws-access-token (MIT)"
prefixes = ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"]
follow = '''[A-Z0-9]{16}'''
regex = '''<<START>>(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])'''
validator = "token"
tp = [
  "AWS_ACCESS_KEY_ID=«AKIA{b32:16}»",
  '''{{"AccessKeyId": "«ASIA{b32:16}»", "Expiration": "2026-02-10"}}''',
  "aws_access_key_id = «AKIA{b32:16}»",
  # a known prefix at its length is a key whatever its body: only a whole template is vetoed
  "key = «AKIAXXXXXXXXXXXXXXXX»",
]
fp = [
  "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
  "key = ${AWS_ACCESS_KEY_ID}",
  "TODAYINASIAASACKOFRICEFELLOVER",
]

[[rule]]
id = "aws-secret-access-key"
kind = "aws_secret_key"
category = "cloud"
description = "AWS secret access key next to its name (credentials file, env, JSON, aws configure)"
source = "AWS CLI docs: configuration and credential file settings"
lower_anchors = ['''key<<SEPA>><<VALA>>''', '''key[ \t]{1,8}[a-z0-9/+]{40}''', '''key \[''']
lead = "A-Za-z0-9_. -"
regex = '''<<NAME_START>>[A-Za-z0-9_.-]{0,64}(?i:secret_?access_?key|aws_?secret_?key|aws secret access key)(?:[ \t]{0,4}\[[^\]\\"\n]{0,40}\])?(?:<<SEP>>|[ \t]{1,8})(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])'''
validator = "aws_secret"
tp = [
  "[default]\naws_secret_access_key = «{b64:40}»\nregion = eu-west-1",
  '''"SecretAccessKey": "«{b64:40}»",''',
  "aws configure set aws_secret_access_key «{b64:40}»",
  "AWS Secret Access Key [None]: «{b64:40}»",
]
fp = ["aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"]

[[rule]]
id = "aws-bedrock-api-key"
kind = "aws_access_key"
category = "cloud"
description = "Amazon Bedrock long-term API key"
source = "AWS Bedrock docs: API keys; gitleaks aws-amazon-bedrock-api-key-long-lived (MIT)"
prefixes = ["ABSK"]
follow = '''[A-Za-z0-9+/]{40}'''
regex = '''<<START>>ABSK[A-Za-z0-9+/]{109,269}={0,2}<<END>>'''
validator = "token"
tp = ["AWS_BEARER_TOKEN_BEDROCK=«ABSKQmVkcm9ja0FQSUtleS1{alnum:108}=»"]
fp = ["ABSK is the prefix of Bedrock API keys"]

[[rule]]
id = "gcp-api-key"
kind = "google_api_key"
category = "cloud"
description = "Google API key (Maps, Firebase, Gemini)"
source = "Google Cloud docs: API keys; gitleaks gcp-api-key (MIT)"
prefixes = ["AIza"]
follow = '''[A-Za-z0-9_-]{30}'''
regex = '''<<START>>AIza[A-Za-z0-9_-]{35}<<END>>'''
validator = "token"
tp = ["https://maps.googleapis.com/maps/api/geocode/json?key=«AIza{token:35}»&address=x", "GEMINI_API_KEY=«AIza{token:35}»"]
fp = ["AIzaSy${FIREBASE_API_KEY} is filled in at build time"]

[[rule]]
id = "gcp-oauth-access-token"
kind = "google_oauth"
category = "cloud"
description = "Google OAuth 2.0 access token"
source = "Google Identity docs: OAuth 2.0 access tokens (ya29.)"
prefixes = ["ya29."]
follow = '''[A-Za-z0-9_-]{16}'''
regex = '''<<START>>ya29\.[A-Za-z0-9_-]{30,2048}<<END>>'''
validator = "token"
tp = ["Authorization: Bearer «ya29.a0{token:150}»", "token «ya29.{lowalnum:30}{token:80}»"]
fp = ["tokens start with ya29."]

[[rule]]
id = "gcp-oauth-client-secret"
kind = "google_oauth"
category = "cloud"
description = "Google OAuth client secret"
source = "Google Identity docs: client secrets (GOCSPX-)"
prefixes = ["GOCSPX-"]
follow = '''<<B62>>'''
regex = '''<<START>>GOCSPX-[A-Za-z0-9_-]{28}<<END>>'''
validator = "token"
tp = ['''"client_secret":"«GOCSPX-{token:28}»"''']
fp = ["GOCSPX- is the client secret prefix"]

[[rule]]
id = "firebase-cloud-messaging-key"
kind = "google_api_key"
category = "cloud"
description = "Firebase Cloud Messaging legacy server key"
source = "Firebase docs: legacy server keys (AAAA…:APA91b…)"
prefixes = ["AAAA"]
follow = '''[A-Za-z0-9_-]{7}:APA91b'''
regex = '''<<START>>AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{130,160}<<END>>'''
validator = "token"
tp = ["FCM_SERVER_KEY=«AAAA{token:7}:APA91b{token:134}»"]
fp = ["AAAA records map names to IPv6 addresses"]

[[rule]]
id = "azure-storage-account-key"
kind = "azure"
category = "cloud"
description = "Azure Storage / Cosmos DB / Service Bus key in a connection string"
source = "Azure docs: storage connection strings"
prefixes = ["AccountKey=", "SharedAccessKey="]
follow = '''[A-Za-z0-9+/]{20}'''
regex = '''(?:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{40,100}={0,2})'''
validator = "token"
tp = ["DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=«{b64:86}==»;EndpointSuffix=core.windows.net"]
fp = ["AccountKey=<storage-account-key>"]

[[rule]]
id = "azure-identifiable-keys"
kind = "azure"
category = "cloud"
description = "Azure keys that carry their service's signature at a fixed place (Container Registry +ACR, Storage +ASt, Cosmos DB ACDb, Service Bus +ASb, Event Hubs +AEh, Relay +ARm, IoT Hub AIoT, Functions AzFu, Search AzSe, API Management APIM; the 84-character keys with JQQJ9 at 52: AI services ACOG, Container Registry AZCR): found by the signature and the length alone, in any context"
source = "Microsoft security-utilities (MIT): identifiable key formats"
prefixes = ["+ACR", "+ASt", "+ASb", "+AEh", "+ARm", "ACDb", "AIoT", "AzFu", "AzSe", "APIM", "ACOG", "AZCR"]
lead = "A-Za-z0-9+/_-"
lead_max = 76
regex = '''(?:(?<![A-Za-z0-9+/=_-])|<<AFTER_ESCAPE>>)(?:[A-Za-z0-9+/]{42}\+ACR[A-D][A-Za-z0-9+/]{5}|[A-Za-z0-9+/]{76}(?:\+ASt|ACDb)[A-D][A-Za-z0-9+/]{5}==|[A-Za-z0-9+/]{33}(?:\+A(?:Sb|Eh|Rm)|AIoT)[A-D][A-Za-z0-9+/]{5}=|[A-Za-z0-9_-]{44}AzFu[A-Za-z0-9_-]{5}[AQgw]==|[A-Za-z0-9]{42}AzSe[A-D][A-Za-z0-9]{5}|[A-Za-z0-9]{76}APIM[A-D][A-Za-z0-9]{5}==|[A-Za-z0-9]{52}JQQJ9[9DH][A-Za-z0-9]{18}A(?:COG|ZCR)[A-Za-z0-9]{4})(?![A-Za-z0-9+/=_-])'''
validator = "token"
tp = ["password: «{b64:42}+ACRB{alnum:5}»", "## Save pass:\n\n«{alnum:42}+ACRC{alnum:5}»\n", "az storage: «{b64:76}+AStA{b64:5}==» (primary)", "the cosmos key is «{b64:76}ACDbD{b64:5}==», rotate it", "«{b64:33}+ASbB{b64:5}=»", "x-functions-key: «{token:44}AzFu{token:5}Q==»", "api-key: «{alnum:42}AzSeC{alnum:5}»", "speech: «{alnum:52}JQQJ99BBAC{alnum:5}XJ3w3AAAYACOG{alnum:4}» (eastus)", "«{alnum:52}JQQJ99CEACYeBjFEqg7NAAACAZCR{alnum:4}»"]
fp = ["AzureSearchAzSe is the service", "+ACR prefix of a registry key", "a base64 blob {b64:60}+ACRB{b64:60}", "ACOG is the signature of an AI services key"]

[[rule]]
id = "azure-ad-client-secret"
kind = "azure"
category = "cloud"
description = "A Microsoft Entra ID (Azure AD) app's client secret: three characters, a digit and `Q~`, then 31 to 34 more, in any context (the catalogue's rule has no literal any scan passes over)"
source = "Microsoft Entra docs: app client secrets; gitleaks azure-ad-client-secret (MIT)"
# a scan of its own on `~` with `Q` as its head (about 6 ms per 20 MB of transcripts, under 2 %)
prefixes = ["Q~"]
follow = '''[A-Za-z0-9_~.-]{31}'''
lead = "A-Za-z0-9_~."
lead_max = 4
regex = '''(?:(?<![A-Za-z0-9_~.-])|<<AFTER_ESCAPE>>)[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])'''
validator = "unrepeated_token"  # a body filled in by hand (`…8Q~xxxx…`) stays, as gitleaks' own negative
tp = ["AZURE_CLIENT_SECRET=«{alnum:3}8Q~{token:34}»", "the app's secret is «{alnum:3}7Q~{alnum:31}», it expires in June", '"ClientSecret": "«{alnum:3}1Q~{token:32}»"']
fp = ["client_secret=bP88Q~xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "see section 8Q~ of the manual", "abc8Q~short", "a{alnum:3}8Q~{alnum:40}"]

[[rule]]
id = "artifactory-reference-token"
kind = "registry"
category = "registry"
description = "A JFrog Artifactory reference token: `cmVmdGtu` (base64 of `reftkn`) and 56 letters and digits, in any context"
source = "JFrog docs: access tokens and reference tokens; gitleaks artifactory-reference-token (MIT)"
# a literal of the `c` scan (a prefix's boundary check there would run at every `c`)
lower_anchors = ['''cmvmdgtu[a-z0-9]{56}''']
regex = '''<<START>>cmVmdGtu[A-Za-z0-9]{56}(?![A-Za-z0-9+/=_-])'''
validator = "unrepeated_token"
tp = ["JFROG_TOKEN=«cmVmdGtu{alnum:56}»", "curl -H 'Authorization: Bearer «cmVmdGtu{alnum:56}»' https://acme.jfrog.io/artifactory/api/repositories", "the reference token is «cmVmdGtu{alnum:56}»"]
fp = ["cmVmdGtu prefix", "cmVmdGtu{alnum:40}", "a{alnum:10}cmVmdGtu{alnum:56}"]

[[rule]]
id = "openshift-user-token"
kind = "saas_token"
category = "saas"
description = "An OpenShift user's OAuth access token: `sha256~` and 43 base64url characters, in any context (`oc whoami -t`)"
source = "OpenShift docs: oc login --token, oc whoami -t; gitleaks openshift-user-token (MIT)"
prefixes = ["sha256~"]
follow = '''[A-Za-z0-9_-]{43}'''
regex = '''<<START>>sha256~[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])'''
validator = "unrepeated_token"
tp = ["oc login --token=«sha256~{token:43}» --server=https://api.crc.testing:6443", "$ oc whoami -t\n«sha256~{token:43}»"]
fp = ["sha256~ prefix", "sha256~{token:20}", "sha256:{hex:64}", '--set kube.token="sha256~XXXXXXXXXX_PUT_YOUR_TOKEN_HERE_XXXXXXXXXXXXXXXX"']

[[rule]]
id = "wallet-mnemonic"
kind = "private_key"
category = "private_key"
description = "A wallet's BIP-39 recovery phrase, 12 to 24 lowercase words after its name: `MNEMONIC=\"…\"`, `seed phrase: …`, 'my recovery phrase is …' (it derives every key of the wallet)"
source = "BIP-39; Hardhat and Foundry configs (MNEMONIC), MetaMask's Secret Recovery Phrase"
# `mnemonic` and `recovery phrase` pivot on the `c` scan, `seed phrase` on `p` (each spelling a
# literal of its own: a literal holding neither, `seed`, would keep a scan at every `s`)
lower_anchors = ['''mnemonic''', '''recovery[ _-]?phrase''', '''seed phrase''', '''seed_phrase''', '''seed-phrase''', '''seedphrase''']
lead = "A-Za-z_ -"
lead_max = 16
regex = '''(?:(?<![A-Za-z])|<<AFTER_ESCAPE>>)(?i:mnemonic|(?:secret[ _-])?recovery[ _-]?phrase|seed[ _-]?phrase)(?:[A-Za-z0-9_]{0,16}+(?:\\{0,8}["'`])?[ \t]{0,4}(?:[:=]{1,2}|=>)|(?:[ \t][A-Za-z]{1,16}){0,3}[ \t](?:is|was)(?:[ \t]{0,4}:)?)[ \t]{0,4}(?:\\{0,8}["'`])?(?P<secret>[a-z]{3,8}(?: [a-z]{3,8}){11,23})(?![a-z])'''
validator = "mnemonic"
tp = [
  'MNEMONIC="«ocean brisk cradle vivid lumber orbit famous twelve glide mercy bacon velvet»"',
  "my seed phrase is «ocean brisk cradle vivid lumber orbit famous twelve glide mercy bacon velvet», keep it safe",
  "Secret Recovery Phrase: «ocean brisk cradle vivid lumber orbit famous twelve glide mercy bacon velvet tiger exact garden focus river pulse mango cliff hazard siren dove wheat»",
  "  mnemonic: «ocean brisk cradle vivid lumber orbit famous twelve glide mercy bacon velvet»",
]
fp = [
  'MNEMONIC="test test test test test test test test test test test junk"',
  "mnemonic: candy maple cake sugar pudding cream honey rich smooth crumble sweet treat",
  "the seed phrase is the list of words you wrote down when you made the wallet",
  "mnemonic = process.env.MNEMONIC",
  "seed phrase: abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about",
]

[[rule]]
id = "azure-sas-signature"
kind = "azure"
category = "cloud"
description = "Azure shared access signature (sig=) in a URL, or in a SAS token's query string alone (`sv=<date>&…&sig=`)"
source = "Azure docs: create SAS tokens"
anchors = ['''://[^\s"'\\<>]{0,2048}?[?&]sig=''', '''=20[0-9]{2}-[0-9]{2}-[0-9]{2}[&;]''']
lead = "A-Za-z0-9+.-"
lead_max = 20
regex = '''(?:://[^\s"'\\<>]{0,2048}?[?&]|<<NAME_START>>sv=20[0-9]{2}-[0-9]{2}-[0-9]{2}(?:[&;][a-z]{1,8}=[^&;\s"'\\<>]{0,128}+){0,12}?[&;])sig=(?P<secret>[A-Za-z0-9%+/]{30,256}(?:=|%3[Dd]){0,2})'''
validator = "token"
tp = [
  "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=«{alnum:43}%3D»",
  "container SAS: sp=racwdli&st=2025-01-30T23:04:30Z&se=2025-02-28T07:04:30Z&sv=2022-11-02&sr=c&sig=«{alnum:40}%2B{alnum:3}%3D»",
  "sv=2023-11-03&sr=b&sp=r&se=2024-01-01T00%3A00%3A00Z&spr=https&sig=«{alnum:43}=»",
]
fp = ["https://example.com/search?sig=short", "released=2024-01-02&notes=see sig=abc"]

[[rule]]
id = "alibaba-access-key-id"
kind = "alibaba"
category = "cloud"
description = "Alibaba Cloud AccessKey ID"
source = "Alibaba Cloud docs: AccessKey pair; gitleaks alibaba-access-key-id (MIT)"
prefixes = ["LTAI"]
follow = '''[A-Za-z0-9]{12}'''
regex = '''<<START>>LTAI[A-Za-z0-9]{12,20}<<END>>'''
validator = "token"
tp = ['''alibabaKey := "«LTAI{alnum:20}»"''', "ALIBABA_CLOUD_ACCESS_KEY_ID=«LTAI{alnum:16}»"]
fp = ["LTAI is the AccessKey ID prefix"]

[[rule]]
id = "tencent-secret-id"
kind = "tencent"
category = "cloud"
description = "Tencent Cloud SecretId"
source = "Tencent Cloud docs: API keys (AKID)"
prefixes = ["AKID"]
follow = '''[A-Za-z0-9]{20}'''
regex = '''<<START>>AKID[A-Za-z0-9]{32}<<END>>'''
validator = "token"
tp = ["TENCENTCLOUD_SECRET_ID=«AKID{alnum:32}»"]
fp = ["AKIDs are Tencent key ids"]

[[rule]]
id = "digitalocean-token"
kind = "digitalocean"
category = "cloud"
description = "DigitalOcean personal access, OAuth and refresh tokens"
source = "DigitalOcean docs: token prefixes; gitleaks digitalocean-* (MIT)"
prefixes = ["dop_v1_", "doo_v1_", "dor_v1_"]
follow = '''[a-f0-9]{16}'''
regex = '''<<START>>do[por]_v1_[a-f0-9]{64}<<END>>'''
validator = "token"
tp = ["DIGITALOCEAN_TOKEN=«dop_v1_{hex:64}»"]
fp = ["dop_v1_ tokens are 64 hex"]

[[rule]]
id = "heroku-api-key-v2"
kind = "heroku"
category = "cloud"
description = "Heroku platform API key (HRKU-)"
source = "Heroku Dev Center: API tokens; gitleaks heroku-api-key-v2 (MIT)"
prefixes = ["HRKU-"]
follow = '''<<B62>>'''
regex = '''<<START>>HRKU-[A-Za-z0-9_-]{58,60}<<END>>'''
validator = "token"
tp = ["heroku authorizations:create → «HRKU-AA{token:58}»"]
fp = ["HRKU- tokens"]

[[rule]]
id = "vault-token"
kind = "vault"
category = "cloud"
description = "HashiCorp Vault service, batch and recovery tokens"
source = "Vault docs: token prefixes; gitleaks vault-service-token/vault-batch-token (MIT)"
prefixes = ["hvs.", "hvb.", "hvr."]
follow = '''<<B62>>'''
regex = '''<<START>>hv[sbr]\.[A-Za-z0-9_-]{24,300}<<END>>'''
validator = "token"
tp = ["export VAULT_TOKEN=«hvs.{token:90}»"]
fp = ["hvs. is a Vault service token prefix"]

[[rule]]
id = "terraform-cloud-token"
kind = "hashicorp"
category = "cloud"
description = "Terraform Cloud / Enterprise API token"
source = "Terraform docs: API tokens; gitleaks hashicorp-tf-api-token (MIT)"
anchors = ['''\.atlasv1\.''']
lead = "A-Za-z0-9"
lead_max = 14
regex = '''<<START>>[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}<<END>>'''
validator = "token"
tp = ['''credentials "app.terraform.io" {{ token = "«{alnum:14}.atlasv1.{token:67}»" }}''']
fp = ["token.atlasv1.short"]

[[rule]]
id = "doppler-token"
kind = "doppler"
category = "cloud"
description = "Doppler personal, service, service-account, CLI, SCIM and audit tokens"
source = "Doppler docs: token formats; gitleaks doppler-api-token (MIT)"
prefixes = ["dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."]
follow = '''[A-Za-z0-9]{20}'''
regex = '''<<START>>dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,44}<<END>>'''
validator = "token"
tp = ["DOPPLER_TOKEN=«dp.pt.{alnum:43}»"]
fp = ["dp.pt. prefix"]

[[rule]]
id = "databricks-token"
kind = "databricks"
category = "cloud"
description = "Databricks personal access token"
source = "Databricks docs: personal access tokens; gitleaks databricks-api-token (MIT)"
prefixes = ["dapi"]
follow = '''[a-f0-9]{32}'''
regex = '''<<START>>dapi[a-f0-9]{32}(?:-[0-9])?<<END>>'''
validator = "token"
tp = ["DATABRICKS_TOKEN=«dapi{hex:32}»"]
fp = ["from the dapi module import x", "dapideadbeef"]

[[rule]]
id = "cloudflare-origin-ca-key"
kind = "cloudflare"
category = "cloud"
description = "Cloudflare Origin CA key"
source = "Cloudflare docs: Origin CA keys; gitleaks cloudflare-origin-ca-key (MIT)"
prefixes = ["v1.0-"]
follow = '''[a-f0-9]{24}-'''
regex = '''<<START>>v1\.0-[a-f0-9]{24}-[a-f0-9]{146}<<END>>'''
validator = "token"
tp = ["CF_ORIGIN_CA_KEY=«v1.0-{hex:24}-{hex:146}»"]
fp = ["version v1.0-beta"]

[[rule]]
id = "flyio-token"
kind = "flyio"
category = "cloud"
description = "Fly.io access and macaroon tokens, with the `FlyV1 ` scheme `fly tokens create` prints before them"
source = "Fly.io docs: access tokens; gitleaks flyio-access-token (MIT)"
prefixes = ["fo1_", "fm1a_", "fm1r_", "fm2_"]
follow = '''<<B64M>>'''
lead = "FlyV1 "
lead_max = 6
regex = '''<<START>>(?:FlyV1 )?(?:fo1_[A-Za-z0-9_-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,4096}={0,3}|fm2_[A-Za-z0-9+/]{100,4096}={0,3})<<END>>'''
validator = "token"
tp = ["FLY_API_TOKEN=«fo1_{token:43}»", "FLY_API_TOKEN=«fm2_{b64:150}»", "FLY_API_TOKEN='«FlyV1 fm2_{b64:150}»'"]
fp = ["fo1_ prefix"]

[[rule]]
id = "supabase-token"
kind = "supabase"
category = "cloud"
description = "Supabase personal access token and secret API key"
source = "Supabase docs: access tokens (sbp_) and API keys (sb_secret_)"
prefixes = ["sbp_", "sb_secret_"]
follow = '''(?:[a-f0-9]{40}|<<B62>>)'''
regex = '''<<START>>(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,64})<<END>>'''
validator = "token"
tp = ["SUPABASE_ACCESS_TOKEN=«sbp_{hex:40}»"]
fp = ["sbp_ prefix"]

[[rule]]
id = "netlify-render-tokens"
kind = "hosting"
category = "cloud"
description = "Netlify personal access and Render API tokens"
source = "Netlify docs (nfp_), Render docs (rnd_)"
prefixes = ["nfp_", "rnd_"]
follow = '''<<B62>>'''
regex = '''<<START>>(?:nfp_[A-Za-z0-9]{36,40}|rnd_[A-Za-z0-9]{28,40})<<END>>'''
validator = "random_token"
tp = ["NETLIFY_AUTH_TOKEN=«nfp_{alnum:36}»", "RENDER_API_KEY=«rnd_{alnum:32}»"]
fp = ["rnd_abcdefghijklmnopqrstuvwxyz1234"]

[[rule]]
id = "pulumi-token"
kind = "pulumi"
category = "cloud"
description = "Pulumi access token"
source = "Pulumi docs: access tokens; gitleaks pulumi-api-token (MIT)"
prefixes = ["pul-"]
follow = '''[a-f0-9]{40}'''
regex = '''<<START>>pul-[a-f0-9]{40}<<END>>'''
validator = "token"
tp = ["PULUMI_ACCESS_TOKEN=«pul-{hex:40}»"]
fp = ["pul-request"]

[[rule]]
id = "yandex-cloud"
kind = "yandex"
category = "cloud"
description = "Yandex Cloud API key and IAM token, Yandex ID (Passport) OAuth token"
source = "Yandex Cloud docs; Yandex ID docs: OAuth tokens (y0_ to y3_); gitleaks yandex-api-key/yandex-access-token (MIT)"
prefixes = ["AQVN", "t1.", "y0_", "y1_", "y2_", "y3_"]
follow = '''<<B62>>'''
regex = '''<<START>>(?:AQVN[A-Za-z0-9_-]{35,38}|t1\.[A-Za-z0-9_-]{8,64}={0,2}\.[A-Za-z0-9_-]{86}={0,2}|y[0-3]_[A-Za-z0-9_-]{55,199})<<END>>'''
validator = "token"
tp = ["YC_API_KEY=«AQVN{token:36}»", "I pasted «y0_{token:55}» into the dashboard", "«y3_{alnum:58}»"]
fp = ["AQVN prefix", "y0_offset_of_the_first_row_in_the_grid_for_the_second_pass_of_the_solver"]

# ============================================================================ version control

[[rule]]
id = "github-token"
kind = "github"
category = "vcs"
description = "GitHub personal access (classic and fine-grained), OAuth, user-to-server, server-to-server and refresh tokens"
source = "GitHub docs: token formats; gitleaks github-* (MIT)"
prefixes = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]
follow = '''<<B62>>'''
# (since 2026 an app's installation token may be `ghs_<app id>_<JWT>`: a JWT's three dotted parts)
regex = '''<<START>>(?:gh[pousr]_[A-Za-z0-9]{36,251}|ghs_[0-9]{1,20}_(?=[A-Za-z0-9._-]{30})[A-Za-z0-9_-]{1,1024}+(?:\.[A-Za-z0-9_-]{1,1024}+){2}|github_pat_[A-Za-z0-9_]{22,251})<<END>>'''
validator = "token"
tp = [
  "the app's installation token is «ghs_{lowalnum:36}»",
  "export GITHUB_TOKEN=«ghp_{alnum:36}»",
  "origin\thttps://x-access-token:«ghs_{alnum:36}»@github.com/acme/app.git (fetch)",
  "gh auth token\n«github_pat_{alnum:22}_{alnum:59}»\n",
  "machine github.com login octocat password «gho_{alnum:36}»",
  "GITHUB_TOKEN=«ghp_exampleexampleexamplexampleexampleex»",
  "«ghs_{digits:6}_eyJ{token:40}.eyJ{token:120}.{token:43}»",
]
fp = ["ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "- (id)ghs_requiredCharacteristicTypes;"]

[[rule]]
id = "gitlab-token"
kind = "gitlab"
category = "vcs"
description = "GitLab personal, deploy, runner, pipeline trigger, feed, SCIM, CI job, incoming mail, agent, OAuth and feature-flag tokens"
source = "GitLab docs: token prefixes; gitleaks gitlab-* (MIT)"
prefixes = ["glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-", "glimt-", "glagent-", "gloas-", "glffct-"]
follow = '''(?:<<B62>>|[a-f0-9]{40})'''
regex = '''<<START>>gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas|ffct)-[A-Za-z0-9_-]{20,300}(?:\.[A-Za-z0-9_-]{1,64}){0,3}<<END>>'''
validator = "token"
tp = ["git push https://oauth2:«glpat-{token:20}»@gitlab.com/acme/app.git", "CI_DEPLOY=«gldt-{token:20}»"]
fp = ["glpat-xxxxxxxxxxxxxxxxxxxx"]

[[rule]]
id = "atlassian-token"
kind = "atlassian"
category = "vcs"
description = "Atlassian API token (Jira, Confluence) and Bitbucket app password"
source = "Atlassian docs: API tokens (ATATT3), Bitbucket app passwords (ATBB); gitleaks atlassian-api-token (MIT)"
prefixes = ["ATATT3", "ATCTT3", "ATBB"]
follow = '''[A-Za-z0-9_=-]{20}'''
regex = '''<<START>>(?:AT[AC]TT3[A-Za-z0-9_=-]{180,200}|ATBB[A-Za-z0-9_=.-]{28,40})<<END>>'''
validator = "token"
tp = ["JIRA_API_TOKEN=«ATATT3{token:186}»", "BITBUCKET_APP_PASSWORD=«ATBB{alnum:32}»"]
fp = ["ATBB prefix"]

[[rule]]
id = "sourcegraph-token"
kind = "sourcegraph"
category = "vcs"
description = "Sourcegraph access token"
source = "Sourcegraph docs: access tokens; gitleaks sourcegraph-access-token (MIT)"
prefixes = ["sgp_"]
# an instance's 16 hex or `local_` first (lower-case hex as issued; gitleaks' rule in the catalogue
# takes any case above its entropy floor, so its hand-made negative `sgp_5555555dAAAAA…` stays)
follow = '''(?:[a-f0-9]{16}|local_)'''
regex = '''<<START>>sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}<<END>>'''
validator = "token"
tp = ["SRC_ACCESS_TOKEN=«sgp_{hex:16}_{hex:40}»", "the token is «sgp_local_{hex:40}»"]
fp = ["sgp_ prefix"]

# ============================================================================ payment

[[rule]]
id = "stripe-key"
kind = "stripe"
category = "payment"
description = "Stripe secret and restricted keys (also Paystack's sk_live_), webhook signing secrets"
source = "Stripe docs: API keys, webhook signatures; gitleaks stripe-access-token (MIT)"
prefixes = ["sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_", "whsec_"]
follow = '''<<B64M>>'''
regex = '''<<START>>(?:[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,247}|whsec_[A-Za-z0-9+/=]{24,100})<<END>>'''
validator = "token"
tp = [
  "stripe.api_key = '«sk_live_{alnum:24}»'",
  '''const stripe = Stripe("«rk_live_{alnum:24}»");''',
  "STRIPE_WEBHOOK_SECRET=«whsec_{alnum:32}»",
]
fp = ['''"task_test_abcdefghijklmnopqrstuvwxyz1234"''']  # `sk_test_` inside a longer word

[[rule]]
id = "square-token"
kind = "square"
category = "payment"
description = "Square access token and OAuth secret"
source = "Square docs: access tokens; gitleaks square-access-token (MIT)"
prefixes = ["EAAA", "sq0atp-", "sq0csp-"]
follow = '''<<B62>>'''
regex = '''<<START>>(?:EAAA[A-Za-z0-9_-]{22,80}|sq0atp-[A-Za-z0-9_-]{22}|sq0csp-[A-Za-z0-9_-]{43})<<END>>'''
validator = "random_token"
tp = ["SQUARE_ACCESS_TOKEN=«EAAA{token:60}»", "«sq0csp-{token:43}»"]
fp = ["EAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]

[[rule]]
id = "braintree-access-token"
kind = "paypal"
category = "payment"
description = "PayPal Braintree access token"
source = "Braintree docs: access tokens"
prefixes = ["access_token$production$", "access_token$sandbox$"]
follow = '''[a-z0-9]{16}'''
regex = '''access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-z0-9]{32}'''
validator = "token"
tp = ["BRAINTREE_TOKEN=«access_token$production${lowalnum:16}${hex:32}»"]
fp = ["access_token$production$"]

[[rule]]
id = "razorpay-key"
kind = "razorpay"
category = "payment"
description = "Razorpay key id"
source = "Razorpay docs: API keys"
prefixes = ["rzp_live_", "rzp_test_"]
follow = '''[A-Za-z0-9]{14}'''
regex = '''<<START>>rzp_(?:live|test)_[A-Za-z0-9]{14,32}<<END>>'''
validator = "token"
tp = ["RAZORPAY_KEY_ID=«rzp_live_{alnum:14}»"]
fp = ["rzp_live_"]

[[rule]]
id = "flutterwave-secret-key"
kind = "flutterwave"
category = "payment"
description = "Flutterwave secret and encryption keys"
source = "Flutterwave docs: API keys; gitleaks flutterwave-* (MIT)"
prefixes = ["FLWSECK-", "FLWSECK_TEST-"]
follow = '''[a-hA-H0-9]{12}'''
regex = '''<<START>>FLWSECK(?:_TEST)?-[a-hA-H0-9]{12,32}(?:-X)?<<END>>'''
validator = "token"
tp = ["FLW_SECRET_KEY=«FLWSECK_TEST-{hex:32}-X»"]
fp = ["FLWSECK- prefix"]

[[rule]]
id = "plaid-access-token"
kind = "plaid"
category = "payment"
description = "Plaid access token"
source = "Plaid docs: access tokens; gitleaks plaid-api-token (MIT)"
prefixes = ["access-production-", "access-development-", "access-sandbox-"]
follow = '''[0-9a-f]{8}-'''
regex = '''<<START>>access-(?:production|development|sandbox)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}<<END>>'''
validator = "token"
tp = ["plaid access token: «access-production-{uuid}»"]
fp = ["access-production-ready"]

[[rule]]
id = "gocardless-mollie-live-key"
kind = "payment"
category = "payment"
description = "GoCardless and Mollie live API keys"
source = "GoCardless docs (live_), Mollie docs (live_); gitleaks gocardless-api-token (MIT)"
prefixes = ["live_"]
follow = '''<<B62>>'''
regex = '''<<START>>live_[A-Za-z0-9_=-]{30,40}<<END>>'''
validator = "random_token"
tp = ["GOCARDLESS_ACCESS_TOKEN=«live_{alnum:40}»", "MOLLIE_API_KEY=«live_{alnum:30}»"]
fp = ["live_reload_configuration_for_services_x"]

[[rule]]
id = "shopify-token"
kind = "shopify"
category = "payment"
description = "Shopify access tokens and shared secrets"
source = "Shopify docs: access tokens; gitleaks shopify-* (MIT)"
prefixes = ["shpat_", "shpca_", "shppa_", "shpss_"]
follow = '''[A-Za-z0-9]{32}'''
# (32 hex characters until 2024; since then letters and digits, 32 to 40 of them)
regex = '''<<START>>shp(?:at|ca|pa|ss)_(?:[a-fA-F0-9]{32}|[A-Za-z0-9]{32,40})<<END>>'''
validator = "token"
tp = ["SHOPIFY_ACCESS_TOKEN=«shpat_{hex:32}»", "app secret: «shpss_{alnum:32}»", "«shpca_{alnum:38}»"]
fp = ["shpat_ prefix"]

[[rule]]
id = "shippo-duffel-easypost"
kind = "shipping"
category = "payment"
description = "Shippo, Duffel and EasyPost API keys"
source = "provider docs; gitleaks shippo-api-token, duffel-api-token, easypost-api-token (MIT)"
prefixes = ["shippo_live_", "shippo_test_", "duffel_live_", "duffel_test_", "EZAK"]
follow = '''[A-Za-z0-9_=-]{30}'''
regex = '''<<START>>(?:shippo_(?:live|test)_[a-fA-F0-9]{40}|duffel_(?:live|test)_[A-Za-z0-9_=-]{43}|EZAK[A-Za-z0-9]{54})<<END>>'''
validator = "token"
tp = ["EASYPOST_API_KEY=«EZAK{alnum:54}»", "SHIPPO_API_TOKEN=«shippo_live_{hex:40}»"]
fp = ["...6wqX6fNUXA/rYqRvfQ+EZAKGqQRiRyqAFRQshGPWOIAwNWGORfKHSBnVNFtVmWYoW6PH23lkqbbDWep95C/3VmWq/edti6..."]

# ============================================================================ AI providers

[[rule]]
id = "anthropic-key"
kind = "anthropic"
category = "ai"
description = "Anthropic API, admin and OAuth keys"
source = "Anthropic docs; gitleaks anthropic-api-key/anthropic-admin-api-key (MIT)"
prefixes = ["sk-ant-"]
follow = '''[A-Za-z0-9_-]{20}'''
regex = '''<<START>>sk-ant-[A-Za-z0-9_-]{32,300}<<END>>'''
validator = "token"
tp = ["ANTHROPIC_API_KEY=«sk-ant-api03-{token:93}AA»", "«sk-ant-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx»"]
fp = ["sk-ant-****************************************", "the key starts with sk-ant-api03-"]

[[rule]]
id = "openrouter-key"
kind = "openai"
category = "ai"
description = "OpenRouter API key"
source = "OpenRouter docs: API keys (sk-or-v1-)"
prefixes = ["sk-or-v1-"]
follow = '''[a-f0-9]{32}'''
regex = '''<<START>>sk-or-v1-[a-f0-9]{64}<<END>>'''
validator = "token"
tp = ["OPENROUTER_API_KEY=«sk-or-v1-{hex:64}»"]
fp = ["sk-or-v1- prefix"]

[[rule]]
id = "openai-key"
kind = "openai"
category = "ai"
description = "OpenAI project, service-account, admin and legacy keys (and sk- keys of DeepSeek and others)"
source = "OpenAI docs: API keys; gitleaks openai-api-key (MIT)"
prefixes = ["sk-"]
follow = '''(?:<<B62>>|[a-f0-9]{32}|[A-Za-z0-9_-]{20,100}T3BlbkFJ)'''
regex = '''<<START>>sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,300}<<END>>'''
validator = "openai_key"
tp = [
  '''client = OpenAI(api_key="«sk-proj-{token:120}»")''',
  "openai.api_key = '«sk-{alnum:48}»'",
  "DEEPSEEK_API_KEY=«sk-{hex:32}»",
]
fp = ["cd task-sk-abcdefghijABCDEFGHIJ0123456789 && pip install sk-learn-compatible-estimator-api-v2"]

[[rule]]
id = "ai-provider-keys"
kind = "ai_api_key"
category = "ai"
description = "Groq, xAI, Perplexity, Replicate, NVIDIA, LangSmith and Pinecone API keys"
source = "provider docs; gitleaks perplexity-api-key (MIT)"
prefixes = ["gsk_", "xai-", "pplx-", "r8_", "nvapi-", "lsv2_pt_", "lsv2_sk_", "pcsk_"]
follow = '''<<B62>>'''
regex = '''<<START>>(?:gsk_[A-Za-z0-9]{52}|xai-[A-Za-z0-9]{70,90}|pplx-[A-Za-z0-9]{48}|r8_[A-Za-z0-9]{37}|nvapi-[A-Za-z0-9_-]{64}|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}|pcsk_[A-Za-z0-9_]{40,90})<<END>>'''
validator = "token"
tp = ["GROQ_API_KEY=«gsk_{alnum:52}»", "XAI_API_KEY=«xai-{alnum:80}»", "«pplx-{alnum:48}»", "REPLICATE_API_TOKEN=«r8_{alnum:37}»"]
fp = ["gsk_ prefix"]

[[rule]]
id = "huggingface-token"
kind = "huggingface"
category = "ai"
description = "Hugging Face user and organization access tokens"
source = "Hugging Face docs: user access tokens; gitleaks huggingface-* (MIT)"
prefixes = ["hf_", "api_org_"]
follow = '''(?=[a-z]{0,24}+[A-Z])(?=[A-Z]{0,24}+[a-z])[A-Za-z]{30}'''
regex = '''<<START>>(?:hf|api_org)_[A-Za-z]{34}<<END>>'''
validator = "token"
tp = [
  '''-H "Authorization: Bearer «hf_{alpha:34}»"''',
  "huggingface-cli login --token «hf_{alpha:34}»",
  '''use_auth_token='«hf_{alpha:34}»')''',
]
fp = ["- (id)hf_requiredCharacteristicTypesForDisplayMetadata;"]

# ============================================================================ messaging, mail, webhooks

[[rule]]
id = "slack-token"
kind = "slack"
category = "messaging"
description = "Slack bot, user, app, workspace, configuration and legacy tokens"
source = "Slack docs: token types; gitleaks slack-* (MIT)"
prefixes = ["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-", "xoxo-", "xapp-", "xoxe.xoxb-", "xoxe.xoxp-"]
follow = '''[0-9]{1,13}-'''
regex = '''<<START>>(?:xoxe\.)?(?:xox[abprseo]-|xapp-)[A-Za-z0-9-]{10,300}<<END>>'''
validator = "has_digit"
tp = [
  "SLACK_BOT_TOKEN=«xoxb-{digits:12}-{digits:13}-{alnum:24}»",
  "token: «xoxp-{digits:11}-{digits:12}-{alnum:32}»",
  "SLACK_APP_TOKEN=«xapp-1-A{upper:10}-{digits:13}-{hex:64}»",
]
fp = ["xoxb-your-token-here"]

[[rule]]
id = "slack-webhook"
kind = "slack_webhook"
category = "messaging"
description = "Slack incoming webhook / workflow URL"
source = "Slack docs: incoming webhooks; gitleaks slack-webhook-url (MIT)"
anchors = ['''://hooks\.slack\.com/''']
regex = '''://hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+-]{20,200})'''
validator = "token"
tp = ["curl -X POST https://hooks.slack.com/services/«T{upalnum:10}/B{alnum:10}/{alnum:24}» -d @msg.json"]
fp = ["see https://hooks.slack.com/services/ for the format"]

[[rule]]
id = "zapier-webhook"
kind = "zapier_webhook"
category = "saas"
description = "Zapier catch hook URL: whoever holds it can start the Zap"
source = "Zapier docs: Webhooks by Zapier (catch hook); trufflehog zapierwebhook detector read for the format"
anchors = ['''://hooks\.zapier\.com/hooks/catch/''']
regex = '''://hooks\.zapier\.com/hooks/catch/(?P<secret>[0-9]{3,12}/[A-Za-z0-9]{4,32})(?![A-Za-z0-9])'''
validator = "token"
tp = ["curl -X POST https://hooks.zapier.com/hooks/catch/«{digits:7}/{lower:6}»/ -d @lead.json", "ZAPIER_HOOK=https://hooks.zapier.com/hooks/catch/«{digits:8}/{alnum:7}»/silent/"]
fp = ["see https://hooks.zapier.com/hooks/catch/ for the format", "https://hooks.zapier.com/hooks/catch/{{ZAP_ACCOUNT}}/{{HOOK_ID}}/"]

[[rule]]
id = "discord-webhook"
kind = "discord_webhook"
category = "messaging"
description = "Discord webhook URL"
source = "Discord developer docs: webhooks"
anchors = ['''://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/''']
regex = '''://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/[0-9]{17,20}/(?P<secret>[A-Za-z0-9_-]{60,80})'''
validator = "token"
tp = ["DISCORD_WEBHOOK=https://discord.com/api/webhooks/{digits:18}/«{token:68}»"]
fp = ["https://discord.com/api/webhooks/123/abc"]

[[rule]]
id = "teams-webhook"
kind = "teams_webhook"
category = "messaging"
description = "Microsoft Teams incoming webhook URL"
source = "Microsoft docs: incoming webhooks; gitleaks microsoft-teams-webhook (MIT)"
anchors = ['''://[A-Za-z0-9-]{1,64}\.webhook\.office\.com/''', '''://outlook\.office(?:365)?\.com/webhook''']
lead = "A-Za-z0-9+.-"
lead_max = 0
regex = '''://(?:[A-Za-z0-9-]{1,64}\.webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)/(?P<secret>[A-Za-z0-9@/_-]{60,300})'''
validator = "token"
tp = ["https://acme.webhook.office.com/webhookb2/«{uuid}@{uuid}/IncomingWebhook/{hex:32}/{uuid}»"]
fp = ["https://acme.webhook.office.com/webhookb2/"]

[[rule]]
id = "url-path-token"
kind = "generic_secret"
category = "generic"
description = "A random token as the path segment right after `/webhook/`, `/webhooks/`, `/hooks/` or `/key/` in a URL: a webhook's secret path, IFTTT's `/with/key/<key>` (the URL is the credential; a UUID or a number there is a resource's id)"
source = "webhook URLs of CI and chat services (the secret is the path); IFTTT Maker webhooks docs"
anchors = ['''://[^\s"'\\<>/]{1,253}(?:/[^\s"'\\<>/?#]{1,64}){0,6}?/(?:[Ww]ebhooks?|[Hh]ooks?|key)/(?=[A-Za-z0-9_-]{20})''']
regex = '''://[^\s"'\\<>/]{1,253}(?:/[^\s"'\\<>/?#]{1,64}){0,6}?/(?:[Ww]ebhooks?|[Hh]ooks?|key)/(?P<secret>[A-Za-z0-9_-]{20,128}+)(?![A-Za-z0-9_.~%-])'''
validator = "random_body"
tp = ["post to https://ci.example.com/webhook/«{alnum:32}» when done", "WEBHOOK_URL=https://example.com/api/webhooks/«{alnum:40}»", "https://maker.ifttt.com/trigger/deploy/with/key/«{alnum:22}»"]
fp = ["https://api.github.com/repos/acme/app/hooks/123456789012345678901/deliveries", "https://api.example.com/v1/key/5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17", "https://docs.example.com/guides/webhooks/configuring-webhook-endpoints-for-production", "https://example.com/webhooks/abcdefghijklmnopqrstuvwxyz0123"]

[[rule]]
id = "telegram-bot-token"
kind = "telegram"
category = "messaging"
description = "Telegram bot token (the bot id, `:AA` and 33 characters; 32 in some shown)"
source = "Telegram Bot API docs; gitleaks telegram-bot-api-token (MIT)"
anchors = ['''A(?<=:A)A[A-Za-z0-9_-]{32}''']
lead = "0-9:"
lead_max = 12
regex = '''(?:(?<![0-9])|<<AFTER_ESCAPE>>)[0-9]{8,10}:AA[A-Za-z0-9_-]{32,33}(?![A-Za-z0-9_+-])'''
validator = "token"
tp = ["TELEGRAM_BOT_TOKEN=«{digits:10}:AA{token:33}»", "the bot is «{digits:10}:AA{token:32}»", "curl https://api.telegram.org/bot«{digits:10}:AA{token:33}»/getMe"]
fp = ["time 12345678:AA", "12345678:AA<your-bot-token>"]

[[rule]]
id = "sendgrid-key"
kind = "sendgrid"
category = "messaging"
description = "SendGrid API key"
source = "Twilio SendGrid docs: API keys; gitleaks sendgrid-api-token (MIT)"
prefixes = ["SG."]
follow = '''<<B62>>'''
regex = '''<<START>>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}<<END>>'''
validator = "token"
tp = ["SENDGRID_API_KEY=«SG.{token:22}.{token:43}»"]
fp = ["SG.xxxxxxxxxxxxxxxxxxxxxx.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]

[[rule]]
id = "mail-provider-keys"
kind = "mail"
category = "messaging"
description = "Mailgun private key, Brevo (Sendinblue) API and SMTP keys, Postmark-style prefixed keys"
source = "Mailgun docs (key-), Brevo docs (xkeysib-, xsmtpsib-); gitleaks mailgun-private-api-token, sendinblue-api-token (MIT)"
prefixes = ["key-", "xkeysib-", "xsmtpsib-"]
follow = '''[a-f0-9]{32}'''
regex = '''<<START>>(?:key-[a-f0-9]{32}|x(?:key|smtp)sib-[a-f0-9]{64}-[A-Za-z0-9]{16})<<END>>'''
validator = "token"
tp = ["MAILGUN_API_KEY=«key-{hex:32}»", "BREVO_API_KEY=«xkeysib-{hex:64}-{alnum:16}»"]
fp = ["primary-key-value"]

[[rule]]
id = "mailchimp-key"
kind = "mail"
category = "messaging"
description = "Mailchimp API key (hex and datacenter suffix)"
source = "Mailchimp docs: API keys; gitleaks mailchimp-api-key (MIT)"
anchors = ['''-us[0-9]{1,2}''']
lead = "a-f0-9"
lead_max = 32
regex = '''<<START>>[a-f0-9]{32}-us[0-9]{1,2}(?![A-Za-z0-9])'''
validator = "token"
tp = ["MAILCHIMP_KEY=«{hex:32}-us21»"]
fp = ["region eu-us1"]

# ============================================================================ registries and CI

[[rule]]
id = "npm-token"
kind = "npm"
category = "registry"
description = "npm access token"
source = "npm docs: access tokens; gitleaks npm-access-token (MIT)"
prefixes = ["npm_"]
follow = '''<<B62>>'''
regex = '''<<START>>npm_[A-Za-z0-9]{36}<<END>>'''
validator = "token"
tp = ["//registry.npmjs.org/:_authToken=«npm_{alnum:36}»"]
fp = ["npm_config_cache=/tmp/npm"]

[[rule]]
id = "npmrc-auth-token"
kind = "npm"
category = "registry"
description = "npm/yarn `_authToken` of any registry (UUID and legacy tokens included)"
source = "npm docs: .npmrc auth-related configuration"
lower_anchors = ['''authtoken''']
regex = '''(?<=[_m])(?:auth|Auth)Token<<SEP>>(?P<secret>[A-Za-z0-9+/=._-]{8,512})<<VEND>>'''
validator = "token"
tp = ["//npm.pkg.github.com/:_authToken=«{uuid}»", "npmAuthToken: «{alnum:40}»"]
fp = ["//registry.npmjs.org/:_authToken=${NPM_TOKEN}"]

[[rule]]
id = "pypi-token"
kind = "pypi"
category = "registry"
description = "PyPI / TestPyPI API token"
source = "PyPI docs: API tokens; gitleaks pypi-upload-token (MIT)"
prefixes = ["pypi-AgE"]
follow = '''[A-Za-z0-9_-]{30}'''
regex = '''<<START>>pypi-AgE[A-Za-z0-9_-]{50,1000}<<END>>'''
validator = "token"
tp = ["[pypi]\nusername = __token__\npassword = «pypi-AgEIcHlwaS5vcmc{token:70}»"]
fp = ["pypi-AgE"]

[[rule]]
id = "registry-tokens"
kind = "registry"
category = "registry"
description = "RubyGems, Clojars, JFrog Artifactory, Docker Hub, CircleCI and Buildkite tokens"
source = "provider docs; gitleaks rubygems-api-token, clojars-api-token, artifactory-api-key (MIT)"
prefixes = ["rubygems_", "CLOJARS_", "AKCp", "dckr_pat_", "dckr_oat_", "CCIPAT_", "bkua_"]
follow = '''(?:<<B62>>|[a-f0-9]{40}|[a-z0-9]{60})'''
regex = '''<<START>>(?:rubygems_[a-f0-9]{48}|CLOJARS_[a-z0-9]{60}|AKCp[A-Za-z0-9]{69}|dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,40}|CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}|bkua_[a-f0-9]{40})<<END>>'''
validator = "token"
tp = ["docker login -u acme --password-stdin <<< «dckr_pat_{token:27}»", "GEM_HOST_API_KEY=«rubygems_{hex:48}»"]
fp = ["dckr_pat_ prefix"]

# ============================================================================ other SaaS

[[rule]]
id = "twilio-account-sid"
kind = "saas_token"
category = "saas"
description = "Twilio account SIDs (AC + 32 hex or lower-case characters) standing alone"
source = "Twilio docs: account SID; detect-secrets TwilioKeyDetector (Apache-2.0)"
prefixes = ["AC"]
follow = '''[0-9a-zA-Z]{20}'''
regex = '''<<START>>AC(?:[0-9a-zA-F]{32}|[0-9a-z]{32})<<END>>'''
validator = "token"
tp = [
  "the twilio account is «AC{hex:32}»",
  "«ACxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx»",
]
fp = ["ACCOUNT_SETTINGS_{hex:32}", "ACCESSIBILITY"]

[[rule]]
id = "twilio-api-key-sid"
kind = "saas_token"
category = "saas"
description = "Twilio API key SIDs (SK + 32 hex) standing alone"
source = "Twilio docs: API keys; detect-secrets TwilioKeyDetector (Apache-2.0)"
prefixes = ["SK"]
follow = '''[0-9a-fA-F]{32}'''
regex = '''<<START>>SK[0-9a-fA-F]{32}<<END>>'''
validator = "unrepeated_token"
tp = ["«SK{hex:32}»", "the key sid «SK{hex:32}» is for the staging app"]
fp = ["SKxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "SK00000000000000000000000000000000", "SKIP_{hex:32}", "DESKTOP{hex:32}"]

[[rule]]
id = "gitlab-runner-registration-token"
kind = "gitlab"
category = "vcs"
description = "A GitLab runner registration token (GR1348941 + 20 or more characters) standing alone"
source = "GitLab docs: token prefixes; detect-secrets GitLabTokenDetector (Apache-2.0)"
prefixes = ["GR1348941"]
regex = '''<<START>>GR1348941[A-Za-z0-9_-]{20,50}<<END>>'''
validator = "unrepeated_token"
tp = ["«GR1348941{token:20}»", "gitlab-runner register --registration-token «GR1348941{token:20}»"]
fp = ["GR1348941XXXXXXXXXXXXXXXXXXXX", "GR134894112312312312312312312"]

[[rule]]
id = "artifactory-keys"
kind = "registry"
category = "registry"
description = "JFrog Artifactory API keys (AKC…) and encrypted passwords (AP + a hex digit …), standing alone: not a word-built name (`APDeveloperGuide`, `APDosLogConf`), nor a digest after its label (`SHA256:AP1…`)"
source = "provider docs: JFrog Artifactory API keys; detect-secrets ArtifactoryDetector (Apache-2.0)"
prefixes = ["AKC", "AP"]
follow = '''[0-9A-Za-z]{9}'''
regex = '''<<START>>(?:AKC[A-Za-z0-9]{10,128}|AP[0-9A-F](?![a-z]{2,16}(?:[A-Z][a-z]{2,16}){1,8}(?![A-Za-z0-9]))[A-Za-z0-9]{8,128})<<END>>'''
validator = "unworded_token"
tp = [
  "«AKCxxxxxxxxxx»",
  "artif-key:«AP6xxxxxxxxxx»",
  "X-JFrog-Art-Api: «AKC{alnum:69}»",
  "artifactoryx:_password=«APB{alnum:40}»",
]
fp = ["see APDeveloperGuide and APEXCharts", "AP1 and AKC", "APAC2024 results", "kind: APDosLogConf", 'ImageID: "SHA256:AP1AyUTbi2szylgr266fcae00707e67a2545ef34f9a29354585f93dac906749"']

[[rule]]
id = "provider-prefixed-tokens"
kind = "saas_token"
category = "saas"
description = "Tokens whose prefix names the provider, at the provider's length, whatever the body looks like: LaunchDarkly sdk-/api-/mob- + UUID, BestTime pri_, Square sandbox app ids and secrets, Cloudflare cfat_/cfut_/cfk_ (API tokens and the global API key), Vercel vcp_/vci_/vca_/vcr_/vck_, Entra ID refresh tokens (0.A…, 1.A…, dotted), Langfuse sk-lf- + UUID, pganalyze pgar_, Spectral spu-, Rootly rootly_, HubSpot private app tokens pat-na1- + UUID, Hugging Face hf_ + 34 letters or digits, Sentry organization tokens sntrys_eyJ…, Klaviyo private keys (pk_ + 34 hex, or pk_ + six characters + _ + 34 hex)"
source = "provider docs: LaunchDarkly SDK keys, BestTime API keys, Square sandbox credentials, Cloudflare account and user API tokens, Vercel access tokens, Microsoft identity platform refresh tokens, Langfuse, pganalyze, Spectral and Rootly API keys, HubSpot private apps, Hugging Face user access tokens, Sentry organization auth tokens, Klaviyo private API keys"
prefixes = ["sdk-", "api-", "mob-", "pri_", "sandbox-sq0idb-", "sandbox-sq0csb-", "cfat_", "cfut_", "cfk_", "vcp_", "vci_", "vca_", "vcr_", "vck_", "0.A", "1.A", "sk-lf-", "pgar_", "spu-", "rootly_", "pat-", "hf_", "sntrys_", "pk_"]
follow = '''(?:[0-9a-z]{8}-[0-9a-z]{4}-|[a-f0-9]{32}|sq0|<<B64M>>|[A-Za-z0-9]{27})'''
regex = '''<<START>>(?:pat-(?:na|eu|ap)[0-9]-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|hf_[A-Za-z0-9]{34}|sntrys_eyJ[A-Za-z0-9+/=_-]{40,1000}|(?:sdk|api|mob)-[0-9a-z]{8}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{12}|pri_[a-f0-9]{32}|sandbox-sq0(?:idb|csb)-[A-Za-z0-9_-]{22,43}|cf(?:[au]t|k)_[A-Za-z0-9_-]{32,64}|vc[pikar]_[A-Za-z0-9]{24,64}|[01]\.A[A-Za-z0-9_-]{100,4096}|[01]\.A[A-Za-z0-9_-]{40,2048}(?:\.[A-Za-z0-9_-]{1,4096}){1,8}|sk-lf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|pgar_[A-Za-z0-9]{27}|spu-[a-z0-9]{32}|rootly_[a-f0-9]{64}|pk_(?:[A-Za-z0-9]{6}_)?[a-f0-9]{34})<<END>>'''
validator = "token"
tp = [
  "the LaunchDarkly SDK key is «sdk-{uuid}»",
  "the hubspot one is «pat-na1-{uuid}»",
  "I used «hf_{alnum:34}» for the download",
  "SENTRY_AUTH_TOKEN=«sntrys_eyJ{token:80}_{alnum:43}»",
  "langfuse_secret_key = «sk-lf-00000000-0000-0000-0000-000000000000»",
  "[DEBUG] token=«pgar_abcdefghijklmnopqrstuvwxyz1»",
  "SPECTRAL_API_KEY=«spu-{lowalnum:32}»",
  "the rootly key is «rootly_{hex:64}» for now",
  "LD_SDK_KEY=«sdk-{lowalnum:8}-{lowalnum:4}-{lowalnum:4}-{lowalnum:4}-{lowalnum:12}»",
  "LD_API_KEY=«api-{uuid}»",
  "use «pri_{hex:32}» for the BestTime call",
  "export X=«pk_{hex:34}»",
  "I pasted «pk_{alnum:6}_{hex:34}» into the dashboard",
  'url := "https://besttime.app/api/v1/keys/«pri_{hex:32}»"',
  "SQUARE_APP_SECRET=«sandbox-sq0csb-{token:43}»",
  "here is the cloudflare token «cfat_{alnum:40}», scoped to DNS",
  "CLOUDFLARE_API_TOKEN=«cfut_{alnum:48}»",
  "CLOUDFLARE_API_KEY=«cfk_{alnum:40}{hex:8}»",
  "VERCEL_TOKEN=«vcp_{alnum:56}»",
  '''{{"refresh_token": "«0.A{token:300}»"}}''',
  "body: client_id=x&grant_type=refresh_token&refresh_token=«1.A{token:52}.1.AgAB{token:300}»",
]
fp = ["the api-gateway-service pod restarted", "see docs at api-reference/v2", "version 0.Alpha of the tool", "pri_key_id = 4", "pk_live_51H8x2kLmQ9vTz4wR8sT1yU6bN3cE5fG7hJ9kL1mN3p", "pk_{hex:32}", "see /srv/api-{uuid}.log", "pgar_ prefix, spu-test-runner, rootly_incident_id = 4"]

[[rule]]
id = "saas-prefixed-tokens"
kind = "saas_token"
category = "saas"
description = "Linear, Notion, Figma, Postman, Prefect, ReadMe, Typeform, Frame.io, Infracost, Scalingo, PlanetScale, Sentry, Grafana, Dynatrace, Contentful, 1Password, Octopus Deploy tokens"
source = "provider docs; gitleaks linear-api-key, notion-api-token, postman-api-token, prefect-api-token, readme-api-token, typeform-api-token, frameio-api-token, infracost-api-token, scalingo-api-token, planetscale-*, sentry-*, grafana-*, dynatrace-api-token, 1password-*, octopus-deploy-api-key (MIT)"
prefixes = ["lin_api_", "lin_oauth_", "ntn_", "figd_", "PMAK-", "pnu_", "rdme_", "tfp_", "fio-u-", "ico-", "tk-us-", "pscale_tkn_", "pscale_pw_", "pscale_oauth_", "sntrys_", "sntryu_", "glsa_", "glc_", "dt0c01.", "CFPAT-", "ops_eyJ", "A3-", "API-"]
follow = '''(?:<<B64M>>|[a-f0-9]{24}|[0-9]{11}|[a-z0-9]{40}|eyJ|[A-Z0-9]{24}|[A-Z0-9]{6}-)'''
regex = '''<<START>>(?:lin_(?:api|oauth)_[A-Za-z0-9]{40}|ntn_[0-9]{11}[A-Za-z0-9]{35}|figd_[A-Za-z0-9_-]{40}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|pnu_[A-Za-z0-9]{36}|rdme_[a-z0-9]{70}|tfp_[A-Za-z0-9_=.-]{59}|fio-u-[A-Za-z0-9_=-]{64}|(?<!\.)ico-[A-Za-z0-9]{32}|tk-us-[A-Za-z0-9_-]{48}|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}|sntrys_eyJ[A-Za-z0-9+/=_]{50,1000}|sntryu_[a-f0-9]{64}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,3}|dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}|CFPAT-[A-Za-z0-9_-]{43}|ops_eyJ[A-Za-z0-9+/]{250,4096}={0,3}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}|API-[A-Z0-9]{26,34})<<END>>'''
validator = "has_digit"
tp = [
  "LINEAR_API_KEY=«lin_api_{alnum:40}»",
  "POSTMAN_API_KEY=«PMAK-{hex:24}-{hex:34}»",
  "SENTRY_AUTH_TOKEN=«sntryu_{hex:64}»",
  "GRAFANA_TOKEN=«glsa_{alnum:32}_{hex:8}»",
  "NOTION_TOKEN=«ntn_{digits:11}{alnum:35}»",
  "INFRACOST_API_KEY=«ico-{alnum:32}»",
  "octopus: «API-{upalnum:30}»",
]
fp = ["API-VERSIONING-IS-HARD-TO-GET-RIGHT", "lin_api_ prefix", "http://assets.example.com/media/video_box.ico-7a388b69018576d24b59331fd60aab0c.png"]

[[rule]]
id = "developer-platform-tokens"
kind = "saas_token"
category = "saas"
description = "Prefixed tokens of developer platforms the catalogue does not list, at the provider's length: PostHog personal API keys (phx_), SonarQube user, project and global analysis tokens (squ_, sqp_, sqa_), Adafruit IO keys (aio_), dbt Cloud service tokens (dbtc_), Firecrawl keys (fc-), ElevenLabs keys (sk_ + 48 hex), Apify API tokens (apify_api_), Xendit secret keys (xnd_development_, xnd_production_), DataStax Astra application tokens (AstraCS:), crates.io API tokens (cio + 32 letters and digits), Segment public API tokens (sgp_ + 64), Dependency-Track API keys (odt_), AWS AppSync API keys (da2- + 26 lower-case letters and digits), Kolide API keys (k2sk_v1_), Amazon MWS auth tokens (amzn.mws. + UUID), Onfido API tokens (api_live., api_live_us., api_sandbox.)"
source = "provider docs: PostHog personal API keys, SonarQube token types, Adafruit IO keys, dbt Cloud service tokens, Firecrawl and ElevenLabs API keys, Apify API tokens, Xendit API keys, DataStax Astra application tokens, crates.io API tokens, Segment public API tokens, Dependency-Track API keys, AWS AppSync API keys, Kolide API keys, Amazon MWS auth tokens, Onfido API tokens; trufflehog posthog, adafruitio and apify detectors read for the formats"
prefixes = ["phx_", "squ_", "sqp_", "sqa_", "aio_", "dbtc_", "fc-", "sk_", "apify_api_", "xnd_development_", "xnd_production_", "AstraCS:", "cio", "sgp_", "odt_", "da2-", "k2sk_v1_", "amzn.mws.", "api_live", "api_sandbox"]
follow = '''(?:<<B64M>>|[a-f0-9]{32})'''
regex = '''<<START>>(?:phx_[A-Za-z0-9_]{43,48}|sq[upa]_[a-f0-9]{40}|aio_[A-Za-z0-9]{28}|dbtc_[A-Za-z0-9_-]{40,64}|fc-[a-f0-9]{32}|sk_[a-f0-9]{48}|apify_api_[A-Za-z0-9]{36}|xnd_(?:development|production)_[A-Za-z0-9+/=]{40,100}|AstraCS:[A-Za-z0-9]{24}:[a-f0-9]{64}|cio(?=[A-Za-z]{0,31}[0-9])(?=[a-z0-9]{0,31}[A-Z])(?=[A-Z0-9]{0,31}[a-z])[A-Za-z0-9]{32}|sgp_[A-Za-z0-9]{64}|odt_[A-Za-z0-9]{32,40}|da2-[a-z0-9]{26}|k2sk_v1_[A-Za-z0-9]{24,64}|amzn\.mws\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|api_(?:live(?:_[a-z]{2})?|sandbox)\.[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]{32})<<END>>'''
validator = "token"
tp = [
  "the posthog key is «phx_{alnum:43}»",
  "«squ_{hex:40}»",
  "SONAR_TOKEN=«sqp_{hex:40}» for the scanner",
  "I set it to «aio_{alnum:28}» in the dashboard",
  "DBT_CLOUD_TOKEN=«dbtc_{token:48}»",
  'app = FirecrawlApp(api_key="«fc-{hex:32}»")',
  "ELEVENLABS_API_KEY=«sk_{hex:48}»",
  "«apify_api_{alnum:36}»",
  "Xendit.init(«xnd_production_{alnum:58}==»)",
  "ASTRA_DB_APPLICATION_TOKEN=«AstraCS:{alpha:24}:{hex:64}»",
  "cargo login «cioAb3{alnum:29}»",
  "SEGMENT_TOKEN=«sgp_{alnum:64}»",
  "DTRACK_API_KEY=«odt_{alnum:32}»",
  "  aws_appsync_apiKey: '«da2-{lowalnum:26}»',",
  "KOLIDE_API_KEY=«k2sk_v1_{alnum:24}»",
  "MWS_AUTH_TOKEN=«amzn.mws.{uuid}»",
  "Onfido.token = '«api_live.{token:11}.{token:32}»'",
  "ONFIDO_API_TOKEN=«api_sandbox.{token:11}.{token:32}»",
]
fp = ["phx_ and squ_ prefixes", "sk_{hex:12}", "fc-{hex:8} is a short id", "aio_http_client_session_factory", "cioServiceAccountConfigurationBeanX", "ciomanagementconsole20240101abcdefg"]

[[rule]]
id = "ai-platform-keys"
kind = "saas_token"
category = "saas"
description = "Prefixed API keys of AI and developer platforms the catalogue does not list, at the provider's length: Tavily (tvly-, tvly-dev-, tvly-prod-), Neon (napi_), Fireworks AI (fw_), Cerebras (csk-), Voyage AI (pa-), Jina AI (jina_), Anyscale (esecret_), Resend (re_ id _ secret), Deno Deploy (ddp_, ddo_), Zuplo (zpka_ hex _ hex), Together AI (tgp_v1_)"
source = "provider docs: Tavily, Neon, Fireworks AI, Cerebras, Voyage AI, Jina AI, Anyscale, Resend, Deno Deploy, Zuplo and Together AI API keys"
prefixes = ["tvly-", "napi_", "fw_", "csk-", "pa-", "jina_", "esecret_", "re_", "ddp_", "ddo_", "zpka_", "tgp_v1_"]
# Resend's id and its `_`, or twenty characters of a key
follow = '''(?:[A-Za-z0-9]{8,10}_|[A-Za-z0-9_-]{20})'''
regex = '''<<START>>(?:tvly-(?:(?:dev|prod)-)?[A-Za-z0-9]{32}|napi_[a-z0-9]{64}|fw_[A-Za-z0-9]{24}|csk-[a-z0-9]{48}|pa-[A-Za-z0-9_-]{43}|jina_[A-Za-z0-9_-]{40,80}|esecret_[a-z0-9]{20,40}|re_[A-Za-z0-9]{8,10}_[A-Za-z0-9]{20,32}|dd[po]_[A-Za-z0-9]{36}|zpka_[a-f0-9]{32}_[a-f0-9]{8}|tgp_v1_[A-Za-z0-9_-]{40,64})<<END>>'''
validator = "token"
tp = [
  "TAVILY_API_KEY=«tvly-{alnum:32}»",
  "the search key is «tvly-dev-{alnum:32}»",
  "client = Together(api_key=\"«tgp_v1_{token:43}»\")",
  "I set it to «napi_{lowalnum:64}» in the console",
  "«fw_{alnum:24}»",
  "client = Cerebras(api_key=\"«csk-{lowalnum:48}»\")",
  "voyage: «pa-{token:43}»",
  "«jina_{token:60}»",
  "ANYSCALE_API_KEY=«esecret_{lowalnum:32}»",
  "resend.api_key = \"«re_{alnum:8}_{alnum:24}»\"",
  "DENO_DEPLOY_TOKEN=«ddp_{alnum:36}»",
  "curl -H 'x-key: «zpka_{hex:32}_{hex:8}»'",
]
fp = ["compare_results_and_store_them_in_a_table", "from re_parser import re_compile_all_of_the_patterns", "tvly-YOUR_API_KEY", "napi_env_setup_for_the_node_addon_guide", "pa-ge-break"]

[[rule]]
id = "sandbox-and-flag-platform-keys"
kind = "saas_token"
category = "saas"
description = "Prefixed keys of sandbox, GPU, payment and feature-flag platforms the catalogue does not list, at the provider's length: E2B (e2b_), RunPod API and S3 secret keys (rpa_, rps_), Browserbase (bb_live_), Daytona (dtn_), Modal token secrets (as-), Polar access tokens (polar_oat_, polar_pat_), Statsig server secrets (secret-), Flagsmith server keys (ser.), Mercado Pago access tokens (APP_USR-)"
source = "provider docs: E2B, RunPod, Browserbase, Daytona, Modal, Polar, Statsig, Flagsmith and Mercado Pago API keys"
prefixes = ["e2b_", "rpa_", "rps_", "bb_live_", "dtn_", "as-", "polar_oat_", "polar_pat_", "secret-", "ser.", "APP_USR-"]
follow = '''[A-Za-z0-9_-]{20}'''
regex = '''<<START>>(?:e2b_[A-Za-z0-9]{32,48}|rp[as]_[A-Za-z0-9]{32,64}|bb_live_[A-Za-z0-9_-]{24,40}|dtn_[A-Za-z0-9]{32,64}|as-[A-Za-z0-9]{22}|polar_[op]at_[A-Za-z0-9]{32,64}|secret-[A-Za-z0-9]{43}|ser\.[A-Za-z0-9]{22}|APP_USR-[0-9]{16}-[0-9]{6}-[a-f0-9]{32}-[0-9]{6,12})<<END>>'''
# (`as-`, `ser.` and `secret-` also start words: a value built of words is no key)
validator = "unworded_token"
tp = [
  "E2B_API_KEY=«e2b_{hex:40}»",
  "runpod.api_key = \"«rpa_{alnum:40}»\"",
  "the S3 secret is «rps_{lowalnum:40}»",
  "«bb_live_{token:27}»",
  "DAYTONA_API_KEY=«dtn_{hex:64}»",
  "modal token set --token-id ak-{alnum:22} --token-secret «as-{alnum:22}»",
  "POLAR_ACCESS_TOKEN=«polar_oat_{alnum:43}»",
  "statsig server key: «secret-{alnum:43}»",
  "Flagsmith(environment_key=\"«ser.{alnum:22}»\")",
  "MP_ACCESS_TOKEN=«APP_USR-{digits:16}-{digits:6}-{hex:32}-{digits:9}»",
]
fp = ["the e2b_sandbox_template_for_the_python_runtime", "kubectl get secret-store-csi-driver-provider-aws-installation-guide", "user.ServiceAccountTokenVolumeProjection", "as-needed-for-the-incremental-build-step", "ser.SerializeToStringDeterministic"]

[[rule]]
id = "infra-service-tokens"
kind = "saas_token"
category = "saas"
description = "Service tokens of infrastructure tools the catalogue does not list: Tailscale keys of every kind, auth, API, OAuth client, SCIM, webhook (tskey-<kind>-…), Infisical service tokens (st.<id>.<secret>.<key>), Helicone keys (sk-helicone-, pk-helicone-)"
source = "provider docs: Tailscale API and auth keys, Infisical service tokens, Helicone API keys"
prefixes = ["tskey-", "st.", "sk-helicone-", "pk-helicone-"]
follow = '''(?:[a-z]{3,12}-[A-Za-z0-9]{6}|[a-f0-9]{24}\.)'''
# a Tailscale key of any kind (new kinds come), glued after `_` or a digit too (`MY_tskey-api-…`)
regex = '''(?:<<START>>(?:st\.[a-f0-9]{24}\.[a-f0-9]{32,64}\.[a-f0-9]{32,64}|[sp]k-helicone-(?:eu-)?(?:[a-z0-9]{7}-){3}[a-z0-9]{7})|(?:(?<![A-Za-z])|<<AFTER_ESCAPE>>)tskey-[a-z]{3,12}-[A-Za-z0-9]{6,24}-[A-Za-z0-9]{16,64})<<END>>'''
validator = "token"
tp = [
  "TS_AUTHKEY=«tskey-auth-{alnum:12}CNTRL-{alnum:34}»",
  "the tailscale api key «tskey-api-{alnum:12}CNTRL-{alnum:34}» expires in 90 days",
  "export MY_«tskey-client-{alnum:12}-{alnum:30}»",
  "INFISICAL_TOKEN=«st.{hex:24}.{hex:32}.{hex:32}»",
  "Helicone-Auth: Bearer «sk-helicone-{lowalnum:7}-{lowalnum:7}-{lowalnum:7}-{lowalnum:7}»",
]
fp = ["st.session_state.messages.append(msg)", "tskey-auth- is the prefix", "st.{hex:24} is an object id"]

[[rule]]
id = "new-relic-key"
kind = "newrelic"
category = "monitoring"
description = "New Relic user, insert, query, browser and license keys"
source = "New Relic docs: API keys; gitleaks new-relic-* (MIT)"
prefixes = ["NRAK-", "NRII-", "NRIQ-", "NRJS-", "NRAA-", "NRRA-"]
follow = '''(?:[A-Z0-9]{20}|<<B62>>|[a-f0-9]{19})'''
regex = '''<<START>>(?:NRAK-[A-Z0-9]{27}|NRI[IQ]-[A-Za-z0-9_-]{32}|NRJS-[a-f0-9]{19}|NR[AR]A-[a-f0-9]{27,42})<<END>>'''
validator = "token"
tp = ["NEW_RELIC_API_KEY=«NRAK-{upalnum:27}»", "NEW_RELIC_INSERT_KEY=«NRII-{token:32}»", '''"querykey": "«NRIQ-{token:32}»",''']
fp = ["NRAK- prefix"]

[[rule]]
id = "new-relic-license-key"
kind = "newrelic"
category = "monitoring"
description = "New Relic ingest license key (40 characters ending in NRAL)"
source = "New Relic docs: license key"
prefixes = ["NRAL"]
lead = "a-z0-9"
lead_max = 36
regex = '''<<START>>[a-z0-9]{36}NRAL<<END>>'''
validator = "token"
tp = ["NEW_RELIC_LICENSE_KEY=«eu01xx{hex:30}NRAL»", "license_key: «{hex:36}NRAL»"]
fp = ["NRAL"]

[[rule]]
id = "twitter-facebook-mapbox"
kind = "social"
category = "saas"
description = "Twitter/X app bearer token, Facebook access token (`EAA` and a capital: page `EAAM`/`EAAC`, app `EAAB`, Graph API Explorer `EAAG`, …; not Square's `EAAA`), Mapbox secret token, Dropbox token"
source = "provider docs; gitleaks twitter-bearer-token, facebook-page-access-token, mapbox-api-token, dropbox-short-lived-api-token (MIT)"
prefixes = ["AAAAAAAAAAAAAAAAAAAAA", "EAA", "sk.eyJ", "sl."]
follow = '''(?:u\.)?<<B62>>'''
regex = '''<<START>>(?:A{21}[A-Za-z0-9%]{40,120}|EAA[B-Z][A-Za-z0-9]{100,400}|sk\.eyJ[A-Za-z0-9_-]{50,400}\.[A-Za-z0-9_-]{20,40}|sl\.(?:u\.)?[A-Za-z0-9_=-]{130,1200})<<END>>'''
validator = "social_token"
tp = ["TWITTER_BEARER_TOKEN=«AAAAAAAAAAAAAAAAAAAAA{alnum:80}»", "MAPBOX_SECRET=«sk.eyJ1{b64url:60}.{b64url:22}»", "the explorer gave me «EAAG{alnum:180}» for the page", '{{"access_token": "«EAAB{alnum:150}»"}}']
fp = ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "blob: EAAB{alnum:120}/{alnum:40}+w"]

[[rule]]
id = "airtable-token"
kind = "saas_token"
category = "saas"
description = "Airtable personal access token"
source = "Airtable docs: personal access tokens; gitleaks airtable-personnal-access-token (MIT)"
anchors = ['''\.[a-f0-9]{64}''']
lead = "A-Za-z0-9"
lead_max = 17
regex = '''<<START>>pat[A-Za-z0-9]{14}\.[a-f0-9]{64}<<END>>'''
validator = "token"
tp = ["AIRTABLE_TOKEN=«pat{alnum:14}.{hex:64}»"]
fp = ["pat.short.token"]

[[rule]]
id = "harness-token"
kind = "saas_token"
category = "saas"
description = "Harness personal and service account tokens"
source = "Harness docs: API keys; gitleaks harness-api-key (MIT)"
prefixes = ["pat.", "sat."]
follow = '''[A-Za-z0-9_-]{22}\.'''
regex = '''<<START>>(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}<<END>>'''
validator = "token"
tp = ["HARNESS_API_KEY=«pat.{token:22}.{alnum:24}.{alnum:20}»"]
fp = ["pat.short.token"]

[[rule]]
id = "jwt"
kind = "jwt"
category = "auth"
description = "JSON Web Token found by its structure: a base64url JSON header naming `alg` or `typ`, a dot, a payload (JSON or not), an optional signature (unsigned and two-part tokens too)"
source = "RFC 7519 and RFC 7515 (JWS compact serialisation); gitleaks jwt (MIT)"
# the header's base64 ends in `9`, `0` or `fQ` (a `}` in its last group): a dot after one of
# those, then a payload, is where a token with any payload can end its header
anchors = ['''\.eyJ[A-Za-z0-9_-]{8}''', '''\.(?:(?<=[90]\.)|(?<=fQ\.))[A-Za-z0-9_-]{16}''']
lead = "A-Za-z0-9_-"
lead_max = 4096
regex = '''<<START>>eyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{16,65536}(?:\.[A-Za-z0-9_-]{0,4096})?<<END>>'''
validator = "jwt"
tp = [
  "Set-Cookie: session=«{jwt}»; Path=/; HttpOnly",
  "KUBE_TOKEN=«{jwt}»",
  "unsigned: «eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ1c2VyLTQyIiwiYWRtaW4iOnRydWV9.»",
  "two parts «eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJuYW1lIjoiSm9lIiwKInN0YXR1cyI6ImVtcGxveWVlIgp9» pasted",
  "key := \"«eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.{b64url:60}.{b64url:40}»\"",
]
fp = ["eyJhbGciOiJIUzI1NiJ9 is only a header", "eyJ0ZXN0IjoxfQ.eyJzdWIiOiIxMjM0NTY3ODkwIn0 holds no alg", "version 1.0.eyJ{alnum:20}"]

# ============================================================================ URLs with credentials

[[rule]]
id = "azure-devops-pat"
kind = "azure_devops"
category = "vcs"
description = "Azure DevOps personal access token: 52 lower-case base32 characters (legacy) or 84 with AZDO"
source = "Azure DevOps docs: use personal access tokens"
anchors = ['''AZDO''']
lead = "A-Za-z0-9"
lead_max = 76
context = ["zure_devops", "zure-devops", "zure devops", "zure.com"]
window = 2
regex = '''(?:(?<![A-Za-z0-9_+-])|<<AFTER_ESCAPE>>)(?P<secret>[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}|[a-z2-7]{52})(?![A-Za-z0-9_+/-])'''
validator = "azure_devops_pat"
tp = ["AZURE_DEVOPS_EXT_PAT=«{lower:20}7{lower:15}3{lower:13}52»", "git clone https://«{lower:20}4{lower:15}6{lower:13}27»@dev.azure.com/acme/app/_git/app"]
fp = ["az devops configure --defaults organization=https://dev.azure.com/acme project=abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"]

[[rule]]
id = "vault-legacy-token"
kind = "vault"
category = "cloud"
description = "HashiCorp Vault service token in the format before 1.10: s. and 24 base62 characters"
source = "Vault docs: tokens (token prefixes before Vault 1.10)"
prefixes = ["s."]
follow = '''<<B62>>'''
regex = '''<<START>>s\.[A-Za-z0-9]{24}(?![A-Za-z0-9_.+/-])'''
validator = "random_token"
tp = ["vault login «s.{alnum:24}»", "export VAULT_TOKEN=«s.{alnum:24}»"]
fp = ["s.ReadFromJsonFileAndParse", "this.s.getElementsByTagName"]

[[rule]]
id = "sidekiq-credentials"
kind = "registry"
category = "registry"
description = "Sidekiq Pro/Enterprise gem server credentials, user and password both: the pair is the licence, in a gems/enterprise.contribsys.com URL, its BUNDLE_ variable or `bundle config` (before the URL-password and Bundler rules, which keep a user)"
source = "Sidekiq Pro/Enterprise docs (gem source credentials); gitleaks sidekiq-secret, sidekiq-sensitive-url (MIT)"
anchors = ['''://(?=[0-9a-f]{8}:[0-9a-f]{8}@(?:gems|enterprise)\.contribsys\.com)''', '''\.contribsys\.com[ \t]{1,8}(?=[0-9a-f]{8}:)''']
prefixes = ["BUNDLE_"]
follow = '''(?:GEMS|ENTERPRISE)__CONTRIBSYS__COM'''
lead = "A-Za-z"
lead_max = 10
regex = '''<<NAME_START>>(?:https?://|BUNDLE_(?:GEMS|ENTERPRISE)__CONTRIBSYS__COM<<SEP>>|(?:gems|enterprise)\.contribsys\.com[ \t]{1,8})(?P<secret>[0-9a-f]{8}:[0-9a-f]{8})(?![0-9A-Za-z])'''
tp = ["source \"https://«{hex:8}:{hex:8}»@gems.contribsys.com/\" do", "retry with\nhttps://«{hex:8}:{hex:8}»@enterprise.contribsys.com/", "BUNDLE_ENTERPRISE__CONTRIBSYS__COM=«{hex:8}:{hex:8}»", "bundle config --local enterprise.contribsys.com «{hex:8}:{hex:8}»"]
fp = ["BUNDLE_GEMS__CONTRIBSYS__COM=$SIDEKIQ_CREDENTIALS", "https://gems.contribsys.com/ is the gem server"]

[[rule]]
id = "wordpress-keys-and-salts"
kind = "wordpress"
category = "config"
description = "WordPress authentication keys and salts in wp-config.php (`define( 'AUTH_SALT', '…' );`): a salt's name holds no credential word, and the file aligns the values with spaces"
source = "WordPress docs: wp-config.php, security keys (the api.wordpress.org secret-key service's alphabet)"
anchors = ['''_(?:KEY|SALT)['"][ \t]{0,16},''']
lead = "A-Z_"
lead_max = 12
regex = '''(?:(?<![A-Za-z0-9_])|<<AFTER_ESCAPE>>)(?:SECURE_AUTH|LOGGED_IN|NONCE|AUTH)_(?:KEY|SALT)['"][ \t]{0,16},[ \t]{0,16}['"](?P<secret>[^'"\\\n]{16,128})['"]'''
validator = "random_token"
tp = [
  "define( 'AUTH_SALT',        '«{alnum:20}!@# {alnum:20}[]{{}}<>~+={alnum:16}»' );",
  "define('NONCE_SALT', '«{token:64}»');",
  "define( 'LOGGED_IN_KEY',    '«{alnum:32}|%^&*(){alnum:26}»' );",
]
fp = ["define( 'AUTH_SALT',        'put your unique phrase here' );", "define('NONCE_SALT', getenv('NONCE_SALT'));"]

[[rule]]
id = "bundler-credentials"
kind = "registry"
category = "registry"
description = "Bundler gem source credentials: BUNDLE_<HOST>=user:password or a token"
source = "Bundler docs: bundle config (credentials for gem sources)"
prefixes = ["BUNDLE_"]
follow = '''[A-Z0-9-]{1,64}__'''
regex = '''<<NAME_START>>BUNDLE_(?:[A-Z0-9-]{1,64}__){1,8}[A-Z0-9-]{1,64}<<SEP>>(?:[^\s:"'\\]{1,128}:)?(?P<secret>[^\s"'\\`]{6,512})'''
validator = "cli_password"
tp = ["BUNDLE_GEMS__CONTRIBSYS__COM=user:«{alnum:24}»", "export BUNDLE_RUBYGEMS__PKG__GITHUB__COM=«{alnum:40}»"]
fp = ["BUNDLE_GEMS__CONTRIBSYS__COM=$SIDEKIQ_CREDENTIALS", "BUNDLE_PATH=vendor/bundle"]

[[rule]]
id = "password-hash-crypt"
kind = "password_hash"
category = "password"
description = "A password hash in the modular crypt format (/etc/shadow, htpasswd, a users table): bcrypt `$2b$`, md5-crypt `$1$`/`$apr1$`, sha-crypt `$5$`/`$6$`, yescrypt `$y$`, Cisco type 8 and 9 secrets `$8$`/`$9$` (PBKDF2, scrypt), argon2 and scrypt (PHC strings), Kerberos AS-REP and TGS hashes as crackers print them; each at its format's length"
source = "crypt(5) (libxcrypt: hashing methods); the PHC string format (P-H-C/phc-string-format); Apache htpasswd docs; hashcat example hashes (modes 18200, 13100, 9200, 9300: Cisco type 8 and 9)"
anchors = ['''\$(?:2[abxy]?\$[0-9]{2}\$|[15689y]\$|apr1\$|argon2(?:id|i|d)\$|scrypt\$|krb5(?:asrep|tgs)\$)''']
regex = '''(?:(?<![A-Za-z0-9$./+-])|<<AFTER_ESCAPE>>)(?P<secret>\$(?:2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}|(?:1|apr1)\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}|5\$(?:rounds=[0-9]{1,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43}|[89]\$[./A-Za-z0-9]{14}\$[./A-Za-z0-9]{43}|6\$(?:rounds=[0-9]{1,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{86}|y\$[./A-Za-z0-9]{1,32}\$[./A-Za-z0-9]{1,86}\$[./A-Za-z0-9]{43}|(?:argon2(?:id|i|d)\$v=[0-9]{1,3}\$m=[0-9]{1,10},t=[0-9]{1,10},p=[0-9]{1,3}|scrypt\$ln=[0-9]{1,2},r=[0-9]{1,3},p=[0-9]{1,3})\$[A-Za-z0-9+/]{8,88}\$[A-Za-z0-9+/]{16,128}|krb5(?:asrep|tgs)\$[0-9]{1,2}\$[^\s"'\\`]{32,8192}+))(?![./A-Za-z0-9+])'''
validator = "token"
tp = [
  "admin:«$apr1${crypt:8}${crypt:22}»",
  "root:«$6${crypt:16}${crypt:86}»:19700:0:99999:7:::",
  '''UPDATE users SET password_hash = '«$2b$12${crypt:53}»' WHERE id = 1;''',
  "deploy:«$y$j9T${crypt:22}${crypt:43}»:19700::::::",
  "username admin privilege 15 secret 9 «$9${crypt:14}${crypt:43}»",
  '''{{"hash": "«$argon2id$v=19$m=65536,t=3,p=4${b64:22}${b64:43}»"}}''',
  "«$krb5asrep$23$svc_sql@CORP.LOCAL:{hex:32}${hex:200}»",
]
fp = ["echo $2 $1 and ${{6}}", "the cost is $2b per year, $5 per seat", "$6$rounds=5000$ is the default prefix", "crypt(3) hashes look like $2b$12$<salt><hash>"]

[[rule]]
id = "password-hash-framework"
kind = "password_hash"
category = "password"
description = "A web framework's password hash: Django `pbkdf2_sha256$<iterations>$<salt>$<hash>`, Werkzeug `pbkdf2:sha256:<iterations>$<salt>$<hex>` and `scrypt:…$<salt>$<hex>`"
source = "Django docs: password management (how Django stores passwords); Werkzeug docs: werkzeug.security.generate_password_hash"
anchors = ['''\$(?=[0-9]{4,8}\$[A-Za-z0-9]{1,64}\$[A-Za-z0-9+/]{27}|[A-Za-z0-9]{1,64}\$[0-9a-f]{40})''']
lead = "A-Za-z0-9_:"
lead_max = 40
regex = '''(?:(?<![A-Za-z0-9_$./+:-])|<<AFTER_ESCAPE>>)(?P<secret>(?:pbkdf2_sha(?:1|256)\$[0-9]{4,8}\$[A-Za-z0-9]{1,64}\$[A-Za-z0-9+/]{27,86}={0,2}|(?:pbkdf2:sha(?:1|256|512)(?::[0-9]{1,8})?|scrypt:[0-9]{1,8}:[0-9]{1,3}:[0-9]{1,3})\$[A-Za-z0-9]{1,64}\$[0-9a-f]{40,128}))(?![A-Za-z0-9+/=])'''
validator = "token"
tp = [
  "«pbkdf2_sha256$870000${alnum:22}${b64:43}=»",
  '''password = "«pbkdf2:sha256:600000${alnum:16}${hex:64}»"''',
  "«scrypt:32768:8:1${alnum:16}${hex:128}»",
]
fp = ["PASSWORD_HASHERS = ['django.contrib.auth.hashers.PBKDF2PasswordHasher']", "pbkdf2_sha256$<iterations>$<salt>$<hash>"]

[[rule]]
id = "kubernetes-bootstrap-token"
kind = "kubernetes"
category = "cloud"
description = "A Kubernetes bootstrap token's secret half in its Secret's `stringData` (`token-secret: <16>` beside `token-id: <6>`); the whole token after `--token` is found as a credential anyway"
source = "Kubernetes docs: authenticating with bootstrap tokens (bootstrap token Secret format)"
# (on the `-` scan with the literal right after it)
anchors = ['''-secret(?<=token-secret)''']
lead = "tokenTOKEN"
lead_max = 5
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)token-secret\\{0,8}["']?[ \t]{0,4}:[ \t]{0,4}<<Q>>(?P<secret>[a-z0-9]{16})(?![A-Za-z0-9_-])'''
validator = "token"
tp = ["stringData:\n  token-id: 07402b\n  token-secret: «{lowalnum:16}»", '''{{"token-id": "07402b", "token-secret": "«{lowalnum:16}»"}}''']
fp = ["token-secret: ${BOOTSTRAP_SECRET}", "token-secret: <16 characters>"]

[[rule]]
id = "kubernetes-secret-data"
kind = "k8s_secret"
category = "generic"
description = "A value under a Kubernetes Secret's `data:` (base64 of anything: a secret by definition)"
source = "Kubernetes docs: Secrets (data and stringData fields)"
context = ["ind: secret", "ind: \"secret\"", "ind:\"secret\"", "ind: 'secret'"]
window = 40
regex = '''<<LINE_START>>[ \t]{1,16}<<Q>>(?P<name>[A-Za-z0-9_.-]{1,253})<<Q>>[ \t]{0,4}:[ \t]{1,8}<<Q>>(?P<secret>(?:[A-Za-z0-9+/]{4}){2,4096}+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)(?![A-Za-z0-9+/=_.-])'''
validator = "k8s_data_value"
tp = ["apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ndata:\n  api-token: «{basic:ci}»\n  webhook: «{basic:hook}»"]
fp = ["apiVersion: v1\nkind: Secret\nmetadata:\n  name: frontend\n  namespace: production\ntype: Opaque"]

[[rule]]
id = "kubernetes-secret-string-data"
kind = "k8s_secret"
category = "generic"
description = "Every value under a Kubernetes Secret's `stringData:` (plain text, a secret by definition)"
source = "Kubernetes docs: Secrets (data and stringData fields)"
context = ["ind: secret", "ind: \"secret\"", "ind:\"secret\"", "ind: 'secret'"]
window = 40
regex = '''stringData:[ \t]{0,8}<<BREAK>>[ \t]{1,16}<<Q>>[A-Za-z0-9_.-]{1,253}<<Q>>[ \t]{0,4}:[ \t]{1,8}<<Q>>(?:(?P<secret>[^\s"'\\`]{6,4096})|[^\s"'\\`]{0,5})'''
# the block's next entries: same shape, one per line, until a line that is not one
then = '''<<Q>>[ \t]{0,64}<<BREAK>>[ \t]{1,16}<<Q>>[A-Za-z0-9_.-]{1,253}<<Q>>[ \t]{0,4}:[ \t]{1,8}<<Q>>(?:(?P<secret>[^\s"'\\`]{6,4096})|[^\s"'\\`]{0,5})'''
validator = "cli_password"
tp = [
  "kind: Secret\nstringData:\n  connection: «{alnum:20}»",
  "kind: Secret\nstringData:\n  user: app\n  password: «{alnum:16}»\n  api-token: \"«{alnum:24}»\"\nmetadata:\n  name: frontend-config",
]
fp = ["stringData:\n  password: ${DB_PASSWORD}"]

[[rule]]
id = "url-password"
kind = "url_password"
category = "url"
description = "Password in a URL's userinfo (scheme://user:password@host), even when it holds @ or #"
source = "RFC 3986 §3.2.1; detect-secrets basic_auth (Apache-2.0)"
anchors = ['''://[^\s/"\\]{0,256}@''']
lead = "A-Za-z0-9+.-"
lead_max = 24
regex = '''(?:(?<![A-Za-z0-9+.-])|<<AFTER_ESCAPE>>)[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s:/?#"'\\<>\[\]@]{0,128}(?:@[^\s:/?#"'\\<>\[\]@]{1,64})?:(?P<secret>[^\s"'\\<>/]{1,256})@(?=[A-Za-z0-9\[][A-Za-z0-9.\[\]:%_-]{0,255}(?:[/?#"'\\\s,;)]|$))'''
validator = "url_password"
tp = [
  "DATABASE_URL=postgres://app:«{alnum:20}»@db.internal:5432/app",
  "redis://:«dB2y@qL9#4J{alnum:6}»@cache.internal:6379/0",
  "mongodb+srv://admin:«{password}»@cluster0.mongodb.net/db",
  "basic_auth = 'http://username:«whywouldyouusehttpforpasswords»@example.com'",
]
fp = [
  "DATABASE_URL=postgres://${DB_USER}:${DB_PASSWORD}@db:5432/app",
  "postgres://user:password@localhost/db and https://user:pass@example.com",
  "https://github.com/acme/app.git\ngit@github.com:acme/app.git\nssh://git@github.com/acme/app",
  "https://example.com:8443/path?q=1&page=2 http://localhost:8000/api/v1/",
  '''f"https://user123:{{_github_pat(github_secret_name)}}@github.com/"''',
]

# ============================================================================ auth headers and CLI flags

[[rule]]
id = "url-token-user"
kind = "url_password"
category = "url"
description = "A token as a URL's whole userinfo (scheme://token@host): git and many APIs take a personal access token as the user"
source = "GitHub and Azure DevOps docs (cloning with a personal access token); RFC 3986 §3.2.1"
anchors = ['''://[^\s/"\\]{0,256}@''']
lead = "A-Za-z0-9+.-"
lead_max = 24
regex = '''(?:(?<![A-Za-z0-9+.-])|<<AFTER_ESCAPE>>)[A-Za-z][A-Za-z0-9+.-]{0,20}://(?P<secret>[A-Za-z0-9_-]{20,256})@(?=[A-Za-z0-9\[][A-Za-z0-9.\[\]:%_-]{0,255}(?:[/?#"'\\\s,;)]|$))'''
validator = "url_token_user"
tp = [
  "git clone https://«{alnum:40}»@github.com/acme/app.git",
  "git remote set-url origin https://«{hex:40}»@github.com/acme/app",
  "https://«{lowalnum:52}»@dev.azure.com/acme/_git/app",
]
fp = [
  "SENTRY_DSN=https://{hex:32}@o450000.ingest.sentry.io/5000000",
  "https://deploy-bot-service-account@git.example.com/acme/app.git",
  "ssh://git@github.com/acme/app and postgres://analytics_readonly_user@db.internal/app",
]

[[rule]]
id = "authorization-header"
kind = "bearer"
category = "auth"
description = "Authorization header with a Bearer/Token/JWT credential, a token after any other one-word scheme as the whole rest of the value (Okta `SSWS`, Opsgenie `GenieKey`, Splunk HEC `Splunk`, Discord `Bot`), or a bare token as its whole value"
source = "RFC 6750; gitleaks curl-auth-header (MIT)"
lower_anchors = ['''authorization''']
# (besides a separator, a subscript's `"] =` among them: a call's next argument,
# `("Authorization", "Bearer …")`, and a scheme quoted after a blank, nginx's
# `proxy_set_header Authorization "Bearer …";`) and a colon right before the scheme: HTTPie's
# `Authorization:Bearer …` (a bare `name:v` is an ARN's part elsewhere; a scheme word is not)
regex = '''(?i:authorization)(?:<<SEP>>|\\{0,8}["'][ \t]{0,4},[ \t]{0,4}\\{0,8}["']|[ \t]{1,8}\\{0,8}["'](?=(?i:bearer|token)[ \t])|:\\{0,8}["']?(?=(?i:bearer|token|jwt)[ \t]))(?:(?i:bearer|token|jwt|apikey|api-key)[ \t]{1,8}|(?!(?i:basic|digest|negotiate|ntlm)[ \t])[A-Za-z][A-Za-z0-9_-]{1,23}[ \t](?=[A-Za-z0-9._~+/-]{12,4096}+(?:![A-Za-z0-9._~+/-]{8,4096}+)?={0,3}(?:\\{0,8}["'`]|\\[nrt]|\\u001b|[\r\n\x1b]|$))|(?=[A-Za-z0-9._~+/-]{12,4096}+(?:![A-Za-z0-9._~+/-]{8,4096}+)?={0,3}(?:\\{0,8}["'`]|\\[nrt]|[\r\n]|$)))(?P<secret>[A-Za-z0-9._~+/-]{12,4096}(?:![A-Za-z0-9._~+/-]{8,4096})?={0,3})(?![A-Za-z0-9._~+/=-])'''
validator = "header_token"
tp = [
  '''curl -H "Authorization: Bearer «{token:40}»" https://api.example.com/v1/me''',
  '''headers = {{"Authorization": "Bearer «{alnum:32}»"}}''',
  "Authorization: token «{alnum:40}»",
  '''req.Header.Set("Authorization", "Bearer «{token:40}»")''',
  "headers.append('Authorization', 'Bearer «{alnum:32}»');",
  "curl --header 'Authorization: «{uuid}»' https://api.example.com",
  '''headers["Authorization"] = "Bearer «{alnum:32}»"''',
  "$opts['Authorization'] = 'Token «{hex:40}»';",
  '''proxy_set_header Authorization "Bearer «{token:40}»";''',
  "http GET api.example.com 'Authorization:Bearer «{alnum:32}»'",
  '''http POST api.example.com/v1/jobs Authorization:"Bearer «{token:40}»"''',
  # a Salesforce session id: the org id, `!`, then the session's own secret
  "curl -H 'Authorization: Bearer «00D{alnum:12}!A{alnum:95}»' https://acme.my.salesforce.com/services/data",
  "headers = {{'Authorization': '«00D{alnum:12}!A{alnum:95}»'}}",
  # any other one-word scheme, the token the whole rest of the value
  "curl -H 'Authorization: SSWS «00{token:40}»' https://acme.okta.com/api/v1/users",
  '''headers = {{"Authorization": "GenieKey «{uuid}»"}}''',
  "Authorization: Splunk «{uuid}»",
  "Authorization: Bot «{alnum:24}.{alnum:6}.{token:27}»",
]
fp = ["Authorization: Bearer $TOKEN\nAuthorization: Bearer ${GITHUB_TOKEN}", '"Authorization:Bearer scheme" in RFC 6750', '''headers["Authorization"] = "Bearer " + token''', '''proxy_set_header Authorization "Bearer $http_x_token";''', 'the Authorization "Bearer scheme" section of RFC 6750', '''headers={{"Authorization": f"Bearer {{token}}"}}''', '''{{"authorization": "authorization_code"}}''', "Authorization: Digest username=admin-service-account", "Authorization: required for every call to the billing endpoints", "Authorization: Negotiate YIIGhgYGKwYBBQUCoIIGejCCBnagMDAuBgkqhkiC9xIBAgIGCSqGSIb3EgECAgYKKwYBBAGCNwICHgYKKwYBBAGCNwICCqKCBkAEggY8YIIGOAYJKoZIhvcSAQICAQBuggYnMIIGI6ADAgEF"]

[[rule]]
id = "token-header"
kind = "generic_secret"
category = "generic"
description = "A token in an X-Auth-Token / X-Access-Token / X-API-Key / DD-APPLICATION-KEY style header, hex tokens included"
source = "HTTP API docs: token headers (OpenStack X-Auth-Token, Datadog DD-API-KEY and DD-APPLICATION-KEY)"
lower_anchors = ['''oken(?<=-token)\\{0,8}["']?[ \t]{0,4}:''', '''key(?<=-key)\\{0,8}["']?[ \t]{0,4}:''']
lead = "A-Za-z-"
lead_max = 24
regex = '''<<NAME_START>>(?i:(?:x-)?(?:auth|access|api|session|dd-api|dd-application|application|private)-(?:token|key))\\{0,8}["']?[ \t]{0,4}:[ \t]{0,8}\\{0,8}["']?[ \t]{0,4}(?P<secret>[A-Za-z0-9._~+/-]{12,4096}={0,3})(?![A-Za-z0-9._~+/=-])'''
validator = "header_token"
tp = ["curl -H 'X-Auth-Token: «{hex:16}»' https://api.internal/v1/me", '''{{"X-Access-Token": "«{hex:12}»"}}''', "DD-APPLICATION-KEY: «{hex:40}»"]
fp = ["X-Auth-Token: $OS_TOKEN", "x-api-key: required"]

[[rule]]
id = "codeclimate-reporter-id"
kind = "generic_secret"
category = "generic"
description = "Code Climate's test reporter id, which uploads coverage as the repository: `CC_TEST_REPORTER_ID: <64 hex>` (an id by its name, a credential by its use)"
source = "Code Climate docs: test reporter configuration (CC_TEST_REPORTER_ID)"
# (on the `_` scan: the literal after it turns away every other `_` at its first byte or two)
anchors = ['''_REPORTER_ID(?<=CC_TEST_REPORTER_ID)''', '''_reporter_id(?<=cc_test_reporter_id)''']
lead = "CcTtEeSs_"
lead_max = 8
regex = '''(?:(?<![A-Za-z0-9_])|<<AFTER_ESCAPE>>)(?:CC_TEST_REPORTER_ID|cc_test_reporter_id)<<SEP>>(?P<secret>[a-f0-9]{64})(?![A-Za-z0-9_-])'''
validator = "near_token"
tp = ["env:\n  CC_TEST_REPORTER_ID: «{hex:64}»", "export CC_TEST_REPORTER_ID=«{hex:64}»"]
fp = ["  CC_TEST_REPORTER_ID: ${{{{ secrets.CC_TEST_REPORTER_ID }}}}", "CC_TEST_REPORTER_ID=$CC_ID"]

[[rule]]
id = "sonar-login-token"
kind = "generic_secret"
category = "generic"
description = "A SonarQube token given as the scanner's login: `-Dsonar.login=<40 hex>`, `sonar.login=` in sonar-project.properties, `SONAR_LOGIN=`, a call's `('sonar.login', '<40 hex>')` (the legacy tokens are bare hex; the prefixed `sq?_` ones are known anyway)"
source = "SonarQube docs: analysis parameters (sonar.login, sonar.token)"
# (on the `.` and `_` scans: the bytes after them start with the literal, so they cost a hit of those
# keys only where `login`/`token` follows)
anchors = ['''\.login(?<=sonar\.login)''', '''\.token(?<=sonar\.token)''', '''_login(?<=sonar_login)''', '''_LOGIN(?<=SONAR_LOGIN)''']
lead = "sSoOnNaArRD-"
lead_max = 7
regex = '''(?:(?<![A-Za-z0-9])-D|(?<![A-Za-z0-9])|<<AFTER_ESCAPE>>)(?:sonar[._](?:login|token)|SONAR_LOGIN)(?:<<SEP>>|<<CALL_SEP>>)(?P<secret>[a-f0-9]{40}|sq[apu]_[a-f0-9]{40})(?![A-Za-z0-9_-])'''
validator = "near_token"
tp = ["mvn sonar:sonar -Dsonar.host.url=https://sonarcloud.io -Dsonar.login=«{hex:40}»", "sonar.login=«{hex:40}»", "SONAR_LOGIN: «{hex:40}»", "props.put('sonar.login', '«{hex:40}»')"]
fp = ["-Dsonar.login=$SONAR_TOKEN", "sonar.login=admin", "sonar.login=${env.SONAR_TOKEN}", "sonar.token=0000000000000000000000000000000000000000"]

[[rule]]
id = "appid-key"
kind = "generic_secret"
category = "generic"
description = "A 32-hex key given as `appid`: a query's `&appid=`, `OPENWEATHER_APPID=`, `\"appid\": \"…\"` (OpenWeather's API key goes by that name; a numeric, UUID or WeChat `wx…` app id is no such key and stays)"
source = "OpenWeather docs: the API key as the `appid` query parameter"
# (on the `p` scan at `pid`, its `ap` read back by `lead`: an anchor starting `a` would join the
# `auth` scan's group and shorten its key to `a`)
lower_anchors = ['''pid(?<=appid)''']
lead = "aApP"
lead_max = 2
regex = '''(?:(?<![A-Za-z0-9])|<<AFTER_ESCAPE>>)(?i:appid)(?:<<SEP>>)(?P<secret>[a-fA-F0-9]{32})(?![A-Za-z0-9_-])'''
validator = "near_token"
tp = ["curl 'https://api.openweathermap.org/data/2.5/weather?q=London&appid=«{hex:32}»'", "OPENWEATHER_APPID=«{hex:32}»", '''params = {{"q": "Paris", "appid": "«{hex:32}»"}}''']
fp = ["appid=wx4f8a2c6e9b1d3f57", '''{{"appId": "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17"}}''', "FACEBOOK_APPID=1234567890123456", "appid=00000000000000000000000000000000", "myappid=3f786850e387550fdab836ed7e6dc881"]

[[rule]]
id = "authorization-basic"
kind = "basic_auth"
category = "auth"
description = "Authorization header with Basic credentials"
source = "RFC 7617"
lower_anchors = ['''authorization''']
regex = '''(?i:authorization)(?:<<SEP>>|:\\{0,8}["']?(?=(?i:basic)[ \t]))(?i:basic)[ \t]{1,8}(?P<secret>[A-Za-z0-9+/]{8,4096}={0,3})(?![A-Za-z0-9+/=])'''
validator = "basic_header"
tp = ["Authorization: Basic «{basic:admin}»", "http GET localhost:8000/api 'Authorization:Basic «{basic:admin}»'", "curl -H 'Authorization: Basic «YnJvd3Nlcjo=»' https://x", '"Authorization": "Basic «{alnum:40}=»"']
fp = ["Authorization: Basic realm", "Authorization: Basic dXNlcm5hbWU6cGFzc3dvcmQ=", "the Authorization: Basic authentication scheme", "Authorization: Basic base64string"]

[[rule]]
id = "docker-config-auth"
kind = "docker_auth"
category = "registry"
description = "Docker config.json `auth` and npm `_auth`: base64 of user:password"
source = "Docker docs: config.json credentials store; npm docs: _auth"
lower_anchors = ['''auth(?:\\{0,8}["'])?[ \t]{0,8}[:=]''']
regex = '''(?:(?<![A-Za-z0-9-])|<<AFTER_ESCAPE>>)_?auth(?:<<SEP>>)(?P<secret>[A-Za-z0-9+/]{8,4096}={0,2})(?![A-Za-z0-9+/=])'''
validator = "basic_credentials"
tp = ['''{{"auths": {{"https://index.docker.io/v1/": {{"auth": "«{basic:acme}»"}}}}}}''', "_auth=«{basic:ci}»"]
fp = ['''{{"auth": "required"}}''', "auth: oauth2"]

[[rule]]
id = "go-mysql-dsn"
kind = "url_password"
category = "url"
description = "A Go MySQL driver DSN's password: `user:password@tcp(host:3306)/db`: no scheme, so no URL rule reads it"
source = "go-sql-driver/mysql: DSN (data source name) format"
# (on the `c` scan at `cp(` of `@tcp(`, the user and password read back from it by `lead`; not
# `@unix(`: it holds no scan's key, so it would cost a pass of its own)
lower_anchors = ['''@tcp\(''']
lead = '''A-Za-z0-9_.!#%&*+,;=?^~|:$-'''
lead_max = 200
regex = '''(?:(?<![A-Za-z0-9_.-])|<<AFTER_ESCAPE>>)[A-Za-z0-9_.-]{1,64}:(?P<secret>[^@\s"'`\\/]{3,128}+)@tcp\('''
validator = "url_password"
tp = ['''dsn := "app:«{password}»@tcp(db.internal:3306)/app?parseTime=true"''', '''db, err := sql.Open("mysql", "root:«{alnum:16}»@tcp(127.0.0.1:3306)/shop")''', "MYSQL_DSN=svc:«{password}»@tcp(mysql:3306)/app"]
fp = ['''dsn := fmt.Sprintf("%s:%s@tcp(%s)/%s", user, pass, host, db)''', '''dsn := "root:password@tcp(localhost:3306)/test"''', '''"user:${DB_PASSWORD}@tcp(db:3306)/app"''', '''dsn := "root@tcp(127.0.0.1:3306)/app"''']

[[rule]]
id = "curl-user"
kind = "password"
category = "password"
description = "curl -u / --user user:password, or :password alone (an API key as the password, no user)"
source = "curl manual: -u, --user; gitleaks curl-auth-user (MIT)"
anchors = ['''-(?<=[ \t]-)u[ \t=]{0,8}(?:[^\s:'"\\`$-][^\s:'"\\`$]{0,127})?:''', '''-(?<=[ \t]-)-user[ \t=]''']
near = ["curl"]
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?:-u|--user)(?:[ \t]{1,8}|=)?<<Q>>[^\s:'"\\`$]{0,128}:<<Q>>(?P<secret>[^\s'"\\`]{3,256})'''
validator = "cli_password"
tp = [
  "curl -u admin:«{password}» https://jenkins.internal/api/json",
  '''curl --user "deploy:«{password}»" -X POST https://x''',
  # the shell joins `kevin:` and a quoted password into one argument
  "curl --user kevin:'«{password}»' -iX PATCH https://x",
  "curl -u :«{alnum:32}» https://api.example.com/v1/items",
  # an OAuth client's id with dashes as the user
  "curl -X POST -u oa2-client-id_{token:32}-:«{alnum:40}» https://fra1.blynk.cloud/oauth2/token",
]
fp = ["curl -u $USER:$PASS https://x", "docker run -u 1000:1000 image", "git push -u origin:main", "curl --negotiate -u : https://intranet.example.com"]

[[rule]]
id = "psexec-password"
kind = "password"
category = "password"
description = "Sysinternals PsExec's `-p` password after its `-u` user (`psexec \\host -u Administrator -p …`); a `$Password` or `%PW%` variable stays"
source = "Sysinternals PsExec docs: -u, -p"
lower_anchors = ['''psexec''']
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?i:psexec)(?:64)?(?:\.exe)?[^\n]{0,256}?[ \t]-u[ \t]{1,4}[^\s]{1,128}[ \t]{1,4}-p[ \t]{1,4}<<Q>>(?P<secret>[^\s"'`]{3,128})'''
validator = "cli_password"
tp = ["psexec \\\\192.168.3.77 -u Administrator -p «{password}» shutdown -r -f -t 0", "PsExec.exe \\\\srv01 -accepteula -u CORP\\svc_deploy -p «{password}» cmd /c whoami"]
fp = ["psexec \\\\OAIJCTDU8024272 -u User -p $Password -i -d calc.exe", "PsExec.exe \\\\satmodel2 -u SATMODEL2\\MTCPB -p %nothing% -i 2", "psexec -s -i cmd.exe"]

[[rule]]
id = "vault-unseal-key"
kind = "vault"
category = "vault"
description = "A Vault unseal key given on the command line: `vault operator unseal <key>` (the key shares `vault operator init` prints are found by their `Unseal Key 1:` label)"
source = "HashiCorp Vault docs: operator unseal"
# (on the `p` scan at `perator`: `operator` holds no other scan's literal)
lower_anchors = ['''perator(?<=operator)[ \t]{1,4}unseal[ \t]''']
lead = "oO"
lead_max = 1
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?i:operator)[ \t]{1,4}unseal(?:[ \t]{1,4}-[A-Za-z-]{1,32}(?:=[^\s]{0,64})?){0,4}[ \t]{1,4}<<Q>>(?P<secret>[A-Za-z0-9+/]{20,128}={0,2})(?![A-Za-z0-9+/=_-])'''
validator = "token"
tp = ["oc -n vault exec -ti vault-0 -- vault operator unseal «{b64:44}»", "vault operator unseal -address=https://vault.internal:8200 «{b64:44}»"]
fp = ["vault operator unseal -status", "run vault operator unseal three times, once per key share", "vault operator unseal $UNSEAL_KEY_1"]

[[rule]]
id = "curl-oauth2-bearer"
kind = "bearer"
category = "auth"
description = "curl --oauth2-bearer TOKEN: the token curl sends as `Authorization: Bearer`"
source = "curl manual: --oauth2-bearer"
anchors = ['''-(?<=[ \t]-)-oauth2-bearer[ \t=]''']
near = ["curl"]
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)--oauth2-bearer(?:[ \t]{1,8}|=)<<Q>>(?P<secret>[A-Za-z0-9._~+/-]{12,4096}={0,3})(?![A-Za-z0-9._~+/=-])'''
validator = "header_token"
tp = ["curl --oauth2-bearer «{token:40}» https://api.example.com/v1/me", "curl -s --oauth2-bearer '«{alnum:32}»' -X POST https://x"]
fp = ["curl --oauth2-bearer $TOKEN https://x", "curl --oauth2-bearer \"$(gcloud auth print-access-token)\" https://x"]

[[rule]]
id = "httpie-auth"
kind = "password"
category = "password"
description = "HTTPie's -a / --auth user:password (or :token), after `http` or `https` as the command"
source = "HTTPie docs: authentication (-a, --auth)"
anchors = ['''-(?<=[ \t]-)a[ \t=]{1,8}[^\s:'"\\`$-]{0,128}:''', '''-(?<=[ \t]-)-auth[ \t=]''']
near = ["http ", "https "]
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?:-a|--auth)(?:[ \t]{1,8}|=)<<Q>>[^\s:'"\\`$]{0,128}:<<Q>>(?P<secret>[^\s'"\\`]{3,256})'''
validator = "cli_password"
tp = ["http -a admin:«{password}» https://api.example.com/v1/me", "https --auth 'deploy:«{password}»' POST api.example.com/items"]
fp = ["http -a $USER:$PASS https://x", "http -a admin: https://x", "cp -a src/ dst/ && http GET https://x"]

[[rule]]
id = "sqlplus-connect"
kind = "password"
category = "password"
description = "An Oracle connect string with its password: sqlplus user/password@db, CONNECT user/password"
source = "Oracle SQL*Plus: sqlplus logon syntax and CONNECT"
# (`sqlplus` on the `p` scan; SQL*Plus's `CONNECT` on the `c` scan, only starting a line and with
# the `@` of a connect identifier: "the connect timeout/retry logic" is prose)
lower_anchors = ['''sqlplus[ \t]''', '''connect[ \t]{1,4}[a-z0-9_$#]{1,30}/[^\s@/]{3,128}+@''']
regex = '''(?:(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?i:sqlplus)(?:[ \t]{1,4}-[A-Za-z]{1,8}){0,4}+|(?:<<LINE_START>>|(?<=[0-9]m))(?:SQL>[ \t]{1,4})?(?i:connect))[ \t]{1,4}<<Q>>[A-Za-z0-9_$#]{1,30}/(?P<secret>[^\s@/"'\\`]{3,128}+)(?=@|<<Q>>(?:[ \t]|\\[nrt]|[\r\n]|$))'''
validator = "cli_password"
tp = ["sqlplus scott/«{password}»@orcl", "sqlplus -s app/«{alnum:12}»@db.internal:1521/ORCLPDB1 @report.sql", "CONNECT system/«{password}»@//db:1521/XE"]
fp = ["sqlplus / as sysdba", "sqlplus scott/$PASSWORD@orcl", "sqlplus app/@orcl", "the connect timeout/retry logic"]

[[rule]]
id = "login-call-password"
kind = "password"
category = "password"
description = "A literal password given to a login call after the user: smtplib, imaplib, ftplib and poplib's `server.login(\"me@example.com\", \"…\")`"
source = "Python standard library: smtplib.SMTP.login, imaplib.IMAP4.login, ftplib.FTP.login"
anchors = ['''\.login\(''']
regex = '''\.login\([ \t]{0,4}(?:[A-Za-z_][A-Za-z0-9_.]{0,64}|\\{0,8}["'][^"'\\\n]{1,128}\\{0,8}["'])[ \t]{0,4},[ \t]{0,4}\\{0,8}["'](?P<secret>[^"'\\\s]{6,128}+)\\{0,8}["'][ \t]{0,4}\)'''
validator = "password"
tp = ['''server.login("me@example.com", "«Xk9#{alnum:10}»")''', "smtp.login(user, '«{alnum:16}»')", '''imap.login("bob", "«{password}»")''']
fp = ['''server.login(user, password)''', '''ftp.login("anonymous", "anonymous")''', '''server.login("me@example.com", os.environ["SMTP_PASSWORD"])''']

[[rule]]
id = "mysql-password-flag"
kind = "password"
category = "password"
description = "mysql/mariadb/mysqldump -pPASSWORD (no space)"
source = "MySQL manual: --password[=password], -p[password]"
anchors = ['''-(?<=[ \t]-)p[^\s-]''']
near = ["mysql", "mariadb"]
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)-p<<Q>>(?P<secret>[^\s"'\\`-][^\s"'\\`]{2,127})'''
validator = "cli_password"
tp = ["mysql -u root -p«{password}» -h db.internal app", "mysqldump -uroot -p'«{password}»' app > dump.sql"]
fp = ["mysql -u root -p app", "mkdir -p build && mysql -e 'select 1'"]

[[rule]]
id = "login-password-flag"
kind = "password"
category = "password"
description = "sshpass -p / docker|az|oc|cf login -p PASSWORD / mongo, mongosh, mongodump, rabbitmqadmin -u USER -p PASSWORD"
source = "sshpass(1); docker login, az login, oc login docs"
anchors = ['''-(?<=[ \t]-)p[ \t]''']
near = ["sshpass", "login", "mongo", "rabbitmqadmin"]
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)-p[ \t]{1,8}<<Q>>(?P<secret>[^\s"'\\`-](?:[^\s"'\\`]|\\\\(?!\\n)){2,255}+)'''
validator = "cli_password"
tp = ["sshpass -p '«{password}»' ssh deploy@10.0.0.5", "docker login -u acme -p «{password}» registry.acme.io", "mongosh -u admin -p '«{password}»' --authenticationDatabase admin"]
fp = ["sshpass -p \"$SSHPASS\" ssh host", "docker login -u acme -p $(cat pw) r"]

[[rule]]
id = "password-piped-to-stdin"
kind = "password"
category = "password"
description = "A literal echoed into a command that reads a password from stdin: echo 'pw' | sudo -S …, echo pw | docker login --password-stdin"
source = "sudo(8) -S; docker login docs (--password-stdin)"
anchors = ['''-(?<=[ \t]-)S[ \t]''']
lower_anchors = ['''password-stdin''']
near = ["echo", "printf"]
lead = '''A-Za-z0-9_.,:/@%$!#*+=~^?'"\\ \t|-'''
lead_max = 200
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?:echo(?:[ \t]{1,4}-[ne]{1,2})?|printf)[ \t]{1,4}<<Q>>(?P<secret>[^\s"'`\\|;&$]{4,128}+)<<Q>>[ \t]{0,4}\|[ \t]{0,4}(?:sudo[ \t]{1,4}(?:-[A-Za-z]{1,8}[ \t]{1,4}){0,4}-S[ \t]|[^|\n"]{0,160}?--password-stdin)'''
validator = "password"
tp = ["echo '«Xk9#{alnum:8}»' | sudo -S apt-get update", "echo «{alnum:10}7» | docker login -u acme --password-stdin registry.acme.io"]
fp = ["echo \"$REGISTRY_PASSWORD\" | docker login -u acme --password-stdin", "echo hunter2 | sudo -S true", "ls -S | head"]

[[rule]]
id = "secret-piped-to-a-secret-store"
kind = "generic_secret"
category = "generic"
description = "A literal echoed into a command that stores it as a secret: echo 'v' | gh secret set NAME, | docker secret create, | wrangler secret put, | gcloud secrets create / versions add"
source = "GitHub CLI (gh secret set reads the value from stdin), Docker (docker secret create NAME -), Cloudflare Wrangler (secret put), Google Cloud CLI (--data-file=-)"
lower_anchors = ['''cret[ \t]{1,4}(?:set|create|put)[ \t]''', '''crets[ \t]{1,4}(?:create|versions[ \t]{1,4}add)[ \t]''']
near = ["echo", "printf"]
lead = '''A-Za-z0-9_.,:/@%$!#*+=~^?'"\\ \t|-'''
lead_max = 480  # the value, up to 400 characters, and the command's words (`near` looks 512 back)
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?:echo(?:[ \t]{1,4}-[ne]{1,2})?|printf(?:[ \t]{1,4}<<Q>>%s<<Q>>)?)[ \t]{1,4}<<Q>>(?P<secret>[^\s"'`\\|;&$]{8,400}+)<<Q>>[ \t]{0,4}\|[ \t]{0,4}(?:(?:npx[ \t]{1,4})?wrangler[ \t]{1,4}(?:pages[ \t]{1,4})?secret[ \t]{1,4}put|gh[ \t]{1,4}secret[ \t]{1,4}set|docker[ \t]{1,4}secret[ \t]{1,4}create|gcloud[ \t]{1,4}secrets[ \t]{1,4}(?:create|versions[ \t]{1,4}add))[ \t]'''
validator = "secret"
tp = ["echo \"«{alnum:32}»\" | gh secret set API_TOKEN", "echo -n '«Xk9#{alnum:10}»' | docker secret create db_password -", "printf \"%s\" \"«{token:40}»\" | npx wrangler secret put STRIPE_KEY", "echo -n «{alnum:24}» | gcloud secrets versions add db-password --data-file=-"]
fp = ["echo \"$API_TOKEN\" | gh secret set API_TOKEN", "echo done | gh secret set --help", "echo \"${{{{ secrets.TOKEN }}}}\" | gh secret set TOKEN"]

[[rule]]
id = "secret-store-argument"
kind = "generic_secret"
category = "generic"
description = "A literal given on the command line to a command that stores it as a secret: gh secret set NAME --body 'v' (or -b, after other flags), doppler secrets set NAME 'v'"
source = "GitHub CLI (gh secret set: --body/-b), Doppler CLI (secrets set NAME VALUE)"
lower_anchors = ['''cret[ \t]{1,4}set[ \t]''', '''crets[ \t]{1,4}set[ \t]''']
lead = '''A-Za-z \t'''
lead_max = 24
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?:gh[ \t]{1,4}secret[ \t]{1,4}set[ \t]{1,4}[A-Za-z_][A-Za-z0-9_]{0,127}+(?:[ \t]{1,4}--?(?!b(?:ody)?\b)[a-z][a-z-]{0,19}+(?:[ \t]{1,4}|=)[^\s"'`\\-][^\s"'`\\]{0,200}+){0,3}+[ \t]{1,4}(?:--body|-b)(?:[ \t]{1,4}|=)?|doppler[ \t]{1,4}secrets[ \t]{1,4}set[ \t]{1,4}[A-Za-z_][A-Za-z0-9_]{0,127}+[ \t]{1,4})<<Q>>(?P<secret>[^\s"'`\\|;&$<>-][^\s"'`\\$]{7,399}+)<<Q>>'''
validator = "secret"
tp = ["gh secret set NPM_TOKEN --body \"«{alnum:36}»\"", "gh secret set DB_PASSWORD --repo acme/api -b '«Xk9&{alnum:10}»'", "gh secret set STRIPE_KEY --env prod --body=«{token:40}»", "doppler secrets set STRIPE_SECRET «{alnum:32}»"]
fp = ["gh secret set NPM_TOKEN --body \"$NPM_TOKEN\"", "gh secret set NPM_TOKEN --body-file .env.production", "gh secret set --help", "gh secret set NPM_TOKEN < token.txt", "doppler secrets set API_KEY"]

[[rule]]
id = "user-password-commands"
kind = "password"
category = "password"
description = "A user's password given to an account command: `htpasswd -b[c] [FILE] USER PASSWORD`, `rabbitmqctl add_user|change_password USER PASSWORD`"
source = "Apache htpasswd(1); RabbitMQ rabbitmqctl(8)"
anchors = ['''_user[ \t]''', '''_password[ \t]''']
lower_anchors = ['''passwd[ \t]{1,4}-''']
lead = "a-z \t"
lead_max = 20
# flags in one cluster or several, `-b` among them (`-bc`, `-b -c`, `-B -C 10 -b`); the user never starts with `-`
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?:htpasswd(?:[ \t]{1,4}-[A-Za-z]{1,4}(?:[ \t]{1,4}[0-9]{1,3})?){0,4}?[ \t]{1,4}-[A-Za-z]{0,4}b[A-Za-z]{0,4}(?:[ \t]{1,4}-[A-Za-z]{1,4}(?:[ \t]{1,4}[0-9]{1,3})?){0,4}[ \t]{1,4}(?:[^\s-][^\s]{0,255}[ \t]{1,4})?|rabbitmqctl[ \t]{1,4}(?:add_user|change_password)[ \t]{1,4})<<Q>>[^\s"'`-][^\s"'`]{0,63}<<Q>>[ \t]{1,4}<<Q>>(?P<secret>[^\s"'\\`]{4,128})'''
validator = "cli_password"
tp = [
  "htpasswd -bc /etc/nginx/.htpasswd admin «{password}»",
  "htpasswd -nb deploy '«{password}»'",
  "htpasswd -b -c .htpasswd admin «{password}»",
  "htpasswd -B -C 12 -b /etc/nginx/.htpasswd ops «{password}»",
  "rabbitmqctl add_user bob «{password}»",
  "sudo rabbitmqctl change_password bob '«{password}»'",
]
fp = ["htpasswd -b .htpasswd admin \"$ADMIN_PASSWORD\"", "rabbitmqctl add_user bob $RABBIT_PASS", "passwd -l deploy-user"]

[[rule]]
id = "chpasswd-input"
kind = "password"
category = "password"
description = "A password echoed into chpasswd: `echo 'USER:PASSWORD' | sudo chpasswd`"
source = "chpasswd(8)"
lower_anchors = ['''chpasswd''']
lead = "!-~ \t"
lead_max = 200
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)echo[ \t]{1,4}(?:-e[ \t]{1,4})?<<Q>>[A-Za-z0-9_.-]{1,32}:(?P<secret>[^\s"'\\`:]{4,128})<<Q>>[ \t]{0,4}\|[ \t]{0,4}(?:sudo[ \t]{1,4})?chpasswd'''
validator = "cli_password"
tp = ["echo 'deploy:«{password}»' | sudo chpasswd", "echo bob:«Xk9#{alnum:8}» | chpasswd"]
fp = ["echo \"$USER:$PASS\" | chpasswd"]

[[rule]]
id = "passphrase-flags"
kind = "password"
category = "password"
description = "A password or passphrase given to an encrypting or directory command: `zip -P PW`, `7z -pPW`, `gpg --passphrase PW`, `ssh-keygen -P OLD`, `openssl enc -k PW`, `smbclient -U USER%PW`, `ldapsearch -w PW` (the first such flag of a command: `ssh-keygen -N NEW` has a rule of its own)"
source = "zip(1), 7z(1), gpg(1), ssh-keygen(1), openssl-enc(1), smbclient(1), ldapsearch(1) and the other OpenLDAP tools"
anchors = ['''-(?<=[ \t]-)P[ \t]''', '''-(?<=[ \t]-)p[^\s-]''', '''--passphrase''', '''-(?<=[ \t]-)k[ \t]''', '''-(?<=[ \t]-)U[ \t]''', '''-(?<=[ \t]-)w[ \t]''']
near = ["zip", "7z", "gpg", "ssh-keygen", "openssl", "smbclient", "ldap"]
lead = '''A-Za-z0-9_.,:/@%=+~^!#$*?(){}\[\]<>'"\\ \t-'''
lead_max = 200
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?:zip[ \t]<<CMD_ARGS>>-P[ \t]{1,8}|7za?[ \t]<<CMD_ARGS>>-p|gpg2?[ \t]<<CMD_ARGS>>--passphrase(?:[ \t]{1,8}|=)|ssh-keygen[ \t]<<CMD_ARGS>>-P[ \t]{1,8}|openssl[ \t]<<CMD_ARGS>>-k[ \t]{1,8}|smbclient[ \t]<<CMD_ARGS>>-U[ \t]{1,8}<<Q>>[^\s%'"\\]{1,64}%|ldap[a-z]{2,8}[ \t]<<CMD_ARGS>>-w[ \t]{1,8})<<Q>>(?P<secret>[^\s"'\\`-][^\s"'\\`]{2,255})'''
validator = "cli_password"
tp = [
  "zip -r -P «{password}» backup.zip data/",
  "7z a -p«{password}» -mhe=on secrets.7z .env",
  "gpg --batch --yes --passphrase '«{password}»' -d vault.gpg",
  "ssh-keygen -p -P «{password}» -f ~/.ssh/deploy",
  "openssl enc -aes-256-cbc -salt -k «{password}» -in db.sql -out db.sql.enc",
  "smbclient //fs01/share -U admin%«{password}» -c ls",
  "ldapsearch -x -H ldap://dc01 -D cn=admin,dc=corp -w «{password}» -b dc=corp",
  "ldapmodify -D 'cn=admin,dc=corp' -w '«{password}»' -f change.ldif",
]
fp = [
  "ssh-keygen -t ed25519 -N '' -f ~/.ssh/id",
  "gpg --batch --passphrase-fd 0 -d f.gpg",
  "7z x archive.7z -p && zip -P \"$ZIP_PASSWORD\" out.zip f",
  "openssl enc -d -aes-256-cbc -k $KEY -in a",
  "ldapsearch -x -D cn=admin,dc=corp -W -b dc=corp",
  "ldapwhoami -x -w \"$LDAP_PASSWORD\"",
  "grep -w token src/",
]

[[rule]]
id = "spaced-app-password"
kind = "password"
category = "password"
description = "A Google app password as shown, four groups of four letters, after a password's name or in prose: `EMAIL_HOST_PASSWORD = 'qwhz kdpa mxvt rnbe'`, 'the gmail app password is …' (its spaces end every other password rule's value)"
source = "Google Account Help: Sign in with app passwords; Django's EMAIL_HOST_PASSWORD"
# the shape within 40 bytes of the word, checked in the scan (no Python at a `password` without it)
lower_anchors = ['''p(?:ass(?:w(?:or)?d)?|wd)(?=(?:[^\\\n]|\\[^nr]){0,40}?(?<![a-z0-9])[a-z]{4} [a-z]{4} [a-z]{4} [a-z]{4}(?![a-z0-9]))''']
lead = "A-Za-z_"
lead_max = 24
regex = '''(?:(?<![A-Za-z])|<<AFTER_ESCAPE>>)(?i:p(?:ass(?:w(?:or)?d)?|wd))(?:[A-Za-z0-9_.-]{0,24}+(?:\\{0,8}["'`])?[ \t]{0,4}(?:[:=]{1,2}|=>)|(?:[ \t][A-Za-z]{1,16}){0,4}[ \t](?:is|was)(?:[ \t]{0,4}:)?)[ \t]{0,4}(?:\\{0,8}["'`])?(?P<secret>[A-Za-z]{4} [A-Za-z]{4} [A-Za-z]{4} [A-Za-z]{4})(?![A-Za-z0-9])'''
validator = "spaced_app_password"
tp = [
  "EMAIL_HOST_PASSWORD = '«qwhz kdpa mxvt rnbe»'",
  "smtp:\n  password: \"«hzqk vbnm tdxr plwq»\"",
  "my gmail app password is «xkcd wqpz rbnm tvgh», use it for the mailer",
  "SMTP_PASS=«bzvq mtrx kjdh qwpn»",
]
fp = [
  "password: just some text here",
  "EMAIL_HOST_PASSWORD = 'abcd efgh ijkl mnop'",
  "EMAIL_HOST_PASSWORD = 'xxxx xxxx xxxx xxxx'",
  "the password is your app password from google",
  "password reset: send mail then wait",
]

[[rule]]
id = "sql-identified-by"
kind = "password"
category = "password"
description = "A database user's password in SQL: `CREATE USER 'app'@'%' IDENTIFIED BY 'PW'`, `ALTER USER app IDENTIFIED BY \"PW\"` (MySQL, MariaDB, Oracle), `IDENTIFIED WITH caching_sha2_password BY 'PW'`, old MySQL's `GRANT … TO u IDENTIFIED BY 'PW'`"
source = "MySQL reference manual: CREATE USER, ALTER USER; Oracle SQL reference: CREATE USER"
# a scan of its own, no other scan's literal being in the words; on `fied`, as a literal starting
# with `i` would share a scan with every other `i` anchor (a scan stopping at every `i`)
lower_anchors = ['''fied(?<=identified)[ \t]{1,4}(?:with[ \t]{1,4}[a-z0-9_]{1,64}[ \t]{1,4})?by[ \t]''']
# the statement before it, `USER name`, `ROLE name` or `TO name`, so that prose ("a process
# identified by `pid`") stays
lead = '''A-Za-z0-9_.@%'"`\\ \t-'''
lead_max = 160
regex = '''(?:(?<![A-Za-z])|<<AFTER_ESCAPE>>)(?i:(?:user|role|to)[ \t]{1,4}[^\s;]{1,128}[ \t]{1,4}identified[ \t]{1,4}(?:with[ \t]{1,4}[A-Za-z0-9_]{1,64}[ \t]{1,4})?by)[ \t]{1,4}(?!(?i:password|random)[ \t])<<Q>>(?P<secret>[^\s"'\\`;:?@][^\s"'\\`;]{2,127})'''
validator = "password"
tp = [
  "CREATE USER 'app'@'%' IDENTIFIED BY '«{password}»';",
  "ALTER USER app IDENTIFIED BY «{password}»;",
  "create user reporting identified by \"«{password}»\" default tablespace users;",
  "ALTER USER 'root'@'localhost' IDENTIFIED WITH mysql_native_password BY '«{password}»';",
  "GRANT ALL ON app.* TO 'app'@'localhost' IDENTIFIED BY '«{password}»';",
]
fp = [
  "CREATE USER 'app'@'%' IDENTIFIED BY '${DB_PASSWORD}';",
  "ALTER USER app IDENTIFIED BY :new_password;",
  "CREATE USER ops IDENTIFIED EXTERNALLY;",
  "CREATE USER 'u'@'%' IDENTIFIED BY RANDOM PASSWORD;",
  "the users identified by their email",
  "Steal a handle from process identified by `source_pid`",
  "reports this record to the user identified by `nodeUid2024` when assigned",
  "API operation identified by `operationId`",
]

[[rule]]
id = "ssh-keygen-new-passphrase"
kind = "password"
category = "password"
description = "The new passphrase of a key made or changed by ssh-keygen: `ssh-keygen -N PW`, also after `-P OLD`"
source = "ssh-keygen(1)"
anchors = ['''-(?<=[ \t]-)N[ \t]''']
near = ["ssh-keygen"]
lead = '''A-Za-z0-9_.,:/@%=+~^!#$*?(){}\[\]<>'"\\ \t-'''
lead_max = 200
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)ssh-keygen[ \t]<<CMD_ARGS>>-N[ \t]{1,8}<<Q>>(?P<secret>[^\s"'\\`-][^\s"'\\`]{2,255})'''
validator = "cli_password"
tp = ["ssh-keygen -t ed25519 -N «{password}» -f ~/.ssh/deploy", "ssh-keygen -p -f ~/.ssh/id_ed25519 -N '«{password}»'"]
fp = ["ssh-keygen -t ed25519 -N '' -f ~/.ssh/id", "ssh-keygen -N \"$KEY_PASSPHRASE\" -f id"]

[[rule]]
id = "redis-requirepass"
kind = "password"
category = "password"
description = "Redis's password directives: `requirepass PW` and `masterauth PW` in redis.conf, `CONFIG SET requirepass PW`, `redis-server --requirepass PW`"
source = "Redis docs: redis.conf (security), CONFIG SET"
lower_anchors = ['''pass(?<=requirepass)[ \t]''', '''auth(?<=masterauth)[ \t]''']
lead = "a-z"
lead_max = 8
regex = '''(?:(?<![A-Za-z0-9_])|<<AFTER_ESCAPE>>)(?i:requirepass|masterauth)[ \t]{1,8}<<Q>>(?P<secret>[^\s"'\\`]{3,256})'''
validator = "password"  # not redis.conf's own example, `foobared`
tp = ["requirepass «{password}»", "redis-cli CONFIG SET requirepass '«{password}»'", "redis-server --requirepass «{password}» --port 6380", "masterauth «{password}»"]
fp = ["# requirepass foobared", "requirepass ${REDIS_PASSWORD}", "the requirepass option sets a password"]

[[rule]]
id = "wifi-psk"
kind = "password"
category = "password"
description = "A Wi-Fi network's pre-shared key: `psk=\"…\"` in wpa_supplicant.conf and NetworkManager, `wpa_psk=` in hostapd.conf (a passphrase of 8-63 characters or 64 hex)"
source = "wpa_supplicant.conf(5); hostapd.conf; NetworkManager settings (802-11-wireless-security)"
lower_anchors = ['''psk(?:\\{0,8}["'])?[ \t]{0,4}[:=]''']
lead = "A-Za-z_-"
lead_max = 8
regex = '''(?:(?<![A-Za-z0-9])|<<AFTER_ESCAPE>>)(?:(?i:wpa)[_-]?)?(?i:psk)(?:\\{0,8}["'])?[ \t]{0,4}[:=][ \t]{0,4}<<Q>>(?P<secret>[0-9a-fA-F]{64}(?![^\s"'\\`])|[^\s"'\\`]{8,63}(?![^\s"'\\`]))'''
validator = "password"
tp = ['network={{\n  ssid="home"\n  psk="«{password}»"\n}}', "wpa_psk=«{hex:64}»", "psk=«{password}»"]
fp = ['psk=hunter2', "psk = derive_psk(passphrase, ssid)", "psk: ${WIFI_PSK}", 'psk="correcthorsebatterystaple"']

[[rule]]
id = "password-flag"
kind = "password"
category = "password"
description = "--password PW / --password=PW / --db-password PW / -password PW / --encryption-passphrase PW"
source = "GNU option syntax; many CLIs (mysql, psql wrappers, keytool, openssl, restic, duplicity)"
lower_anchors = ['''p(?:ass(?:w(?:or)?d|phrase)?|wd)(?:[ \t]{1,8}|=)(?:\\{0,8}["'])?[^\s"'\\`-]''']
lead = "a-zA-Z"
lead_max = 12
regex = '''(?<=-)[A-Za-z]{0,12}(?i:pass(?:word|wd|phrase)?|pwd)(?:[ \t]{1,8}|=)<<Q>>(?P<secret>[^\s"'\\`-](?:[^\s"'\\`]|\\\\(?!\\n)){2,255}+)'''
validator = "password"
tp = ["--password «{password}»", "./manage.py createsuperuser --username admin --password=«{password}»", "keytool -storepass «{password}» -keystore k.jks", "restic backup --encryption-passphrase «{password}» /data", "age-keygen | tool --passphrase=«{password}» seal"]
fp = ["docker login --password-stdin", "--password $DB_PASSWORD", "--password '<your password>'", "gpg --passphrase-file ~/.config/pw -d vault.gpg", 'restic backup --encryption-passphrase "$RESTIC_PASSPHRASE" /data']

[[rule]]
id = "sqlcmd-password-flag"
kind = "password"
category = "password"
description = "sqlcmd/bcp/osql -P PASSWORD"
source = "sqlcmd utility docs: -P password"
anchors = ['''-(?<=[ \t]-)P[ \t]''']
near = ["sqlcmd", "bcp", "osql"]
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)-P[ \t]{1,8}<<Q>>(?P<secret>[^\s"'\\`-](?:[^\s"'\\`]|\\\\(?!\\n)){2,255}+)'''
validator = "cli_password"
tp = ["sqlcmd -S db.internal -U sa -P «{password}» -Q 'select 1'"]
fp = ["sqlcmd -S db -U sa -P $SA_PASSWORD -Q 'select 1'"]

[[rule]]
id = "redis-cli-password-flag"
kind = "password"
category = "password"
description = "redis-cli / valkey-cli -a PASSWORD"
source = "redis-cli docs: -a password"
anchors = ['''-(?<=[ \t]-)a[ \t]''']
near = ["redis-cli", "valkey-cli", "redis-benchmark", "keydb-cli"]
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)-a[ \t]{1,8}<<Q>>(?P<secret>[^\s"'\\`-](?:[^\s"'\\`]|\\\\(?!\\n)){2,255}+)'''
validator = "cli_password"
tp = ["redis-cli -h cache.internal -a «{password}» ping"]
fp = ["redis-cli -h cache -a \"$REDIS_PASSWORD\" ping"]

[[rule]]
id = "uri-flag-password"
kind = "password"
category = "password"
description = "mysqlsh --uri user:password@host (a URI without a scheme)"
source = "MySQL Shell docs: connecting using URI-like strings"
prefixes = ["--uri"]
regex = '''--uri(?:[ \t]{1,8}|=)<<Q>>[^\s:@"'\\/]{1,128}:(?P<secret>[^\s"'\\`]{1,256})@(?=[A-Za-z0-9\[])'''
validator = "url_password"
tp = ["mysqlsh --uri root:«{password}»@db.internal:3306"]
fp = ["mysqlsh --uri root@db.internal:3306"]

[[rule]]
id = "openssl-pass-arg"
kind = "password"
category = "password"
description = "OpenSSL pass phrase argument pass:PASSWORD"
source = "openssl-passphrase-options(1)"
lower_anchors = ['''pass:''']
regex = '''(?<=[\s"'=])pass:(?P<secret>[^\s"'\\`]{3,256})'''
validator = "cli_password"
tp = ["openssl pkcs12 -export -passout pass:«{password}» -out cert.p12"]
fp = ["openssl rsa -passin pass:$PASS", "openssl rsa -passin env:PASS"]

[[rule]]
id = "powershell-securestring"
kind = "password"
category = "password"
description = "PowerShell ConvertTo-SecureString with a plain-text password"
source = "PowerShell docs: ConvertTo-SecureString -AsPlainText"
prefixes = ["ConvertTo-SecureString"]
regex = '''ConvertTo-SecureString[ \t]{1,8}(?:-String[ \t]{1,8})?\\{0,8}["'](?P<secret>[^"'\\]{3,256})\\{0,8}["']'''
validator = "cli_password"
tp = ['''$pw = ConvertTo-SecureString "«{password}»" -AsPlainText -Force''']
fp = ['''ConvertTo-SecureString $env:PW -AsPlainText''']

# ============================================================================ config files

[[rule]]
id = "pgpass-line"
kind = "password"
category = "password"
description = "PostgreSQL password file line host:port:database:user:password"
source = "PostgreSQL docs: The Password File (.pgpass)"
context = ["pgpass"]
window = 4
regex = '''<<LINE_START>>[A-Za-z0-9*._\[\]-]{1,128}:(?:[0-9]{1,5}|\*):[A-Za-z0-9*._$-]{1,64}:[A-Za-z0-9*._@$-]{1,64}:(?P<secret>[^\s:"\\]{3,256})(?=\\[nr]|\n|\r|"|\\u001b|$)'''
validator = "cli_password"
tp = ["$ cat ~/.pgpass\ndb.internal:5432:app:app_user:«{password}»\n*:*:*:postgres:«{password}»"]
fp = ["12:30:00:00:ok is not in a pgpass file"]

[[rule]]
id = "xml-password-attribute"
kind = "password"
category = "password"
description = "XML key/value password: NuGet ClearTextPassword, appSettings <add key=\"…Password\" value=\"…\"/>"
source = "NuGet docs: packageSourceCredentials ClearTextPassword; gitleaks nuget-config-password (MIT)"
lower_anchors = ['''password\\{0,8}"[ \t]{1,8}value=''', '''passwd\\{0,8}"[ \t]{1,8}value=''']
lead = "A-Za-z0-9_.-"
lead_max = 64
regex = '''(?:(?<![A-Za-z0-9_.-])|<<AFTER_ESCAPE>>)(?i:[A-Za-z0-9_.-]{0,64}pass(?:word|wd))\\{0,8}"[ \t]{1,8}value=\\{0,8}"(?P<secret>[^"\\]{4,256})\\{0,8}"'''
validator = "cli_password"
tp = ['''<add key="ClearTextPassword" value="«{password}»" />''']
fp = ['''<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />''']

[[rule]]
id = "xml-password-element"
kind = "password"
category = "password"
description = "XML element <password>…</password> (Maven settings.xml, ClearTextPassword elements)"
source = "Maven docs: settings.xml servers"
lower_anchors = ['''password>''', '''passwd>''']
lead = "A-Za-z0-9_.:<-"
lead_max = 64
regex = '''<[A-Za-z0-9_.:-]{0,64}(?i:pass(?:word|wd))>(?:[ \t]|\\[nrt]|\n|<<READ_NUMBER>>){0,32}(?P<secret>[^<\s"\\]{4,256})(?:[ \t]|\\[nrt]|\n|<<READ_NUMBER>>){0,32}</'''
validator = "cli_password"
tp = ["<server><id>nexus</id><username>ci</username><password>«{password}»</password></server>", "<ClearTextPassword>«{password}»</ClearTextPassword>"]
fp = ["<password>${env.PASSWORD}</password>"]

[[rule]]
id = "xml-short-password-element"
kind = "password"
category = "password"
description = "XML element named by a short password word: <db_pass>, <passphrase>, <adminPwd>; a value that reads as a word is left (`<render_pass>shadow`: a pass is not always a password)"
source = "Maven docs: settings.xml servers (the element form); application config files"
lower_anchors = ['''pass>''', '''passphrase>''', '''pwd>''']
lead = "A-Za-z0-9_.:<-"
lead_max = 64
regex = '''<(?:(?:[A-Za-z0-9_.:-]{0,63}[_.:-])?(?i:pass(?:phrase)?|pwd)|[A-Za-z0-9_.:-]{0,63}[a-z0-9](?:Passphrase|Pwd))>(?:[ \t]|\\[nrt]|\n|<<READ_NUMBER>>){0,32}(?P<secret>[^<\s"\\]{4,256})(?:[ \t]|\\[nrt]|\n|<<READ_NUMBER>>){0,32}</'''
validator = "password"
tp = ["<db_pass>«{password}»</db_pass>", "<passphrase>«{password}»</passphrase>", "<adminPwd>«{password}»</adminPwd>", "<keystore_pass>\n  «{password}»\n</keystore_pass>"]
fp = ["<db_pass>${DB_PASS}</db_pass>", "<bypass>localhost</bypass><compass>north</compass><first_pass>true</first_pass>", "<render_pass>shadow</render_pass><firstPass>enabled</firstPass>"]

[[rule]]
id = "xml-secret-element"
kind = "generic_secret"
category = "generic"
description = "XML element named like a key, token or secret, value on its own line or inline, or wrapped in braces (Jenkins credentials.xml)"
source = "gitleaks GenerateSampleSecrets 'xml - element multiline' (MIT)"
lower_anchors = ['''ken>''', '''cret>''', '''key>''']
lead = "A-Za-z0-9_.:<-"
lead_max = 64
yields = 16  # the element's text starts right after its `key>`: a span another rule found there is it
name = '''<<SECRET_NAME>>'''
regex = '''<(?P<name>[A-Za-z0-9_.:-]{1,64}+)>(?:[ \t]|\\[nrt]|\n|<<READ_NUMBER>>){0,32}(?P<secret>\{(?=[^{}<>\n\\]{0,512}[A-Za-z0-9+/=_-]{16})[^{}<>\n\\]{8,1024}\}|[^<\s"\\]{8,4096})(?:[ \t]|\\[nrt]|\n|<<READ_NUMBER>>){0,32}</'''
validator = "secret"
tp = [
  "<apiToken>\n    «{alnum:32}»\n</apiToken>",
  # a Jenkins credentials.xml secret: braces around the (encrypted) value, spaces inside them
  "<scope>GLOBAL</scope>\n<secret>«{{acme AQAAABAAA {alnum:40}}}»</secret>",
]
fp = ["<primaryKey>id</primaryKey>", "<secret>{the value goes here}</secret>"]

# ============================================================================ passwords and generic assignments

[[rule]]
id = "password-call-argument"
kind = "password"
category = "password"
description = "A password passed by name to a call: define('DB_PASSWORD', '…'), System.setProperty(\"db.password\", \"…\")"
source = "gitleaks GenerateSampleSecrets 'misc - comma operator' (MIT); WordPress docs: wp-config.php"
lower_anchors = ['''p(?:ass(?:w(?:or)?d|phrase)?|wd?)[a-z0-9_.-]{0,24}\\{0,8}["'][ \t]{0,4},''']
lead = '''A-Za-z0-9_.(\\"' -'''
name = '''<<PW_NAME>>'''
regex = '''<<CALL_OPEN>>(?P<name>[A-Za-z0-9_.-]{1,128}+)<<CALL_SEP>><<CALL_VALUE>>'''
validator = "password"
tp = ['''define('DB_PASSWORD', '«{password}»');''', '''System.setProperty("DB_PASSWORD", "«{password}»")''']
fp = ['''__all__ = ["splitpasswd", "splitport", "splituser"]''', '''getenv("DB_PASSWORD", "")''']

[[rule]]
id = "generic-secret-call-argument"
kind = "generic_secret"
category = "generic"
description = "A key, token or secret passed by name to a call: System.setProperty(\"API_TOKEN\", \"…\")"
source = "gitleaks GenerateSampleSecrets 'misc - comma operator' (MIT)"
lower_anchors = ['''ke[yn][a-z0-9_-]{0,12}\\{0,8}["'][ \t]{0,4},''', '''cre(?:t|ds|dentials?)[a-z0-9_.-]{0,24}\\{0,8}["'][ \t]{0,4},''']
lead = '''A-Za-z0-9_.(\\"' -'''
yields = 16  # the value follows the name's `", "`: a span another rule found there is it
name = '''<<SECRET_NAME>>'''
regex = '''<<CALL_OPEN>>(?P<name>[A-Za-z0-9_.-]{1,128}+)<<CALL_SEP>><<CALL_VALUE>>'''
validator = "secret"
tp = ['''System.setProperty("API_TOKEN", "«{alnum:32}»")''', '''os.environ.setdefault("SECRET_KEY", "«{alnum:40}»")''']
fp = ['''__all__ = ['RC2_KEY', 'rc2_key_st', 'AES_KEY']''', '''setattr(self, "api_key", api_key_value)''']

[[rule]]
id = "auth-pair-argument"
kind = "password"
category = "password"
description = "A user and a password passed together to an HTTP client or a credential object: requests' auth=(\"user\", \"…\"), HTTPBasicAuth, HTTPDigestAuth and aiohttp's BasicAuth(\"user\", \"…\"), .NET's NetworkCredential(\"user\", \"…\"), client.authenticate(\"user\", \"…\"), UsernamePasswordCredentials(\"user\", \"…\")"
source = "requests docs: Authentication; aiohttp docs: BasicAuth; .NET docs: System.Net.NetworkCredential"
lower_anchors = ['''auth[ \t]{0,4}=[ \t]{0,4}\([ \t]{0,4}\\{0,8}["']''', '''auth(?:enticate)?\([ \t]{0,4}\\{0,8}["']''', '''credentials?\([ \t]{0,4}\\{0,8}["']''']
regex = '''(?i:auth[ \t]{0,4}=[ \t]{0,4}|auth(?:enticate)?|credentials?)<<CALL_OPEN>>[^"'\\\s]{1,128}<<CALL_SEP>><<CALL_VALUE>>'''
validator = "password"
tp = [
  '''requests.get(url, auth=("bob", "«{password}»"))''',
  '''session.auth = HTTPBasicAuth('admin', '«{password}»')''',
  '''var creds = new NetworkCredential("svc-build", "«{password}»");''',
  '''client.authenticate("root", "«{password}»")''',
  '''new UsernamePasswordCredentials("u", "«{password}»")''',
]
fp = ['''auth=("bob", os.environ["PW"])''', '''HTTPBasicAuth(user, password)''', '''new NetworkCredential("svc", "")''', '''auth=("bob", "changeme")''']

[[rule]]
id = "password-setter-call"
kind = "password"
category = "password"
description = "A password given to a setter or a builder: `ds.setPassword(\"…\")`, `.withPassword(\"…\")`, Go's and C#'s `SetPassword(\"…\")`, `User.withUsername(\"u\").password(\"…\")`"
source = "JDBC DataSource, JavaMail, Spring Security's User builder, Testcontainers' withPassword"
lower_anchors = ['''p(?:ass(?:w(?:or)?d|phrase))\([ \t]{0,4}\\{0,8}["']''']
lead = "A-Za-z."
lead_max = 4
regex = '''(?:(?<=\.)|(?<![A-Za-z0-9_]))(?:[Ss]et|[Ww]ith)?(?:[Pp]ass(?:w(?:or)?d|phrase))<<CALL_OPEN>><<CALL_VALUE>>'''
validator = "password"
tp = ['''ds.setPassword("«{password}»");''', '''opts.SetPassword("«{password}»")''', '''redis.WithPassword("«{password}»")''', '''new PostgreSQLContainer<>("postgres:16").withPassword('«{password}»')''', '''User.withUsername("admin").password("«{password}»").build()''']
fp = ['''props.getPassword("db.password")''', '''ds.setPassword(System.getenv("DB_PASSWORD"))''', '''ds.setPassword("${DB_PASSWORD}")''', '''builder.password("changeme")''']

[[rule]]
id = "secret-setter-call"
kind = "generic_secret"
category = "generic"
description = "A key, token or secret given to a setter or a builder: `client.setApiKey(\"…\")`, `.withAuthToken(\"…\")`, `setClientSecret(\"…\")`"
source = "SDK configuration setters (Stripe, SendGrid, Twilio, OAuth clients' Java and C# APIs)"
lower_anchors = ['''key\([ \t]{0,4}\\{0,8}["']''', '''ken\([ \t]{0,4}\\{0,8}["']''', '''cret\([ \t]{0,4}\\{0,8}["']''']
lead = "A-Za-z"
lead_max = 18
regex = '''(?:(?<![A-Za-z0-9_])|<<AFTER_ESCAPE>>)(?:set|with)(?:Api|API|Secret|Access|Auth|Client|Private|Bearer|Bot|App)?(?:Key|Token|Secret)<<CALL_OPEN>><<CALL_VALUE>>'''
validator = "secret"
tp = ['''client.setApiKey("«{alnum:32}»");''', '''Twilio.init(sid).withAuthToken("«{hex:32}»")''', '''oauth.setClientSecret('«{token:40}»')''']
fp = ['''cache.setKey("user_profile_page_v2")''', '''client.setApiKey(System.getenv("STRIPE_KEY"))''', '''req.setToken("<your-token-here>")''', '''map.setKey("settings.display.theme")''']

[[rule]]
id = "declared-default-secret"
kind = "generic_secret"
category = "generic"
description = "A literal default of a declared password or secret: Terraform's `variable \"db_password\" { default = \"…\" }`, CloudFormation's `\"DBPassword\": {\"Type\": \"String\", \"Default\": \"…\"}`"
source = "Terraform input variables; AWS CloudFormation template parameters"
# (the name's quote then the block's brace; not after `key` or `token`: a secret-dense text has a
# `key"` in every line, each a regex call)
lower_anchors = ['''pass(?:word|wd|phrase)?\\{0,8}"[ \t]{0,4}:?[ \t]{0,4}\{''', '''pwd\\{0,8}"[ \t]{0,4}:?[ \t]{0,4}\{''', '''crets?\\{0,8}"[ \t]{0,4}:?[ \t]{0,4}\{''']
lead = "A-Za-z0-9_-"
lead_max = 64
name = '''<<SECRET_NAME>>|<<PW_NAME>>'''
regex = '''(?<=")(?P<name>[A-Za-z0-9_-]{1,64}+)\\{0,8}"[ \t]{0,4}:?[ \t]{0,4}\{(?:[^{}\\]|\\.){0,300}?(?<![A-Za-z0-9_])\\{0,8}"?(?i:default)\\{0,8}"?[ \t]{0,4}[:=][ \t]{0,4}\\{0,8}"(?P<secret>[^"\\\s]{6,256}+)\\{0,8}"'''
validator = "secret"
tp = [
  "variable \"db_password\" {{\n  type      = string\n  sensitive = true\n  default   = \"«Xk9#{alnum:10}»\"\n}}",
  '''"DBPassword": {{"Type": "String", "NoEcho": true, "Default": "«{password}»"}}''',
  "variable \"client_secret\" {{ default = \"«{alnum:32}»\" }}",
]
fp = [
  "variable \"db_password\" {{\n  type      = string\n  sensitive = true\n}}",
  '''"DBPassword": {{"Type": "String", "Default": "{{{{resolve:secretsmanager:db}}}}"}}''',
  "variable \"db_password\" {{ default = \"\" }}",
  "variable \"password_length\" {{ default = \"32\" }}",
]

[[rule]]
id = "shell-default-value"
kind = "password"
category = "password"
description = "A literal default inside a shell or Compose expansion of a secret's variable: `${DB_PASSWORD:-…}`, `${API_TOKEN-…}`, `${SECRET_KEY:=…}` (the expansion is a template, its default is not)"
source = "POSIX shell parameter expansion; Docker Compose interpolation"
anchors = ['''\$\{[A-Za-z_][A-Za-z0-9_]{0,64}+:?[-=]''']
name = '''<<SECRET_NAME>>|<<PW_NAME>>'''
regex = '''\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]{0,64}+):?[-=](?P<secret>[^}\s"'`$\\]{6,256}+)\}'''
# (a default is often a word a local run gets by with: `postgres`, `admin`)
validator = "strict_password"
tp = ['''API_KEY="${{API_KEY:-«{alnum:32}»}}"''', "export DB_PASSWORD=${{DB_PASSWORD:-«Xk9#{alnum:10}»}}", "      POSTGRES_PASSWORD: ${{POSTGRES_PASSWORD:-«{password}»}}", ": ${{SECRET_KEY:=«{token:40}»}}"]
fp = ["POSTGRES_PASSWORD: ${{POSTGRES_PASSWORD:-postgres}}", "${{DB_PASSWORD:-}}", "${{API_KEY:-$DEFAULT_KEY}}", "${{CACHE_KEY:-user_profile_settings_v2}}", "${{LOG_LEVEL:-debug_verbose_1}}", "${{DB_PASSWORD:-changeme}}"]

[[rule]]
id = "password-quoted"
kind = "password"
category = "password"
description = "A quoted value assigned to a password-like name (code, JSON, YAML, XML attributes)"
source = "detect-secrets KeywordDetector tests (Apache-2.0); gitleaks GenerateSampleSecrets contexts (MIT)"
lower_anchors = ['''p(?:ass(?:w(?:or)?d|phrase)?|wd?)[a-z0-9_.-]{0,24}<<SEPA>><<VALA>>''']
lead = "A-Za-z0-9_.-"
name = '''<<PW_NAME>>'''
regex = '''<<NAME>><<SEP>><<QVALUE>>'''
validator = "assigned_password"
tp = [
  '''{{"username": "admin", "password": "«{password}»"}}''',
  "const dbPassword = '«BmCqPzWx»';",
  '''password: "«hunterxyzq»"''',
  "$config['db_pass'] = '«{password}»';",
  '''os.environ["DB_PASSWORD"] = "«{password}»"''',
  "DATABASES['default']['PASSWORD'] = '«{password}»'",
]
fp = [
  '''password: "********"''',
  '''password = "somefakekey"''',
  '''"password": "{{{{ .Values.password }}}}"''',
  '''if password == "":''',
  '''password = "required"''',
  "config['password'] = get_password()",
  '''os.environ["DB_PASSWORD"] = "${DB_PASSWORD}"''',
]

[[rule]]
id = "password-env"
kind = "password"
category = "password"
description = "A bare value assigned to an UPPERCASE password name (env files, shell, Docker -e)"
source = "PostgreSQL docs: PGPASSWORD; MySQL docs: MYSQL_PWD; Docker Hub postgres image: POSTGRES_PASSWORD"
lower_anchors = ['''p(?:ass(?:w(?:or)?d|phrase)?|wd?)[a-z0-9_.-]{0,24}<<SEPA>><<VALA>>''']
lead = "A-Za-z0-9_.-"
name = '''<<UPPER_PW_NAME>>'''
regex = '''<<NAME>>=<<BVALUE>>'''
validator = "assigned_password"
tp = [
  "PGPASSWORD=«{password}» psql -h db.internal -U app",
  "DB_PASSWORD=«{password}»",
  "docker run -e POSTGRES_PASSWORD=«xK9#mQ2z» postgres:16",
  "MYSQL_PWD=«BmCqPzWxLk» mysql -u root",
  "DB_PASSWORD=«Tr0ub4dor&3x{alnum:4}»",
  "SMTP_PW=«{password}»",
]
fp = [
  "password=${DB_PASSWORD}\nPASSWORD=$PASSWORD",
  "PASSWORD_RESET_TIMEOUT=86400",
  # a path on another variable
  "REACT_APP_FORGOT_PASSWORD=$REACT_APP_BASE_URL/classroom/#/forgot_password",
]

[[rule]]
id = "password-yaml"
kind = "password"
category = "password"
description = "A bare value after a password-like key and `: ` (YAML, properties, HTTP-style headers)"
source = "Rails docs: database.yml; Kubernetes docs: Secret stringData"
lower_anchors = ['''p(?:ass(?:w(?:or)?d|phrase)?|wd?)[a-z0-9_.-]{0,24}:[ \t]<<VALA>>''']
lead = "A-Za-z0-9_.-"
name = '''<<PW_NAME>>'''
regex = '''<<NAME>>[ \t]{0,8}:[ \t]{1,8}<<BVALUE>>'''
validator = "password"
tp = ["  password: «{password}»\n  host: db", "db_password: «xK9#mQ2z»", "pw: «J8v7gx&{alnum:6}»", "door_passcode: «{password}»"]
fp = ["password: str = Field(min_length=12)", "password: ${DB_PASSWORD}", "password: required", "pwn: true_if_the_host_is_owned", "pw: str = Field(min_length=12)"]

[[rule]]
id = "password-code"
kind = "password"
category = "password"
description = "A bare value assigned to a password-like name in code: only when it is no identifier"
source = "detect-secrets KeywordDetector tests (Apache-2.0)"
lower_anchors = ['''p(?:ass(?:w(?:or)?d|phrase)?|wd?)[a-z0-9_.-]{0,24}<<SEPA>><<VALA>>''']
lead = "A-Za-z0-9_.-"
name = '''<<PW_NAME>>'''
regex = '''<<NAME>><<SEP>><<BVALUE>>'''
validator = "strict_password"
tp = ['db_pass := "«secret12345678»"', "db_pass := «{password}»", "spring.datasource.password=«{password}»", "Server=db;Database=app;User Id=sa;Password=«{password}»;"]
fp = [
  # a page anchor and a Rails route's controller#action, named in words
  '''this.addPassword = "#add-password";''',
  '''put '/forgot-password' => "cms/sites/passwords#update", as: 'update_password'''',
  "password = settings.DATABASES['default']['PASSWORD']",
  "password = getpass.getpass()",
  "password = request.form",
  "self.password = password_hash",
]

[[rule]]
id = "password-prose"
kind = "password"
category = "password"
description = "A password named in prose, a config line without `=` or a table's row: 'the staging password is …', .netrc `password …`, `| password | … |`"
source = ".netrc (GNU inetutils ftp manual); detect-secrets KeywordDetector tests (Apache-2.0)"
lower_anchors = ['''p(?:assw(?:or)?d|ass(?:phrase|code)|wd)s?[ \t]''', '''p(?:ass|w)[ \t]{1,4}(?:is|was)[ \t]''']
# ('for the admin account' is tried after the shorter reading: 'password to X and log in again</td>'
# would take `again</td>` as the value, which the validator refuses, and lose X)
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?i:password|passwd|passphrase|passcode|pwd|(?:pass|pw)(?=[ \t]{1,4}(?:is|was)[ \t]))s?(?:[ \t]{1,4}(?:for|of|on|to)(?:[ \t]{1,4}[^\s"\\]{1,40}?){1,4}?)??(?:[ \t]{1,4}(?i:(?:is|was|has been|got) (?:set|changed|reset|updated) to|is|was|are|->|→|-|–|—|becomes|(?:set|changed|reset|updated) to|now is|is now|to|should be|will be|must be):?|[ \t]{1,16}\|)?[ \t]{1,8}<<Q>>(?P<secret>[^\s"'\\`]{8,128}?)<<PROSE_END>>'''
validator = "strict_password"
tp = [
  "the staging password is «El2h{alnum:8}»",
  "machine api.heroku.com\n  login me@acme.io\n  password «{password}»",
  "The password for the admin account is «{password}».",
  "Use passphrase «BmCqPzWxLkTr» to unlock it",
  "the db pass is «Xk9#{alnum:8}», same as staging",
  "the password is: «Summer{digits:4}» for now",
  "the alarm passcode is «Xk9#{alnum:8}»",
  "| user | admin |\n| password | «{password}» |",
  "set the password to «Xk9#{alnum:8}» and log in again",
  "the password should be «{password}»",
  "my pw is «Xk9#{alnum:8}»",
  "the admin password was changed to «{password}» yesterday",
  "the root password is set to «Xk9#{alnum:8}» on the new box",
  "- staging password - «{password}»",
]
fp = [
  "the password is stored in Vault",
  "password reset flow sends an email",
  "passwords are hashed with argon2id",
  "the password is at least 12 characters",
  "pass the --no-verify flag",
  "the second pass is significantly faster",
  "echo $password | base64 --decode",
  "reset the password to default and log in",
  "the password should be at least twelve characters",
  "the pw is in the usual place",
  "password - required, at least twelve characters",
  "the password was changed to something stronger",
]

[[rule]]
id = "password-prose-quoted"
kind = "password"
category = "password"
description = "A password a sentence quotes: 'the default password is \"blooberry\"', \"ensure the password for user 'postgres' is 'admin'\""
source = "Nosey Parker's generic password rule examples (Apache-2.0): README sentences quoting a default password"
# (on password-prose's anchors; the quotes mark the value, so a word or a four-letter one counts)
lower_anchors = ['''p(?:assw(?:or)?d|ass(?:phrase|code))s?[ \t]''']
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?i:password|passwd|passphrase|passcode)s?(?:[ \t]{1,4}(?:for|of|on|to)(?:[ \t]{1,4}(?:[^\s\\]|\\{1,8}["']){1,40}?){1,4}?)??[ \t]{1,4}(?i:is|was|should be|must be|(?:is|was) (?:set|changed|reset) to):?[ \t]{1,4}(?P<q>\\{0,8}["'])(?P<secret>[^\s"'\\`]{4,64}+)(?P=q)'''
validator = "quoted_password"
tp = [
  "The default Password is '«blooberry»'",
  "ensure the password is \"«centipede»\" and press the On button",
  "2. Ensure the password for user 'postgres' is '«admin»' or change .env file.",
  "The default password for the user \"demo-user\" is \"«pyne»\".",
]
fp = [
  "the password is 'invalid'",
  "the password is \"None\" when unset",
  "the password is '${DB_PASSWORD}'",
  "the password is 'DB_PASSWORD' in the env",
  "the password is 'changeme' by default",
  "the password is \"\"",
]

[[rule]]
id = "password-other-languages"
kind = "password"
category = "password"
description = "A password named in German, Spanish, French or Dutch, in prose or as `word: value`: 'das Passwort ist …', 'Kennwort: …', 'la contraseña es …', 'le mot de passe est …', 'het wachtwoord is …'"
source = "the word for password in those languages (a team's chat with its assistant is in its own language)"
# each word holds a scan's key (`p`, `c`, `ke`), so no pass over the text is added; words without
# one (Portuguese `senha`, Polish `hasło`, Cyrillic and CJK words) would each cost a pass
lower_anchors = ['''passwort''', '''kennwort''', '''mot de passe''', '''contrase''', '''wachtwoord''']
# `ñ` raw or as JSON's `\u00f1`; 'für den Server', 'para el servidor', 'pour le serveur', 'voor de server'
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?i:passwort|kennwort|mot de passe|contrase(?:ñ|Ñ|\\u00f1|\\u00d1|n)a|wachtwoord)(?:[ \t]{1,4}(?i:für|f\\u00fcr|fuer|von|des|del|de|para|pour|du|voor|van)(?:[ \t]{1,4}[^\s"\\]{1,40}?){1,4}?)??(?:[ \t]{0,4}[:=][ \t]{0,8}|[ \t]{1,4}(?i:ist|lautet|war|es|era|est|était|\\u00e9tait|is|was|wordt)(?:[ \t]{0,4}:)?[ \t]{1,8})<<Q>>(?P<secret>[^\s"'\\`]{8,128}?)<<PROSE_END>>'''
validator = "strict_password"
tp = [
  "Passwort: «{password}»",
  "das Passwort für den Server ist «Xk9#{alnum:8}»",
  "Das neue Kennwort lautet «{password}».",
  "la contraseña es «{password}»",
  "CONTRASEÑA: «Xk9#{alnum:8}»",
  "la contraseña para el servidor es «{password}»",
  "le mot de passe est «{password}»",
  "Mot de passe : «Xk9#{alnum:8}»",
  "het wachtwoord is «{password}»",
  "wachtwoord voor de server: «{password}»",
]
fp = [
  "das Passwort ist geheim",
  "Passwort vergessen? Dann hier klicken",
  "la contraseña es obligatoria",
  "le mot de passe est trop court",
  "wachtwoord: ${{DB_WACHTWOORD}}",
  "Passwort: <dein-passwort>",
]

[[rule]]
id = "credential-pair-prose"
kind = "password"
category = "password"
description = "A user and password named together in prose: 'the staging creds are admin / <password>', 'credentials: deploy:<password>', 'basic auth is bob:<password>' (the password goes, the user stays, as in a URL)"
source = "prose in chat transcripts (a login pasted as user / password)"
lower_anchors = ['''cred(?:ential)?s[ \t]{0,4}(?:[:=]|are[ \t]|were[ \t])''', '''basic[ \t]auth[ \t]{0,4}(?:[:=]|is[ \t]|was[ \t])''']
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?i:cred(?:ential)?s|basic[ \t]auth)[ \t]{0,4}(?:[:=]|(?i:are|were|is|was))[ \t]{1,8}<<Q>>[A-Za-z0-9_.@+-]{1,64}<<Q>>(?:[ \t]{1,4}/[ \t]{1,4}|:)<<Q>>(?P<secret>[^\s"'\\`]{8,128}?)<<PROSE_END>>'''
validator = "strict_password"
tp = [
  "the staging creds are admin / «Xk9#{alnum:10}»",
  "creds: deploy:«{password}»",
  "the basic auth is bob:«{password}», same as prod",
  "Credentials were `root` / `«{password}»`.",
]
fp = ["the creds are in 1Password / Vault", "credentials: see docs/setup.md", "creds are admin / password", "the basic auth is user:pass"]

[[rule]]
id = "password-before-its-word"
kind = "password"
category = "password"
description = "A password named right after it in prose: '<password> is the password', 'use <password> as my password'"
source = "prose in chat transcripts (a password pasted first, then named)"
# the gate, as token-before-credential-word's: ` is `/` as ` and an article right before the word
lower_anchors = ['''password(?:(?<=\ [ia]s\ my\ password)|(?<=\ [ia]s\ (?:the|our)\ password)|(?<=\ [ia]s\ your\ password))''']
lead = "!-~ \t"
lead_max = 160  # a password of up to ~128 characters, a quote and ` is the `
regex = '''(?:(?<![^\s"'`(])|<<AFTER_ESCAPE>>|(?<=→))(?P<secret>[^\s"'\\`]{8,128}+)[`'"]?[ \t]{1,4}(?i:is|as)[ \t]{1,4}(?i:the|my|our|your)[ \t]{1,4}(?i:password)(?![A-Za-z])'''
validator = "strict_password"
tp = ["«Xk9#{alnum:10}» is the password for the staging box", "try `«{password}»` as your password"]
fp = ["something is the password field", "the password is the password", "hunter is the password"]

[[rule]]
id = "secret-name-value-pair"
kind = "generic_secret"
category = "generic"
description = "A password, secret, key or token named in one field and its value in the sibling one: Kubernetes and ECS env (`- name: DB_PASSWORD` then `value: …`), `{\"Key\": \"ApiSecret\", \"Value\": …}`, CloudFormation `ParameterKey=DBPassword,ParameterValue=…`, `--name /app/db/password --value …`, .NET `<setting name=\"Password\" …><value>…`"
source = "Kubernetes EnvVar and Amazon ECS container definitions; AWS CLI (ssm put-parameter, cloudformation parameters); Azure CLI (keyvault secret set); .NET application settings"
# the gate: the name's last word, then how the gap to its sibling `value` starts (most names are
# followed by a separator or a word, never by `",`, a line break, ` --` or ` value`)
# (each starts with its whole literal: a scan's hit tries an anchor only when the next byte fits)
# (a short `pass` or `pwd` only at a name's end, `DB_PASS`: Python's `pass` and the shell's `pwd` stand alone;
# `key` and `token` only at the end of a longer name and before a gap only a sibling `value` follows,
# NV_VALUE_NEAR: code writes `cache_key,` everywhere, and a secret-dense text a `key` in every line)
lower_anchors = ['''crets?<<NV_NEXT>>''', '''credentials?<<NV_NEXT>>''', '''pass(?:word|wd|phrase)<<NV_NEXT>>''', '''pass(?<=[a-z0-9_.-]pass)<<NV_NEXT>>''', '''pwd(?<=[a-z0-9_.-]pwd)<<NV_NEXT>>''', '''key(?<=[a-z0-9_.-]key)s?<<NV_VALUE_NEAR>>''', '''ken(?<=[a-z0-9_.-]token)s?<<NV_VALUE_NEAR>>''']
lead = '''A-Za-z0-9_./:="' \t\\-'''
lead_max = 120  # `ParameterKey="`, a path and a name of up to ~64 characters
yields = 16
name = '''<<SECRET_NAME>>|<<PW_NAME>>'''
regex = '''(?:(?<![A-Za-z0-9_])|<<AFTER_ESCAPE>>)(?i:name|key|parameterkey)(?:\\{0,8}["'])?(?:[ \t]{0,4}[:=][ \t]{0,4}|(?<=-name)[ \t]{1,4})(?:\\{0,8}["'])?(?:[A-Za-z0-9_.-]{0,64}/){0,8}(?P<name>[A-Za-z0-9_.-]{1,128}+)<<NV_GAP>><<Q>><<VALUE>>'''
validator = "secret"
tp = [
  "env:\n  - name: DB_PASSWORD\n    value: \"«Xk9#{alnum:10}»\"",
  "        - name: STRIPE_API_SECRET\n          value: «{alnum:32}»",
  '''{{"environment": [{{"name": "JWT_SECRET", "value": "«{token:40}»"}}]}}''',
  "\"environment\": [\n  {{\n    \"name\": \"API_SECRET\",\n    \"value\": \"«{alnum:32}»\"\n  }}\n]",
  '''{{"Key": "ApiSecret", "Value": "«{alnum:28}»"}}''',
  "aws cloudformation deploy --parameter-overrides ParameterKey=DBPassword,ParameterValue=«Xk9#{alnum:10}»",
  "aws ssm put-parameter --name /app/prod/db/password --value \"«{password}»\" --type SecureString",
  "az keyvault secret set --vault-name kv --name DbPassword --value \"«Xk9#{alnum:10}»\"",
  '''<setting name="Password" serializeAs="String"><value>«{password}»</value></setting>''',
  "- Name: DbPassword\n  Value: «{alnum:24}»",
  "        - name: STRIPE_API_KEY\n          value: «{alnum:32}»",
  '''{{"name": "GITHUB_TOKEN", "value": "«{token:40}»"}}''',
  "\"environment\": [\n  {{\n    \"name\": \"DD_API_KEY\",\n    \"value\": \"«{hex:32}»\"\n  }}\n]",
  "aws ssm put-parameter --name /app/prod/api-token --value «{alnum:40}» --type SecureString",
]
fp = [
  "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n        key: password",
  '''{{"name": "API_KEY", "value": "${{API_KEY}}"}}''',
  "- name: DB_PASSWORD\n  value: changeme",
  '''{{"name": "password", "value": "", "type": "string"}}''',
  '''<input type="password" name="password" value="{{{{ form.password.value }}}}">''',
  "- name: CACHE_KEY\n  value: user_profile_settings_v2",
  "for cache_key, value in items.items():",
  "- name: GITHUB_TOKEN\n  value: ${{{{ secrets.GITHUB_TOKEN }}}}",
  '''{{"name": "NEXT_PAGE_TOKEN", "value": "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA"}}''',
  "aws ssm put-parameter --name /app/prod/db/password --value file://password.txt",
  '''{{"name": "api_key_id", "value": "a1b2c3d4e5f6g7h8"}}''',
]

[[rule]]
id = "keyed-element-value"
kind = "generic_secret"
category = "generic"
description = "A password's, secret's, key's or token's name in an XML element and its value in the next: a property list's `<key>APIKey</key>` then `<string>…</string>` (Info.plist, launchd, configuration profiles), Java's XML properties `<entry key=\"db.password\">…</entry>`"
source = "Apple property list format (a key, then its value); java.util.Properties XML format"
# (gated on the whole element start before the name: `key>` and `key=` alone are in every page of HTML)
lower_anchors = ['''key>(?<=<key>)''', '''key=(?<=<entry key=)''']
name = '''<<SECRET_NAME>>|<<PW_NAME>>'''
regex = '''(?:(?<=<)key>|(?<=<entry )key=\\{0,8}")(?P<name>[A-Za-z0-9_.-]{1,64}+)(?:</key>(?:[ \t\r\n]|\\[nrt]|<<READ_NUMBER>>){0,40}+<string>|\\{0,8}">)(?P<secret>[^<\s"'\\]{8,400}+)</(?:string|entry)>'''
validator = "secret"
tp = [
  "<key>APIKey</key>\n\t<string>«{alnum:32}»</string>",
  "<key>password</key>\n<string>«Xk9#{alnum:10}»</string>",
  "<key>StripeSecretKey</key>\n    <string>«{alnum:32}»</string>",
  '''<entry key="db.password">«Xk9#{alnum:10}»</entry>''',
  '''<entry key="api.token">«{token:40}»</entry>''',
]
fp = [
  "<key>CFBundleIdentifier</key>\n<string>com.example.app.release</string>",
  "<key>NSCameraUsageDescription</key><string>Scan_receipts_for_expenses</string>",
  "<key>APIKey</key>\n<string>$(API_KEY)</string>",
  '''<entry key="cache.key">user_profile_settings_v2</entry>''',
  "<key>PasswordField</key>\n<string>passwordTextField</string>",
]

[[rule]]
id = "generic-secret"
kind = "generic_secret"
category = "generic"
description = "A random-looking value assigned to a name ending in key/token/secret/credentials"
source = "gitleaks generic-api-key and GenerateSampleSecrets (MIT); detect-secrets KeywordDetector (Apache-2.0)"
lower_anchors = ['''ke[yn](?:[_-]?(?:[0-9]{1,3}|v[0-9]{1,2}|prod|live|test|dev|staging|value|str|string))?<<SEPA>><<VALA>>''', '''cre(?:t|ds|dentials?)[a-z0-9_.-]{0,24}<<SEPA>><<VALA>>''']
lead = "A-Za-z0-9_.-"
# the value starts within 16 bytes of the word (`key": "`): a span another rule found there is it
yields = 16
name = '''<<SECRET_NAME>>'''
regex = '''<<NAME>><<SEP>><<VALUE>>'''
validator = "secret"
tp = [
  "[DEBUG] api_key=«{lowalnum:10}-{lowalnum:25}»",
  '''coinbase_api_token = "«{lowalnum:2}-{lowalnum:30}_{lowalnum:20}»"''',
  "API_KEY=«{alnum:32}»",
  '''{{"client_secret": "«{alnum:40}»", "client_id": "web"}}''',
  "auth_token: «{token:32}»\nretries: 3",
  "SECRET_KEY = '«django-insecure-{symbols:40}»'",
  '''const fooApiKey = '«{alnum:32}»';''',
  "MAILGUN_SIGNING_KEY=«{hex:32}»",
  "NEW_RELIC_LICENSE_KEY=«{hex:40}»",
  "HEROKU_API_KEY=«{uuid}»",
  "SESSION_SECRET=«/{alnum:42}=»",
  '''var twilioToken string = "«{hex:32}»"''',
  '''curl -H "X-API-Key: «{alnum:32}»" https://api.example.com''',
  'api_key=«{digits:40}»',
  "ciceroPRIVATEKEY=«{alnum:40}»",
]
fp = [
  "sortKEY = user_profile_settings_v2",
  "key_length = XSalsa20.key_length",
  "secret_length = X25519.secret_length",
  '''API_KEY=os.environ["API_KEY"]''',
  "api_key = os.getenv('OPENAI_API_KEY')\ntoken = get_token()\nsecret = self._load_secret(name)",
  "const token = await fetchToken();\nconst apiKey = process.env.API_KEY;",
  "API_KEY=changeme\nSECRET_KEY=<your-secret-key>\nTOKEN=$TOKEN",
  '''api_key: "your_api_key_here"''',
  "max_tokens=4096, cache_key=f\"user:{{user_id}}\", sort_key = 'created_at'",
  '''"AWS::ApiGateway::ApiKey": "48205d4ffd7feba3",''',
  "private_key: PKCS7PrivateKeyTypes,\nEMRFS_SSE_KEY = \"fs.s3.enableServerSideEncryption\"",
  '''"nextPageToken": "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA"''',
  '''public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"''',
  "PUBLIC_KEY=MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE",
  '''LLM_SECRET_NAME = "NEXUS-GPT4-API-KEY"''',
  'secretary: Xk29dLq8Zr7mWp3NvB6cTy1H',
  'aws_secret_access_key:wJalrXUtnFEMI/K7MDENG/bPxRfiCYESAMPLEKEY',
  'snowflake_key = 1706745600123456789',
]

[[rule]]
id = "keyword-near-token"
kind = "generic_secret"
category = "generic"
description = "A credential-shaped token a few dozen bytes after a credential word, in any format: 'the smartsheet key they gave us is …'; a UUID only in key/value form, after `is` ('holidayapi_key: <uuid>') or right after a word no other key is named by ('the webhook secret <uuid>')"
source = "trufflehog's keyword-gated detectors (the gating idea only, no data); prose in chat transcripts"
lead = "a-zA-Z"
lead_max = 8
lower_anchors = ['''keys?[^a-z]<<NEARTOK>>''', '''ken(?<=token)(?!s\\{0,8}":[0-9])s?[^a-z]<<NEARTOK>>''', '''secrets?[^a-z]<<NEARTOK>>''', '''credentials?[^a-z]<<NEARTOK>>''', '''auth[^a-z]<<NEARTOK>>''', '''pat[^a-z]<<NEARTOK>>''']
yields = 64
relax_before = '''(?i){providers}'''
relaxed = "provider_token"
veto_before = '''<<GIT_WORDS>>'''
regex = '''(?:(?:(?<![A-Za-z])|<<AFTER_ESCAPE>>)(?<!(?i:public)[_ .-])(?<!(?i:pub)[_.-])(?<!(?i:csrf|xsrf)[_.-])(?i:(?:api|access|auth|secret|private|client|bot|app|master|signing|bearer|pass)?(?:key|token|secret|credential|auth))|(?<=[a-z0-9])(?:<<NOTKEY>>Key|<<NOTTOKEN>>Token|Secret|Credential|Auth|KEY|TOKEN|SECRET|CREDENTIAL|AUTH)|(?:(?<![A-Za-z])|<<AFTER_ESCAPE>>)PAT|(?<=[a-z0-9]_)pat)s?(?![A-Za-z])(?![A-Za-z0-9_.-]{0,20}?<<ID_WORD>>)(?:(?:(?:[A-Za-z0-9_.-]{0,24}(?:\\{0,8}["'`])?[ \t]{0,4}(?:[:=]{1,2}|=>)|(?:[ \t][A-Za-z]{1,16}){0,5}[ \t](?:is|was|are)[ \t](?:now[ \t])?)[ \t]{0,4}(?:\\{0,8}["'`])?|<<STRONG_WORD_BEHIND>>(?:[ \t]{1,4}(?:(?i:to|now)[ \t]{1,4})?[("'`]?|[ \t]{0,4}[-=]>[ \t]{0,4}))(?=[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}(?![A-Za-z0-9-]))|(?:=|(?:[^\\\n,]|,(?![ \t]{0,4}\\{0,8}")|\\[^nr\\]){0,48}?(?<![A-Za-z0-9+/=_.~-]))(?![0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}(?![A-Za-z0-9-])))(?:(?=[A-Za-z+/=_.~-]{0,63}+[0-9])|(?=[A-Za-z]{16,64}+(?![A-Za-z0-9+/=_~-])))(?!<<DIGEST_LABEL>>)<<NOT_DIGEST>>(?P<secret>(?:[A-Za-z0-9_]|\+(?=[A-Za-z0-9])|/(?=[A-Za-z0-9+/]{14,510}+={1,2}(?![A-Za-z0-9+/=_~-])))(?:[A-Za-z0-9+/=_~-]|[.:](?=[A-Za-z0-9+/=_~-])){11,511}+)(?![A-Za-z0-9+/=_~-])'''
validator = "near_token"
tp = ["API_KEY=«test_key_1234567890abcdefghij»", "holidayapi_key: «{uuid}»", '"passkey": "«{alnum:32}»"', "the heroku token they gave us is «{uuid}», rotate it", "[DEBUG] Using Key=«{lowalnum:32}»", "the smartsheet key they gave us is «{alnum:26}», use it for the import", "the meraki token they gave us is «{hex:40}», rotate it", "ASANA_SECRET=«{digits:16}»", "the linkedin token they gave us is «{lowalnum:14}», please rotate it", "token for the staging webhook: «{token:40}»", "Here is the key for the import job: «{alnum:32}».", 'solarwindsKey := "«{alnum:48}»"', "bitfinexSecret = '«{alnum:43}»'", "[DEBUG] Using Key=«{lowalnum:21}:{lowalnum:5}:{lowalnum:18}/{lowalnum:4}»", "my PAT is «{alnum:40}»", '''ado_pat =  "«{lowalnum:52}»"''', "ADO_PAT: «{lowalnum:52}»", "the PAT for the pipeline: «{alnum:40}»", "the webhook secret «{uuid}» signs the payloads", "apikey «{uuid}»", "the HMAC key «{uuid}» is in 1Password", "Master-Key «{uuid}»", "I set the twilio secret to «{uuid}» yesterday", "The asana API token («{uuid}») expires next week.", "the webhook secret is now `«{uuid}»`", "GITHUB_API_KEY is «+{alnum:42}=»", "I set the trello secret to «/{alnum:42}=» yesterday"]
fp = ["signup_by_passkey.html,sha256=6REi-nxYTIp6D8ATGME9yVZBh3BfXPtcDsn6e1Clem4,1297", "the build key is 20260129120000", "the key=src/app/main.py:12 is read at start", "cache key 2024-10-25T21:34:56Z expired", "cache key 1706745600123456 expired", "session key order: 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17 is the id", ".bun/@aws-sdk+credential-provider-node@3.972.10/node_modules/@aws-sdk/x.js", '{{"key": "parent", "uuid": "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17"}}', "public_key = \"9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit\"", "const publicKey = \"9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit\"", "the monkey at 3f786850e387550fdab836ed7e6dc881de23001bcafe", "the key is in the vault at secret/data/app", "the token of commit 3f786850e387550fdab836ed7e6dc881de23001b", "key integrity sha512-3zG9v0Q8Vt0wX2Y1Z4b5c6d7e8f9g0h1i2j3k4l5m6", "secret_key = get_secret_key_from_environment_variable()", "pat 3f786850e387550fdab836ed7e6dc881de23001b", "PATH=/usr/local/bin:/usr/bin:/bin:/opt/tool2/bin", "PAT expired on 2026-01-29T12:00:00Z", '{{"usage": {{"output_tokens": 27, "service_tier": "standard"}}, "requestId": "req_011CUv5Fq3Lw8dLx2W7mZ9aB"}}', "idempotency key 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17 was reused", "cache key 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17", "next page token 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17", "secret id 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17", "the partition key 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17 of the row", "the cache key to 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17", "the key is in /usr/local/share/keyrings2/docker.gpg", "the secret lives at /srv/app/config/secret2024.yaml", '"pattern": "^arn:aws:bedrock-agentcore:[0-9]{{12}}:token-vault/[a-zA-Z0-9-.]+/oauth2credentialprovider/[a-zA-Z0-9-]+$"', 'github.com/Azure/go-autorest/autorest/azure/auth v0.5.11 h1:P6bYXFoao05z5uhOQzbC3Qd8JqF3jUoocoTeIxkp2cA=']

[[rule]]
id = "token-before-credential-word"
kind = "generic_secret"
category = "generic"
description = "A credential-shaped token named right after it in prose: '<token> is the api key', 'use <token> as the token', '<token> is my secret', 'I added <token> to the .env as the API key' (one place between: `to`/`in`/`into` and a word)"
source = "prose in chat transcripts (a token pasted first, then named)"
# the gate: ` is `/` as `, an article, maybe `api`, right before the word (a lookbehind per width)
lower_anchors = [
  '''key(?:(?<=\ [ia]s\ my\ key)|(?<=\ [ia]s\ (?:the|our)\ key)|(?<=\ [ia]s\ your\ key)|(?<=\ [ia]s\ my\ api\ key)|(?<=\ [ia]s\ (?:the|our)\ api\ key)|(?<=\ [ia]s\ your\ api\ key))''',
  '''ken(?:(?<=\ [ia]s\ my\ token)|(?<=\ [ia]s\ (?:the|our)\ token)|(?<=\ [ia]s\ your\ token)|(?<=\ [ia]s\ my\ api\ token)|(?<=\ [ia]s\ (?:the|our)\ api\ token)|(?<=\ [ia]s\ your\ api\ token))''',
  '''cret(?:(?<=\ [ia]s\ my\ secret)|(?<=\ [ia]s\ (?:the|our)\ secret)|(?<=\ [ia]s\ your\ secret)|(?<=\ [ia]s\ my\ api\ secret)|(?<=\ [ia]s\ (?:the|our)\ api\ secret)|(?<=\ [ia]s\ your\ api\ secret))''',
  # … or a provider's name or another word first: ` as the sentry api key`, ` is the new access token`,
  # ` as the stripe webhook secret`: the word that says which credential it is
  '''key(?:(?<=\ api\ key)|(?<=\ access\ key)|(?<=\ secret\ key)|(?<=\ license\ key)|(?<=\ signing\ key)|(?<=\ master\ key)|(?<=\ admin\ key))''',
  '''ken(?:(?<=\ api\ token)|(?<=\ access\ token)|(?<=\ auth\ token)|(?<=\ bot\ token)|(?<=\ bearer\ token)|(?<=\ refresh\ token)|(?<=\ deploy\ token))''',
  '''cret(?:(?<=\ client\ secret)|(?<=\ signing\ secret)|(?<=\ webhook\ secret)|(?<=\ shared\ secret)|(?<=\ app\ secret))''',
]
lead = "A-Za-z0-9+/=_~.:`'\" \t-"
lead_max = 120  # a token of up to ~100 characters, a quote and ` is the api `
# (not inside a colour code: `\u001b[1;33m` then the token; not after a colon: `sha256:<hex>` is one
# token, a digest)
regex = '''(?:(?<![A-Za-z0-9+/=_~.:-])|<<AFTER_ESCAPE>>)(?!<<UUID>>|[0-9;]{1,8}m)(?![0-9a-fA-F]{7,64}+[`'"]?[ \t]{1,4}(?i:to|in|into)[ \t])(?P<secret>[A-Za-z0-9_](?:[A-Za-z0-9+/=_~-]|[.:](?=[A-Za-z0-9+/=_~-])){11,511}+)[`'"]?(?:[ \t]{1,4}(?i:to|in|into)[ \t]{1,4}(?:(?i:the|our|my|your)[ \t]{1,4})?[A-Za-z0-9_./-]{1,24})?[ \t]{1,4}(?i:is|as)[ \t]{1,4}(?i:the|my|our|your)[ \t]{1,4}(?:[A-Za-z0-9_.-]{2,24}[ \t]{1,4}){0,2}(?i:key|token|secret)(?![A-Za-z])'''
validator = "near_token"
tp = ["«{alnum:32}» is the api key for staging", "please use «{token:40}» as the token from now on", "`«{alnum:28}»` is my secret, rotate it", "use «{hex:32}» as the sentry api key", "«{lowalnum:24}» is the new access token", "add «{alnum:32}» as the stripe webhook secret", "«{token:40}» is our bot token", "use «{alnum:24}-{alnum:8}» as the license key", "I've added «{alnum:32}» to the .env as the API key", "put «{token:40}» in vault as our deploy token"]
fp = ["this is the key point", "sleep is the key to success", "3f786850e387550fdab836ed7e6dc881de23001b is the commit the token came from", "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17 is the key of the row", "see src/auth/middleware_v2.py as the token check", "STRIPE_SECRET_KEY is the stripe secret key", "process.env.SENTRY_DSN_KEY is the sentry api key", "this is the main api key", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 is the signing key", "SLACK_SIGNING_SECRET is the slack signing secret", "the refresh token is the long-lived one, the access token is the short one", "3f786850e387550fdab836ed7e6dc881de23001b is the commit that added the deploy token", "3f786850e387550fdab836ed7e6dc881de23001b to main as the deploy key", "see src/auth/middleware_v2.py to the end as the token check"]

[[rule]]
id = "credential-word-prefixed-token"
kind = "generic_secret"
category = "generic"
description = "A random token whose own prefix holds a credential word, for providers nobody listed: `acme_live_<token>`, `foo_pat_<token>`, `key_<token>`, `svc-token-<token>` (a prefix names what the token is, as `sk_live_` and `glpat-` do; not a publishable `pk_live_`, nor an id's `msg_`, `req_`, `cus_`)"
source = "the prefixed-token convention of provider keys (Stripe, GitLab, Supabase, Clerk docs); trufflehog's keyword gating (the idea only)"
prefixes = ["key_", "key-", "keys_", "secret_", "secret-", "sk_", "sk-", "pat_", "pat-", "token_", "token-", "apikey_", "apikey-", "live_", "live-", "auth_", "auth-", "access_", "access-", "cred_", "creds_", "bearer_", "refresh_", "signing_", "private_", "priv_", "pass_", "pwd_"]
follow = '''(?=[A-Za-z0-9_-]{20})<<B62>>'''
lead = "a-z0-9_-"
lead_max = 40
regex = '''(?:(?<![A-Za-z0-9_.-])|<<AFTER_ESCAPE>>)<<NOT_DIGEST>>(?!(?:pk|pub|public|publishable|tok)[_-])(?P<secret><<CREDENTIAL_PREFIX>>(?=[A-Za-z_-]{0,24}+[0-9])[A-Za-z0-9]{16}[A-Za-z0-9_-]{4,255}+)(?![A-Za-z0-9_.-])'''
validator = "prefixed_random"
tp = ["I used «acme_live_{alnum:32}» for the charge", "export FOO=«foo_pat_{alnum:40}»", "«key_{alnum:32}»", "svc «svc-token-{lowalnum:40}»"]
fp = ["pk_live_51H8x2kLmQ9vTz4wR8sT1yU6bN3cE5fG7hJ9kL1mN3p", "msg_01XFDUDYJgAACzvnptvVoYEL and toolu_01A09q90qw90lq917835lq9", "cache_key_user_profile_settings_v2_2024", "secret_sauce_config_loader_v2_final", "test_access_token_is_rejected_when_expired_2", "auth_backend_django_contrib_sessions_v5", "key_5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17", "tok_visa_4242424242424242424242", "secret_manager_client_for_project_v2_2024", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29x", "to-delete-imported-key-material-1478561674507", "numpy/typing/tests/data/reveal/ufunclike.pyi,sha256=sk_HDVLeOoNeF4VOGHDI0iUT8YHeeOJjxyZTO4q0ddE,1346"]

[[rule]]
id = "provider-near-token"
kind = "generic_secret"
category = "generic"
description = "A credential-shaped token a few dozen bytes after a provider's name and no credential word: `sourcegraph: …`, `new HubSpotAPI(\"<uuid>\")`, 'the mapbox one is …'; a UUID only in assignment or call form"
source = "trufflehog's keyword-gated detectors (the gating idea only, no data); gitleaks' catalogue keywords and rule ids (MIT) for the provider names"
prefixes = ["{providers}"]
yields = 64
veto_before = '''<<GIT_WORDS>>'''
# (not a query's value, `?o=…`, and not an id a word names right before it, `cloudflare zone id
# <32 hex>`: a provider's ids are no secret; those lookbehinds only where a token with a digit starts)
regex = '''[A-Za-z]{4,16}(?:[A-Za-z0-9_.-]{0,24}+(?:\\{0,8}["'`])?[ \t]{0,4}(?:[:=]{1,2}|=>|\()[ \t]{0,4}(?:\\{0,8}["'`])?(?=<<UUID>>)|(?:[^\\\n,]|\\[^nr\\]){0,40}?(?<![A-Za-z0-9+/=_.~?&-])(?!<<UUID>>))(?=[A-Za-z+/=_.~-]{0,63}+[0-9])<<NOT_AFTER_ID_WORD>>(?!<<DIGEST_LABEL>>)<<NOT_DIGEST>>(?P<secret>[A-Za-z0-9](?:[A-Za-z0-9+/=_~-]|[.:](?=[A-Za-z0-9+/=_~-])){11,511}+)(?![A-Za-z0-9+/=_~-])'''
validator = "provider_near_token"
tp = ["sourcegraph: «{alnum:40}»", 'const hs = new HubSpotAPI("«{uuid}»");', "the mapbox one we use in prod is «{lowalnum:32}»", "dropbox «{alnum:20}{digits:4}»", "the looker one: «{alnum:40}»", "pagerduty «{hex:32}» is the routing one", "deepl: «{uuid}:fx»", "the openweather one for the dashboard: «{alnum:32}»", "chartmogul «{lowalnum:28}{digits:4}»", "  cloudsmith: «{alnum:40}»"]
fp = ["the dropbox sync of 2024-10-25T21:34:56Z failed", "hubspot commit 3f786850e387550fdab836ed7e6dc881de23001b", "mapbox-gl@3.972.10/node_modules/mapbox-gl/dist/x.js", "dropbox session 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17 is the id", "the hubspot integration lives in src/integrations/hubspot/client.py", "looker build 20260129120000 ran", "pip install dropbox==12.0.2", "pip install posthog==3.1.0 pinecone-client==3.0.0", "cloudflare zone id 023e105f4ecef8ad9ca31a8372d0c353", "cloudflare account 9a7806061c88ada191ed06f989cc3dac", "databricks workspace https://adb-1234567890123456.7.azuredatabricks.net/?o=1234567890123456", "the supabase project ref is abcdefghijklmnopqrst", 'github.com/Azure/go-autorest/autorest/azure/auth v0.5.11/go.mod h1:P6bYXFoao05z5uhOQzbC3Qd8JqF3jUoocoTeIxkp2cA=']

[[rule]]
id = "provider-key-uuid"
kind = "generic_secret"
category = "generic"
description = "A UUID right after a provider's key or token word, a blank apart: 'I pasted the heroku key <uuid> into the dashboard', 'use the npm token <uuid>' (after a plain `key` a UUID is a cache, row or idempotency key: the provider's name says which)"
source = "provider documentation (Heroku API keys, npm legacy tokens, Railway tokens: UUIDs)"
lower_anchors = ['''key(?=s?[ \t]{1,4}(?:(?:to|now)[ \t]{1,4})?[("'`]?[0-9a-f]{8}-[0-9a-f]{4}-)''', '''ken(?<=token)(?=s?[ \t]{1,4}(?:(?:to|now)[ \t]{1,4})?[("'`]?[0-9a-f]{8}-[0-9a-f]{4}-)''']
lead = "A-Za-z0-9 _.-"
lead_max = 40
regex = '''(?:(?<![A-Za-z0-9])|<<AFTER_ESCAPE>>)(?i:{provider_names})[ _.-]?(?:(?i:api|access|auth|integration|license|project|sdk|app)[ _.-]?)?(?i:keys?|tokens?)[ \t]{1,4}(?:(?i:to|now)[ \t]{1,4})?[("'`]?(?P<secret><<UUID>>)'''
validator = "near_token"
tp = ["I pasted the heroku key «{uuid}» into the dashboard", "use the npm token «{uuid}» for the publish job", "the Railway token («{uuid}») expires", "HubSpot key now «{uuid}»"]
fp = ["the cache key 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17 expired", "the stripe idempotency key 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17 was reused", "dropbox session 5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17 is the id", "the heroku key 00000000-0000-0000-0000-000000000000 in the docs"]

[[rule]]
id = "discord-bot-token"
kind = "discord"
category = "chat"
description = "A Discord bot token: the base64 of the bot's numeric id (`M`, `N` or `O` first), a dot, six characters of timestamp, a dot, the HMAC; up to two characters before it, as a mangled token keeps the rest"
source = "Discord developer docs (reference: authentication)"
anchors = ['''\.[A-Za-z0-9_-]{6}\.(?=[A-Za-z0-9_-]{27})''']
lead = "A-Za-z0-9_="
lead_max = 27
# a JSON escape's letter is no mangled character (`\nNzk5…`: the token starts at `N`)
regex = '''<<START>>(?P<secret>(?:(?<!\\)[A-Za-z0-9_-]{1,2})?[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})<<END>>'''
validator = "discord_bot"
tp = ["DISCORD_BOT_TOKEN=«MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs»", "the bot token is «Nzk5MjgxNDk0NDc2NDU1OTg3.YABS5g.2lmzECVlZv3vv6miVnUaKPQi2wI»", "token: «ATMy{alnum:22}.{alnum:5}x.{alnum:30}1»"]
fp = ["com.example.service.Configuration.loadDefaults", "import app_settings_module.config.pool_size_for_workers_total2", "Q{alnum:23}.{alnum:6}.{alnum:27}"]

[[rule]]
id = "webex-bot-token"
kind = "webex"
category = "chat"
description = "A Webex bot access token: 64 letters and digits, `_`, a four-character region code, `_`, the org UUID (or letters and digits in its shape, as in made-up tokens)"
source = "Webex developer docs (bots: access token); trufflehog webexbot detector's shape (the idea only)"
anchors = ['''_(?<=_[A-Za-z0-9]{4}_)(?=[A-Za-z0-9]{8}-[A-Za-z0-9]{4}-)''']
lead = "A-Za-z0-9_"
lead_max = 70
regex = '''<<START>>(?P<secret>[A-Za-z0-9]{64}_[A-Za-z0-9]{4}_[A-Za-z0-9]{8}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{12})<<END>>'''
validator = "token"
tp = ["WEBEX_BOT_TOKEN=«{alnum:64}_PF84_{uuid}»", "the bot token is «{alnum:64}_P0A1_{uuid}»", "webexbot = '«{lowalnum:64}_qwer_{lowalnum:8}-{lowalnum:4}-{lowalnum:4}-{lowalnum:4}-{lowalnum:12}»'"]
fp = ["snake_case_name_PF84_ab"]

[[rule]]
id = "secret-flag"
kind = "generic_secret"
category = "generic"
description = "A random-looking value after a --token/--api-key/--secret style flag and a space"
source = "GNU long options; gh, heroku, vercel, npm and cloud CLIs (--token, --api-key, --client-secret)"
lower_anchors = ['''ke[yn][ \t]{1,8}<<VALA>>''', '''cret[ \t]{1,8}<<VALA>>''']
lead = "a-zA-Z-"
lead_max = 32
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)--?(?:[A-Za-z0-9]{1,24}-){0,3}(?i:token|key|secret)[ \t]{1,8}<<Q>>(?P<secret>[^\s"'\\`-][^\s"'\\`]{7,511}+)'''
validator = "secret"
tp = ["vercel deploy --token «{alnum:24}» --prod", "my-cli --api-key «{alnum:32}» sync", "az ad sp create --client-secret «{token:40}»"]
fp = ["git log --pretty=format --key value", "ssh-keygen -t ed25519 --key-type rsa", "gh auth login --with-token < token.txt", "To decipher the auto-key ciphertext, use the key", "commandline --current-token --cut-at-cursor)"]

[[rule]]
id = "set-secret-to-prose"
kind = "generic_secret"
category = "generic"
description = "A secret-named variable set in prose: 'set SESSION_SECRET to …', 'change DB_PASSWORD to …'"
source = "prose in chat transcripts (instructions to set a variable)"
lower_anchors = ['''cret to ''', '''pass(?:wor)?d to ''', '''oken to ''', '''key to ''']
lead = "A-Za-z0-9_. \t-"
lead_max = 80
regex = '''<<NAME_START>>(?i:set|change|update|rotate|export)[ \t]{1,4}<<Q>><<NAME>><<Q>>[ \t]{1,4}(?i:to|=)[ \t]{1,4}<<Q>>(?P<secret>[^\s"'\\`]{8,512}?)<<PROSE_END>>'''
name = '''<<SECRET_NAME>>|<<PW_NAME>>'''
validator = "secret"
tp = ["set SESSION_SECRET to «{alnum:24}» in the staging environment", "change DB_PASSWORD to «{alnum:16}9» and restart"]
fp = ["set API_KEY to the value from the vault", "set the token to expire in an hour", "set SESSION_SECRET to $SESSION_SECRET"]

[[rule]]
id = "generic-secret-prose"
kind = "generic_secret"
category = "generic"
description = "A key, token or secret named in prose: 'my API key is …', 'the token was …', 'The new API token is:' and the value on the next line or in a code block"
source = "detect-secrets KeywordDetector (Apache-2.0)"
lead = "a-zA-Z"
lead_max = 4
lower_anchors = ['''ke[yn]s?[ \t]{1,4}(?:is|was|->|→):?(?:[ \t]|\\n|\n)''', '''crets?[ \t]{1,4}(?:is|was|->|→):?(?:[ \t]|\\n|\n)''', '''ke[yn]s?[ \t]{1,4}(?:below|here):?(?:\\n|\n)''', '''crets?[ \t]{1,4}(?:below|here):?(?:\\n|\n)''']
# ('below'/'here' only with the value on its own line: 'the key here is to cache it' stays)
regex = '''(?:(?<![A-Za-z0-9_-])|<<AFTER_ESCAPE>>)(?i:key|token|secret)s?[ \t]{1,4}(?:(?i:is|was|->|→):?(?:[ \t]{1,8}|[ \t]{0,4}<<NL>>{1,2}(?:```[A-Za-z]{0,12}<<NL>>)?)|(?i:below|here):?[ \t]{0,4}<<NL>>{1,2}(?:```[A-Za-z]{0,12}<<NL>>)?)<<Q>>(?P<secret>[^\s"'\\`]{12,512}?)<<PROSE_END>>'''
validator = "secret"
tp = ["my API key is «{alnum:32}», keep it safe", "The token was «{token:40}».", "The new API token is:\n\n```\n«{alnum:32}»\n```", "Your secret is:\n«{token:40}»", "I pasted the plaid secret below\n«{alnum:30}»", "the new token here:\n\n```\n«{token:40}»\n```"]
fp = ["the key is in the vault", "the token is expired and must be refreshed", "the key here is to cache the token", "see the secret below\nsecrets.yaml holds the rest"]

[[rule]]
id = "assigned-random-value"
kind = "generic_secret"
category = "generic"
description = "A random value of credential shape assigned to any name in code, config or env: `apiMetrics := \"…\"`, `X_API = '…'`, `NAME=…` (20+ characters, upper and lower case and digits, random enough)"
source = "detect-secrets KeywordDetector and high-entropy string plugins (Apache-2.0), the idea without a name list"
anchors = ['''=(?=[ \t"'\\`]{0,12}+[A-Za-z0-9+/_~-]{20})(?=[ \t"'\\`]{0,12}+[A-Za-z+/_~-]{0,30}+[0-9])''']
lead = "A-Za-z0-9_"
lead_gap = ''' \t:"'\\'''
lead_max = 80
yields = 16  # the value starts within 16 bytes of its `=`: a span another rule found there is it
name = '''(?i)(?!(?:id|class|content|src|href|style|data)$)(?![a-z0-9_]{0,64}?(?:pub|cache|page|cursor|hash|sha|sum|digest|integrity|nonce|salt|etag|uuid|guid|commit|rev|ref|version|signature))[a-z0-9_]{1,64}'''
regex = '''(?:(?<![A-Za-z0-9_$?&/%-])|<<AFTER_ESCAPE>>)(?P<name>[A-Za-z_][A-Za-z0-9_]{0,63}+)(?:\\{0,8}["'])?[ \t]{0,4}:?=[ \t]{0,4}(?:\\{0,8}["'`])?(?P<secret>[A-Za-z0-9+/_~-]{20,128}+={0,2})(?![A-Za-z0-9+/=_~.:@%(\[-])'''
validator = "assigned_random"
tp = ['apiMetrics := "«{alnum:32}»"', "X_API = '«{alnum:40}»'", "export DEPLOY_HOOK=«{alnum:36}»"]
fp = ['EXPECTED_SHA = "3f786850e387550fdab836ed7e6dc881de23001b"', 'integrity="sha512-3zG9v0Q8Vt0wX2Y1Z4b5c6d7e8f9g0h1i2j3k4"', "RAILWAY_ENV = 'production-environment-v2'", "https://example.com/?ref=AbCdEf0123456789GhIjKl", "url = src/components/UserProfile2/index.tsx", "request_id = '5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17'", "stream=9b0ac37f-d19e-4254-9079-f47e9a389eEX", "var n = _sliceInstanceProperty2(_context9)"]
"""
