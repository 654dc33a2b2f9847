# ruff: noqa: E501  (data: one regex or example per line reads better than a wrapped one)
"""The samples of the redaction corpus (bench/redaction_corpus.py): token shapes, the contexts they
are written in, keyword forms and hard negatives, with the public source each shape comes from.
Data only; redaction_corpus.py renders them into transcript placements and scores them.
"""

from __future__ import annotations

from dataclasses import dataclass

SESSION = "5d1c0c8e-3f6a-4b7e-9a51-2b8f0d4c6e17"
GITLEAKS = "gitleaks (MIT) cmd/generate/config/rules/{}.go true positives"
CONTEXTS_SOURCE = "gitleaks (MIT) cmd/generate/config/utils/generate.go GenerateSampleSecrets contexts"
DETECT_SECRETS = "detect-secrets (Apache-2.0) {}"
PLACEMENTS = (
    "prompt",
    "assistant_text",
    "thinking",
    "bash_command",
    "bash_output",
    "read_output",
    "edit_input",
    "edit_result",
    "write_input",
    "write_result",
)
STRICT_CATEGORIES = ("private_key", "cloud", "vcs", "payment")


@dataclass(frozen=True)
class Sample:
    kind: str
    category: str
    template: str
    source: str


# --- provider tokens: (kind, category, token template, gitleaks rule file or other source) --------
TOKENS: list[tuple[str, str, str, str]] = [
    ("aws_access_key", "cloud", "AKIA{b32:16}", GITLEAKS.format("aws")),
    ("aws_access_key", "cloud", "ASIA{b32:16}", GITLEAKS.format("aws")),
    ("aws_bedrock", "cloud", "ABSKQmVkcm9ja0FQSUtleS1{alnum:108}=", GITLEAKS.format("aws")),
    ("google_api_key", "cloud", "AIza{token:35}", GITLEAKS.format("gcp")),
    ("google_oauth", "cloud", "ya29.a0{token:120}", "Google Identity docs: OAuth access tokens"),
    ("google_oauth", "cloud", "GOCSPX-{token:28}", "Google Identity docs: OAuth client secrets"),
    ("alibaba", "cloud", "LTAI{alnum:20}", GITLEAKS.format("alibaba")),
    ("tencent", "cloud", "AKID{alnum:32}", "Tencent Cloud docs: API keys"),
    ("digitalocean", "cloud", "dop_v1_{hex:64}", GITLEAKS.format("digitalocean")),
    ("heroku", "cloud", "HRKU-AA{token:58}", GITLEAKS.format("heroku")),
    ("vault", "cloud", "hvs.{token:90}", GITLEAKS.format("hashicorp_vault")),
    ("hashicorp", "cloud", "{alnum:14}.atlasv1.{token:67}", GITLEAKS.format("hashicorp")),
    ("doppler", "cloud", "dp.pt.{alnum:43}", GITLEAKS.format("doppler")),
    ("databricks", "cloud", "dapi{hex:32}", GITLEAKS.format("databricks")),
    ("cloudflare", "cloud", "v1.0-{hex:24}-{hex:146}", GITLEAKS.format("cloudflare")),
    ("flyio", "cloud", "fo1_{token:43}", GITLEAKS.format("flyio")),
    ("supabase", "cloud", "sbp_{hex:40}", "Supabase docs: access tokens"),
    ("pulumi", "cloud", "pul-{hex:40}", GITLEAKS.format("pulumi")),
    ("github", "vcs", "ghp_{alnum:36}", GITLEAKS.format("github")),
    ("github", "vcs", "gho_{alnum:36}", GITLEAKS.format("github")),
    ("github", "vcs", "ghs_{alnum:36}", GITLEAKS.format("github")),
    ("github", "vcs", "github_pat_{alnum:22}_{alnum:59}", GITLEAKS.format("github")),
    ("gitlab", "vcs", "glpat-{token:20}", GITLEAKS.format("gitlab")),
    ("gitlab", "vcs", "glrt-{token:20}", GITLEAKS.format("gitlab")),
    ("gitlab", "vcs", "gldt-{token:20}", GITLEAKS.format("gitlab")),
    ("atlassian", "vcs", "ATATT3{token:186}", GITLEAKS.format("atlassian")),
    ("atlassian", "vcs", "ATBB{alnum:32}", "Atlassian docs: Bitbucket app passwords"),
    ("sourcegraph", "vcs", "sgp_{hex:16}_{hex:40}", GITLEAKS.format("sourcegraph")),
    ("stripe", "payment", "sk_live_{alnum:24}", GITLEAKS.format("stripe")),
    ("stripe", "payment", "rk_live_{alnum:24}", GITLEAKS.format("stripe")),
    ("stripe", "payment", "sk_test_{alnum:30}", GITLEAKS.format("stripe")),
    ("stripe", "payment", "whsec_{alnum:32}", "Stripe docs: webhook signing secrets"),
    ("square", "payment", "sq0csp-{token:43}", GITLEAKS.format("square")),
    ("square", "payment", "EAAA{token:60}", GITLEAKS.format("square")),
    ("paypal", "payment", "access_token$production${lowalnum:16}${hex:32}", "Braintree docs: access tokens"),
    ("razorpay", "payment", "rzp_live_{alnum:14}", "Razorpay docs: API keys"),
    ("flutterwave", "payment", "FLWSECK_TEST-{hex:32}-X", GITLEAKS.format("flutterwave")),
    ("plaid", "payment", "access-production-{uuid}", GITLEAKS.format("plaid")),
    ("shopify", "payment", "shpat_{hex:32}", GITLEAKS.format("shopify")),
    ("shipping", "payment", "EZAK{alnum:54}", GITLEAKS.format("easypost")),
    ("shipping", "payment", "shippo_live_{hex:40}", GITLEAKS.format("shippo")),
    ("anthropic", "ai", "sk-ant-api03-{token:93}AA", GITLEAKS.format("anthropic")),
    ("openai", "ai", "sk-proj-{token:156}", GITLEAKS.format("openai")),
    ("openai", "ai", "sk-{alnum:48}", GITLEAKS.format("openai")),
    ("openai", "ai", "sk-or-v1-{hex:64}", "OpenRouter docs: API keys"),
    ("huggingface", "ai", "hf_{alpha:34}", GITLEAKS.format("huggingface")),
    ("ai_api_key", "ai", "gsk_{alnum:52}", "Groq docs: API keys"),
    ("ai_api_key", "ai", "pplx-{alnum:48}", GITLEAKS.format("perplexity")),
    ("ai_api_key", "ai", "r8_{alnum:37}", "Replicate docs: API tokens"),
    ("slack", "messaging", "xoxb-{digits:12}-{digits:13}-{alnum:24}", GITLEAKS.format("slack")),
    ("slack", "messaging", "xoxp-{digits:11}-{digits:12}-{digits:12}-{hex:32}", GITLEAKS.format("slack")),
    ("telegram", "messaging", "{digits:10}:AA{token:33}", GITLEAKS.format("telegram")),
    ("sendgrid", "messaging", "SG.{token:22}.{token:43}", GITLEAKS.format("sendgrid")),
    ("mail", "messaging", "key-{hex:32}", GITLEAKS.format("mailgun")),
    ("mail", "messaging", "xkeysib-{hex:64}-{alnum:16}", GITLEAKS.format("sendinblue")),
    ("mail", "messaging", "{hex:32}-us21", GITLEAKS.format("mailchimp")),
    ("npm", "registry", "npm_{alnum:36}", GITLEAKS.format("npm")),
    ("pypi", "registry", "pypi-AgEIcHlwaS5vcmc{token:70}", GITLEAKS.format("pypi")),
    ("registry", "registry", "dckr_pat_{token:27}", "Docker docs: personal access tokens"),
    ("registry", "registry", "rubygems_{hex:48}", GITLEAKS.format("rubygems")),
    ("registry", "registry", "AKCp{alnum:69}", GITLEAKS.format("artifactory")),
    ("saas_token", "saas", "lin_api_{alnum:40}", GITLEAKS.format("linear")),
    ("saas_token", "saas", "PMAK-{hex:24}-{hex:34}", GITLEAKS.format("postman")),
    ("saas_token", "saas", "sntryu_{hex:64}", GITLEAKS.format("sentry")),
    ("saas_token", "saas", "glsa_{alnum:32}_{hex:8}", GITLEAKS.format("grafana")),
    ("saas_token", "saas", "ntn_{digits:11}{alnum:35}", GITLEAKS.format("notion")),
    ("saas_token", "saas", "pscale_tkn_{token:43}", GITLEAKS.format("planetscale")),
    ("saas_token", "saas", "dt0c01.{upalnum:24}.{upalnum:64}", GITLEAKS.format("dynatrace")),
    ("saas_token", "saas", "tskey-auth-{alnum:12}-{alnum:30}", "Tailscale docs: auth keys"),
    ("saas_token", "saas", "pat{alnum:14}.{hex:64}", GITLEAKS.format("airtable")),
    ("newrelic", "monitoring", "NRAK-{upalnum:27}", GITLEAKS.format("newrelic")),
    ("newrelic", "monitoring", "NRII-{token:32}", GITLEAKS.format("newrelic")),
    ("newrelic", "monitoring", "eu01xx{hex:30}NRAL", "New Relic docs: license keys"),
    ("jwt", "auth", "{jwt}", GITLEAKS.format("jwt")),
    ("age", "private_key", "AGE-SECRET-KEY-1{bech32:58}", GITLEAKS.format("age")),
]

