"""Held-out redaction samples: secret shapes and contexts from material the rules data does not cite.

The project's corpus (redaction_corpus.py) is what the rules were written from, so its recall says
little about secrets nobody tuned to. These samples come from other documentation (ssh-keygen,
Kubernetes, Docker, RFC 8259/3986, YAML, bash, provider docs for formats the rules never cited)
and were written before any rule for them. A sample is a function of a seeded generator returning
the text and the secrets in it (values are random; the real alphabet and length of each format).
`bench_redact.py` scores them apart from the corpus, with the corpus samples no rule of their kind
cites, as the held-out figure.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from sessionledger.core.redaction.examples import Example, random_chars

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class HeldOut:
    kind: str
    category: str  # private_key, provider, generic
    source: str
    make: Callable[[random.Random], Example]


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return random_chars(rng, alphabet, n)


def _pw(rng: random.Random) -> str:
    return _r(rng, 9) + rng.choice("!#%^*") + str(rng.randrange(10, 99))


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _one(text: str, *secrets: str) -> Example:
    return Example(text, secrets)


def _openssh(rng: random.Random) -> Example:
    header = b"openssh-key-v1\0\0\0\0\x04none\0\0\0\x04none\0\0\0\0\0\0\0\x01\0\0\0\x33\0\0\0\x0bssh-ed25519\0\0\0 "
    body = base64.b64encode(header + rng.randbytes(rng.randrange(280, 400))).decode()
    key = "\n".join(
        [
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            *(body[i : i + 70] for i in range(0, len(body), 70)),
            "-----END OPENSSH PRIVATE KEY-----",
        ]
    )
    return _one(key, key)


def _k8s_data(rng: random.Random) -> Example:
    value = _b64(_r(rng, 24))
    name = rng.choice(["api-token", "connection", "apiKey", "webhook", "tls.key-pass"])
    return _one(
        f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n  {name}: {value}\n", value
    )


def _k8s_string_data(rng: random.Random) -> Example:
    value = _r(rng, 20)
    return _one(f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  connection: {value}\n", value)


def _k8s_string_data_keys(rng: random.Random) -> Example:
    values = [_r(rng, 15) + "!" + _r(rng, 3), _r(rng, 22), _pw(rng)]
    entries = "".join(f"  {name}: {v}\n" for name, v in zip(["connection", "upstream", "signing"], values, strict=True))
    text = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\nstringData:\n  region: eu\n{entries}"
    return Example(text, tuple(values))


def _dockerconfigjson(rng: random.Random) -> Example:
    auth = _b64("ci:" + _r(rng, 20))
    blob = _b64(json.dumps({"auths": {"registry.acme.io": {"auth": auth}}}))
    return _one(f"kind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: {blob}\n", blob)


def _env_base64(rng: random.Random) -> Example:
    blob = _b64(f"DB_PASSWORD={_pw(rng)}\nSTRIPE_KEY=sk_live_{_r(rng, 24)}\n")
    return _one(f"ENV_FILE_B64={blob}", blob)


def _env_base64_any_name(rng: random.Random) -> Example:
    blob = _b64(f"DB_PASSWORD={_pw(rng)}\nSTRIPE_KEY=sk_live_{_r(rng, 24)}\nLOG_LEVEL=info\n")
    return _one(rng.choice(["DOTENV={}", "PROD_ENV_FILE={}", "env_file: {}"]).format(blob), blob)


def _pw_backslash(rng: random.Random) -> Example:
    value = _r(rng, 6) + "\\" + _r(rng, 6) + "$" + _r(rng, 3)
    return _one(f"mysql -u root --password='{value}' app", value)


def _pw_braces(rng: random.Random) -> Example:
    value = _r(rng, 5) + "{" + _r(rng, 4) + "}" + _r(rng, 5)
    return _one(f'DB_PASSWORD="{value}"', value)


def _pw_quote(rng: random.Random) -> Example:
    value = _r(rng, 6) + '\\"' + _r(rng, 8)
    return _one(f'password = "{value}"', value)


def _json_unicode(rng: random.Random) -> Example:
    plain = _r(rng, 24)
    escaped = "".join(f"\\u{ord(c):04x}" if i % 3 == 0 else c for i, c in enumerate(plain))
    return _one(f'{{"api_token": "{escaped}"}}', escaped)


def _json_slashes(rng: random.Random) -> Example:
    hook = f"T{_r(rng, 10, string.ascii_uppercase + string.digits)}\\/B{_r(rng, 10)}\\/{_r(rng, 24)}"
    return _one(f'{{"webhook":"https:\\/\\/hooks.slack.com\\/services\\/{hook}"}}', hook)


def _percent_url(rng: random.Random) -> Example:
    value = _r(rng, 8) + "%40" + _r(rng, 8) + "%23"
    return _one(f"postgres://app:{value}@db.internal:5432/app", value)


def _folded_yaml(rng: random.Random) -> Example:
    token = "glpat-" + _r(rng, 20, ALNUM + "_-")
    return _one(f'ci:\n  token: "{token[:14]}\\\n    {token[14:]}"', token[:14], token[14:])


def _ansi_c(rng: random.Random) -> Example:
    value = _r(rng, 16)
    return _one(f"export DB_PASSWORD=$'{value}\\n'", value)


def _html_entities(rng: random.Random) -> Example:
    value = _r(rng, 10) + "&amp;" + _r(rng, 6)
    return _one(f'<input type="password" name="password" value="{value}">', value)


def _telegram_url(rng: random.Random) -> Example:
    token = f"{rng.randrange(10**8, 10**10)}:AA{_r(rng, 33, ALNUM + '_-')}"
    return _one(f"curl https://api.telegram.org/bot{token}/getMe", token)


def _azure_devops(rng: random.Random) -> Example:
    token = _r(rng, 52, string.ascii_lowercase + "234567")
    return _one(f"AZURE_DEVOPS_EXT_PAT={token}", token)


def _azure_devops_url(rng: random.Random) -> Example:
    token = _r(rng, 52, string.ascii_lowercase + "234567")
    return _one(f"git clone https://pat:{token}@dev.azure.com/acme/app/_git/app", token)


def _vault_legacy(rng: random.Random) -> Example:
    token = "s." + _r(rng, 24)
    return _one(f"vault login {token}", token)


def _mailgun(rng: random.Random) -> Example:
    token = "key-" + _r(rng, 32, HEX)
    return _one(f"mg = Mailgun(domain, '{token}')", token)


def _bundler(rng: random.Random) -> Example:
    value = _r(rng, 24)
    return _one(f"BUNDLE_GEMS__CONTRIBSYS__COM=user:{value}", value)


def _gitlab_runner(rng: random.Random) -> Example:
    token = "GR1348941" + _r(rng, 20, ALNUM + "_-")
    return _one(f"gitlab-runner register --url https://gitlab.com --registration-token {token}", token)


def _alibaba21(rng: random.Random) -> Example:
    token = "LTAI" + _r(rng, 17)
    return _one(f"aliyun configure set --access-key-id {token}", token)


def _ya29_late_caps(rng: random.Random) -> Example:
    token = "ya29." + _r(rng, 30, string.ascii_lowercase + string.digits) + _r(rng, 80, ALNUM + "_-")
    return _one(f"curl -H 'Authorization: Bearer {token}' https://www.googleapis.com/drive/v3/files", token)


def _datadog_app_key(rng: random.Random) -> Example:
    token = _r(rng, 40, HEX)
    return _one(f'curl -H "DD-APPLICATION-KEY: {token}" https://api.datadoghq.com/api/v1/dashboard', token)


def _url_query(rng: random.Random) -> Example:
    token = _r(rng, 32)
    return _one(f"curl 'https://api.acme.io/v1/items?limit=5&api_key={token}'", token)


def _cli(template: str) -> Callable[[random.Random], Example]:
    def make(rng: random.Random) -> Example:
        value = _pw(rng)
        return _one(template.format(value), value)

    return make


def _amqp_word(rng: random.Random) -> Example:
    value = rng.choice(["correcthorse", "bluewhale", "orangepeel"]) + rng.choice(["battery", "staple", "river"])
    return _one(f"AMQP_URL=amqp://app:{value}@mq.internal:5672/", value)


def _redis_dollar(rng: random.Random) -> Example:
    value = "$" + _r(rng, 14)
    return _one(f"redis://:{value}@cache.internal:6379/0", value)


def _hex_auth(rng: random.Random) -> Example:
    token = _r(rng, 16, HEX)
    return _one(f"curl -H 'X-Auth-Token: {token}' https://api.internal/v1/me", token)


def _prose_set(rng: random.Random) -> Example:
    value = _r(rng, 24)
    return _one(f"set SESSION_SECRET to {value} in the staging environment", value)


def _prose_secret_is(rng: random.Random) -> Example:
    value = _r(rng, 20)
    return _one(f"ok, the secret is {value} - keep it out of the repo", value)


def _sample_word(rng: random.Random) -> Example:
    value = "SampleTeam#" + str(rng.randrange(2020, 2030))
    return _one(f"DB_PASSWORD={value}", value)


HELD_OUT: list[HeldOut] = [
    HeldOut("private_key", "private_key", "ssh-keygen(1): unencrypted OpenSSH key", _openssh),
    HeldOut("k8s_secret", "generic", "Kubernetes docs: Secret data", _k8s_data),
    HeldOut("k8s_secret", "generic", "Kubernetes docs: Secret stringData", _k8s_string_data),
    HeldOut("k8s_secret", "generic", "Kubernetes docs: dockerconfigjson Secret", _dockerconfigjson),
    HeldOut("env_base64", "generic", "base64(1) of a .env file", _env_base64),
    HeldOut("k8s_secret", "generic", "Kubernetes docs: Secret stringData with several keys", _k8s_string_data_keys),
    HeldOut("env_base64", "generic", "GitHub Actions docs: a file stored as a base64 secret", _env_base64_any_name),
    HeldOut("password", "generic", "MySQL docs: --password with shell characters", _pw_backslash),
    HeldOut("password", "generic", "dotenv: quoted value with braces", _pw_braces),
    HeldOut("password", "generic", "escaped quote in a string literal", _pw_quote),
    HeldOut("generic_secret", "generic", "RFC 8259: \\u escapes", _json_unicode),
    HeldOut("slack_webhook", "provider", "RFC 8259: escaped solidus", _json_slashes),
    HeldOut("url_password", "generic", "RFC 3986: percent-encoded userinfo", _percent_url),
    HeldOut("gitlab", "provider", "YAML spec: escaped line break in a double-quoted scalar", _folded_yaml),
    HeldOut("password", "generic", "bash(1): ANSI-C quoting", _ansi_c),
    HeldOut("password", "generic", "HTML: character references", _html_entities),
    HeldOut("telegram", "provider", "Telegram Bot API: making requests", _telegram_url),
    HeldOut("azure_devops", "provider", "Azure DevOps: personal access tokens", _azure_devops),
    HeldOut("azure_devops", "provider", "Azure DevOps: git credentials", _azure_devops_url),
    HeldOut("vault", "provider", "Vault: legacy service tokens", _vault_legacy),
    HeldOut("mail", "provider", "Mailgun: private API key", _mailgun),
    HeldOut("registry", "provider", "Bundler: credentials for gem sources", _bundler),
    HeldOut("gitlab", "provider", "GitLab Runner: registration tokens", _gitlab_runner),
    HeldOut("alibaba", "provider", "Alibaba Cloud CLI: AccessKey ID", _alibaba21),
    HeldOut("google_oauth", "provider", "Google APIs: access tokens", _ya29_late_caps),
    HeldOut("datadog", "provider", "Datadog API: application key header", _datadog_app_key),
    HeldOut("generic_secret", "generic", "query-string API keys", _url_query),
    HeldOut("password", "generic", "sqlcmd: -P", _cli("sqlcmd -S db.internal -U sa -P {} -Q 'select 1'")),
    HeldOut("password", "generic", "redis-cli: -a", _cli("redis-cli -h cache.internal -a {} ping")),
    HeldOut("password", "generic", "Terraform CLI: -var", _cli("terraform apply -var 'db_password={}'")),
    HeldOut(
        "password", "generic", "wget: --password", _cli("wget --user=ci --password={} https://files.internal/a.tgz")
    ),
    HeldOut("password", "generic", "MySQL Shell: --uri", _cli("mysqlsh --uri root:{}@db.internal:3306")),
    HeldOut("url_password", "generic", "RabbitMQ: URI spec", _amqp_word),
    HeldOut("url_password", "generic", "Redis: URI scheme", _redis_dollar),
    HeldOut("bearer", "generic", "X-Auth-Token headers", _hex_auth),
    HeldOut("generic_secret", "generic", "prose: set NAME to value", _prose_set),
    HeldOut("generic_secret", "generic", "prose: the secret is", _prose_secret_is),
    HeldOut("password", "generic", "password holding a placeholder word", _sample_word),
]