# gitleaks' GenerateSampleSecrets contexts ({i}: identifier, {I}: upper, {s}: secret); ids of the
# ones used: ini - unquoted1, json - string, yaml - singleline - single quote, go - short,
# python - double quote, misc - comma operator, logstash, make - conditional assignment.
TOKEN_CONTEXTS = [
    "{I}_TOKEN={s}",
    '{{\n    "{i}_token": "{s}"\n}}',
    "{i}_token: '{s}'",
    '{i}Token := "{s}"',
    '{i}Token = "{s}"',
    'System.setProperty("{I}_TOKEN", "{s}")',
    '  "{i}Token" => "{s}"',
    '{I}_TOKEN ?= "{s}"',
    "here is the credential for the deploy: {s}",
    "<{i}Token>\n    {s}\n</{i}Token>",
    'var {i}Token string = "{s}"',
    '${i}Token .= "{s}"',
    '{I}_TOKEN ::= "{s}"',
    '{{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}}',
    'string {i}Token = "{s}";',
]

# Keyword-only kinds: gitleaks finds these by the provider's name in the variable, not by a prefix
# (cmd/generate/config/rules/<name>.go: GenerateSemiGenericRegex + GenerateSampleSecrets).
KEYWORD_TOKENS: list[tuple[str, str]] = [
    ("adafruit", "{lowalnum:32}"),
    ("algolia", "{lowalnum:32}"),
    ("asana", "{lowalnum:32}"),
    ("bitbucket", "{lowalnum:32}"),
    ("codecov", "{lowalnum:32}"),
    ("coinbase", "{token:64}"),
    ("confluent", "{lowalnum:64}"),
    ("datadog", "{lowalnum:40}"),
    ("droneci", "{lowalnum:32}"),
    ("etsy", "{lowalnum:24}"),
    ("fastly", "{token:32}"),
    ("finnhub", "{lowalnum:20}"),
    ("flickr", "{lowalnum:32}"),
    ("freshbooks", "{lowalnum:64}"),
    ("gitter", "{token:40}"),
    ("hubspot", "{uuid}"),
    ("intercom", "{token:60}"),
    ("kraken", "{b64:86}"),
    ("launchdarkly", "{token:40}"),
    ("looker", "{lowalnum:24}"),
    ("mattermost", "{lowalnum:26}"),
    ("messagebird", "{lowalnum:25}"),
    ("netlify", "{token:43}"),
    ("okta", "00{token:40}"),
    ("rapidapi", "{token:50}"),
    ("sendbird", "{hex:40}"),
    ("sumologic", "{lowalnum:64}"),
    ("travis", "{lowalnum:22}"),
    ("trello", "{lowalnum:32}"),
    ("twitch", "{lowalnum:30}"),
    ("twitter", "{lowalnum:45}"),
    ("zendesk", "{lowalnum:40}"),
]

# keyword forms: (kind, category, template, source)
KEYWORD_SAMPLES: list[tuple[str, str, str, str]] = [
    # private keys in files (Read output is where Claude Code numbers each line)
    ("private_key", "private_key", "«{pem:RSA PRIVATE KEY}»", GITLEAKS.format("privatekey")),
    ("private_key", "private_key", "«{pem:OPENSSH PRIVATE KEY}»", GITLEAKS.format("privatekey")),
    ("private_key", "private_key", "«{pem:PRIVATE KEY}»", GITLEAKS.format("privatekey")),
    ("private_key", "private_key", "«{pem:EC PRIVATE KEY}»", DETECT_SECRETS.format("test_data/files/private_key")),
    ("private_key", "private_key", "«{pem:PGP PRIVATE KEY BLOCK}»", GITLEAKS.format("privatekey")),
    (
        "private_key",
        "private_key",
        '{{\n  "type": "service_account",\n  "private_key": "«-----BEGIN PRIVATE KEY-----\\n{b64:64}\\n{b64:64}\\n{b64:64}\\n{b64:20}==\\n-----END PRIVATE KEY-----»\\n",\n  "client_email": "ci@acme.iam.gserviceaccount.com"\n}}',
        "Google Cloud docs: service account key file",
    ),
    (
        "private_key",
        "private_key",
        "users:\n- name: admin\n  user:\n    client-key-data: «LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQ{b64:300}»",
        "Kubernetes docs: kubeconfig",
    ),
    # AWS secret keys next to their names
    (
        "aws_secret_key",
        "cloud",
        "[default]\naws_access_key_id = «AKIA{b32:16}»\naws_secret_access_key = «{b64:40}»",
        "AWS CLI docs: credentials file",
    ),
    ("aws_secret_key", "cloud", 'export AWS_SECRET_ACCESS_KEY="«{b64:40}»"', "AWS CLI docs: environment variables"),
    (
        "aws_secret_key",
        "cloud",
        '{{"Credentials": {{"AccessKeyId": "«ASIA{b32:16}»", "SecretAccessKey": "«{b64:40}»", "SessionToken": "«{b64:300}»"}}}}',
        "AWS STS docs: AssumeRole response",
    ),
    (
        "azure",
        "cloud",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=«{b64:86}==»;EndpointSuffix=core.windows.net",
        "Azure docs: storage connection strings",
    ),
    ("azure", "cloud", "AZURE_CLIENT_SECRET=«{alnum:3}8Q~{token:34}»", GITLEAKS.format("azure")),
    (
        "azure",
        "cloud",
        "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-01-01T00:00:00Z&sig=«{alnum:43}%3D»",
        "Azure docs: SAS tokens",
    ),
    (
        "azure",
        "cloud",
        "az login --service-principal -u {uuid} -p «{password}» --tenant {uuid}",
        "Azure CLI docs: az login",
    ),
    # URLs with passwords (issue: # and @ in the password)
    (
        "url_password",
        "url",
        "DATABASE_URL=postgres://app:«{alnum:20}»@db.internal:5432/app",
        DETECT_SECRETS.format("tests/plugins/basic_auth_test.py"),
    ),
    (
        "url_password",
        "url",
        "REDIS_URL=redis://:«dB2y@qL9#4J{alnum:4}»@cache.internal:6379/0",
        "issue: password holding @ and #",
    ),
    (
        "url_password",
        "url",
        "mongodb+srv://admin:«{password}»@cluster0.mongodb.net/prod",
        "MongoDB docs: connection strings",
    ),
    (
        "url_password",
        "url",
        "git clone https://deploy:«{alnum:24}»@git.acme.io/acme/app.git",
        DETECT_SECRETS.format("tests/plugins/basic_auth_test.py"),
    ),
    (
        "url_password",
        "url",
        "pip install --index-url https://ci:«{password}»@pypi.acme.io/simple app",
        "pip docs: index-url",
    ),
    # CLI flags
    ("password", "password", "PGPASSWORD=«{password}» psql -h db.internal -U app app", "PostgreSQL docs: PGPASSWORD"),
    ("password", "password", "mysql -u root -p«{password}» -h db.internal app", "MySQL docs: -p[password]"),
    ("password", "password", "mysqldump -uroot -p'«{password}»' app > dump.sql", "MySQL docs: mysqldump"),
    (
        "password",
        "password",
        "./manage.py createsuperuser --username admin --password «{password}»",
        "GNU long options",
    ),
    ("password", "password", "curl -u admin:«{password}» https://jenkins.internal/api/json", GITLEAKS.format("curl")),
    (
        "password",
        "password",
        'curl --user "deploy:«{password}»" -X POST https://api.internal/x',
        GITLEAKS.format("curl"),
    ),
    ("password", "password", "sshpass -p '«{password}»' ssh deploy@10.0.0.5", "sshpass(1)"),
    ("password", "password", "docker login -u acme -p «{password}» registry.acme.io", "docker login docs"),
    (
        "password",
        "password",
        "openssl pkcs12 -export -passout pass:«{password}» -out cert.p12",
        "openssl-passphrase-options(1)",
    ),
    (
        "password",
        "password",
        '$pw = ConvertTo-SecureString "«{password}»" -AsPlainText -Force',
        "PowerShell docs: ConvertTo-SecureString",
    ),
    ("password", "password", "MYSQL_PWD=«{password}» mysql -u root", "MySQL docs: MYSQL_PWD"),
    ("password", "password", "docker run -e POSTGRES_PASSWORD=«{password}» postgres:16", "Docker Hub postgres image"),
    # config files
    (
        "password",
        "password",
        "machine api.heroku.com\n  login me@acme.io\n  password «{password}»\n",
        "GNU inetutils: .netrc",
    ),
    (
        "password",
        "password",
        "# ~/.pgpass\ndb.internal:5432:app:app_user:«{password}»\n*:*:*:postgres:«{password}»",
        "PostgreSQL docs: The Password File (.pgpass)",
    ),
    (
        "npm",
        "registry",
        "//registry.npmjs.org/:_authToken=«npm_{alnum:36}»\n//npm.pkg.github.com/:_authToken=«{uuid}»",
        "npm docs: .npmrc",
    ),
    (
        "docker_auth",
        "registry",
        '{{\n  "auths": {{\n    "https://index.docker.io/v1/": {{\n      "auth": "«{basic:acme}»"\n    }}\n  }}\n}}',
        "Docker docs: config.json",
    ),
    (
        "password",
        "password",
        '<packageSourceCredentials>\n  <acme>\n    <add key="Username" value="ci" />\n    <add key="ClearTextPassword" value="«{password}»" />\n  </acme>\n</packageSourceCredentials>',
        GITLEAKS.format("nuget"),
    ),
    (
        "password",
        "password",
        "<servers>\n  <server>\n    <id>nexus</id>\n    <username>ci</username>\n    <password>«{password}»</password>\n  </server>\n</servers>",
        "Maven docs: settings.xml",
    ),
    (
        "newrelic",
        "monitoring",
        "NEW_RELIC_APP_NAME=shop\nNEW_RELIC_LICENSE_KEY=«{hex:40}»\nNEW_RELIC_API_KEY=«NRAK-{upalnum:27}»",
        "New Relic docs: environment variables",
    ),
    (
        "shipping",
        "payment",
        "EASYPOST_API_KEY=«EZAK{alnum:54}»\nEASYPOST_TEST_API_KEY=«EZTK{alnum:54}»",
        GITLEAKS.format("easypost"),
    ),
    (
        "password",
        "password",
        "[credentials]\npassword = «123456789a1234»",
        DETECT_SECRETS.format("test_data/config.ini"),
    ),
    (
        "password",
        "password",
        "spring.datasource.url=jdbc:postgresql://db:5432/app\nspring.datasource.password=«{password}»",
        "Spring Boot docs: datasource properties",
    ),
    ("password", "password", "Server=db;Database=app;User Id=sa;Password=«{password}»;", "ADO.NET connection strings"),
    ("password", "password", "define('DB_PASSWORD', '«{password}»');", "WordPress docs: wp-config.php"),
    (
        "password",
        "password",
        "production:\n  adapter: postgresql\n  password: «{password}»",
        "Rails docs: database.yml",
    ),
    # assignments (gitleaks generic tps, detect-secrets keyword tests)
    ("generic_secret", "generic", "const fooApiKey = '«{alnum:32}»';", "issue: camelCase assignment"),
    ("generic_secret", "generic", '"client_secret" : "«{hex:64}»",', GITLEAKS.format("generic")),
    ("generic_secret", "generic", "mySecretString=«{alnum:30}»", GITLEAKS.format("generic")),
    ("generic_secret", "generic", "todo_secret_do_not_commit = «{alnum:30}»", GITLEAKS.format("generic")),
    ("generic_secret", "generic", "creds = «{alnum:30}»", GITLEAKS.format("generic")),
    ("generic_secret", "generic", '"credentials" : "«{hex:64}»"', GITLEAKS.format("generic")),
    ("generic_secret", "generic", "apikey = «{symbols:40}»", DETECT_SECRETS.format("tests/plugins/keyword_test.py")),
    ("generic_secret", "generic", "HEROKU_API_KEY=«{uuid}»", GITLEAKS.format("heroku")),
    ("generic_secret", "generic", "DD_API_KEY=«{hex:32}»\nDD_APP_KEY=«{hex:40}»", GITLEAKS.format("datadog")),
    ("generic_secret", "generic", "TWILIO_AUTH_TOKEN=«{hex:32}»", GITLEAKS.format("twilio")),
    (
        "generic_secret",
        "generic",
        "DISCORD_BOT_TOKEN=«MTEyMzQ1Njc4OTAxMjM0NTY3OA.{token:6}.{token:38}»",
        GITLEAKS.format("discord"),
    ),
    ("generic_secret", "generic", "CLOUDFLARE_API_TOKEN=«{token:40}»", GITLEAKS.format("cloudflare")),
    (
        "generic_secret",
        "generic",
        'curl -H "X-API-Key: «{alnum:32}»" https://api.example.com/v1/items',
        "HTTP API key headers",
    ),
    ("generic_secret", "generic", "vercel deploy --token «{alnum:24}» --prod", "Vercel CLI docs: --token"),
    (
        "bearer",
        "auth",
        'curl -H "Authorization: Bearer «{token:40}»" https://api.example.com/v1/me',
        GITLEAKS.format("curl"),
    ),
    (
        "huggingface",
        "ai",
        'curl https://api-inference.huggingface.co/models/gpt2 -H "Authorization: Bearer «hf_{alpha:34}»"',
        GITLEAKS.format("huggingface"),
    ),
    ("basic_auth", "auth", "Authorization: Basic «{basic:admin}»", "RFC 7617"),
    (
        "discord_webhook",
        "messaging",
        "DISCORD_WEBHOOK=https://discord.com/api/webhooks/{digits:18}/«{token:68}»",
        "Discord developer docs: webhooks",
    ),
    (
        "slack_webhook",
        "messaging",
        "curl -X POST https://hooks.slack.com/services/«T{upalnum:10}/B{alnum:10}/{alnum:24}» -d @msg.json",
        GITLEAKS.format("slack"),
    ),
    (
        "teams_webhook",
        "messaging",
        "https://acme.webhook.office.com/webhookb2/«{uuid}@{uuid}/IncomingWebhook/{hex:32}/{uuid}»",
        GITLEAKS.format("teams"),
    ),
    # prose
    ("password", "password", "the staging password is «El2h{alnum:8}»", "issue: password in prose"),
    (
        "password",
        "password",
        "The password for the admin account is «{password}».",
        DETECT_SECRETS.format("tests/plugins/keyword_test.py"),
    ),
    ("password", "password", "DB_PASSWORD=«BmCqPzWxLkTr»", "issue: letters-only password"),
    ("password", "password", "db_password: «xK9#mQ2z»", "issue: 8-character password"),
    (
        "password",
        "password",
        '{{"username": "admin", "password": "«{password}»"}}',
        DETECT_SECRETS.format("tests/plugins/keyword_test.py"),
    ),
    (
        "generic_secret",
        "generic",
        "my API key is «{alnum:32}», keep it safe",
        DETECT_SECRETS.format("tests/plugins/keyword_test.py"),
    ),
]

# text that must come back unchanged: scanners' false-positive examples and code full of
# key/token/password names (gitleaks generic.go fps, detect-secrets keyword tests)
NEGATIVES: list[tuple[str, str]] = [
    ('"accessor":"rA1wk0Y45YCufyfq",', GITLEAKS.format("generic") + " (false positive)"),
    ("report_access_id: e8e4df51-2054-49b0-ab1c-516ac95c691d", GITLEAKS.format("generic") + " (false positive)"),
    ('this.ultraPictureBox1.Name = "ultraPictureBox1";', GITLEAKS.format("generic") + " (false positive)"),
    ("COMMUNICATION_API_VERSION=rc0.13.0_20230412_0712-SNAPSHOT", GITLEAKS.format("generic") + " (false positive)"),
    ('author = "james.fake@ymail.com",', GITLEAKS.format("generic") + " (false positive)"),
    ("credentialsId: 'ff083f76-7804-4ef1-80e4-fe975bb9141b'", GITLEAKS.format("generic") + " (false positive)"),
    ('keyword: "Befaehigung_P2"', GITLEAKS.format("generic") + " (false positive)"),
    ('public_key = "9Cnzj4p4WGeKLs1Pt8QuKUpRKfFLfRYC9AIKjbJTWit"', GITLEAKS.format("generic") + " (false positive)"),
    ("app.keystore.file=env/cert.p12", GITLEAKS.format("generic") + " (false positive)"),
    ("key_length = XSalsa20.key_length", GITLEAKS.format("generic") + " (false positive)"),
    ("KeyPair = X25519.KeyPair", GITLEAKS.format("generic") + " (false positive)"),
    ('LLM_SECRET_NAME = "NEXUS-GPT4-API-KEY"', GITLEAKS.format("generic") + " (false positive)"),
    ("secret_length = X25519.secret_length", GITLEAKS.format("generic") + " (false positive)"),
    (
        "    access_token_url='https://github.com/login/oauth/access_token',",
        GITLEAKS.format("generic") + " (false positive)",
    ),
    ('clientId = "73082700-1f09-405b-80d0-3131bfd6272d"', GITLEAKS.format("generic") + " (false positive)"),
    ("password = settings.DATABASES['default']['PASSWORD']", DETECT_SECRETS.format("tests/plugins/keyword_test.py")),
    ("password: ${link}", DETECT_SECRETS.format("tests/plugins/keyword_test.py")),
    ('password = "somefakekey"', DETECT_SECRETS.format("tests/plugins/keyword_test.py")),
    ("aws_access_key = 'AKIAIOSFODNN7EXAMPLE'", DETECT_SECRETS.format("test_data/each_secret.py")),
    (
        "aws_secret_access_key = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'",
        DETECT_SECRETS.format("test_data/each_secret.py"),
    ),
    ("uuid_should_be_ignored: '203db13e-70c7-462b-9a3d-bf32640cb0be'", DETECT_SECRETS.format("test_data/config.yaml")),
    ("the password is stored in Vault and rotated weekly", "prose with password-like words"),
    ("git log --oneline\n8b1118b376c313ed420e5133ba91307817ed52c2 fix token refresh", "git output"),
]
