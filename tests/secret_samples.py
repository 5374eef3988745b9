"""Fake credentials of every kind the detector knows, and ordinary engineering text that must pass.

Shared by the detector's tests and its benchmark. Every credential is assembled at run time from
random characters in the real format, so no file holds a string a push-protection scanner would
take for a real key.
"""

from __future__ import annotations

import base64
import json
import random
import string

UP = string.ascii_uppercase
LOW = string.ascii_lowercase
DIG = string.digits
ALNUM = string.ascii_letters + DIG
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()


def sampler(seed: int):
    rng = random.Random(seed)

    def rand(alphabet: str, n: int) -> str:
        # at least one digit and one letter where the alphabet has both, as real keys do
        while True:
            out = "".join(rng.choice(alphabet) for _ in range(n))
            mixed = set(alphabet) & set(DIG) and any(c.isalpha() for c in alphabet)
            if n < 8 or not mixed or (any(c.isdigit() for c in out) and any(c.isalpha() for c in out)):
                return out

    return rand


def _jwt(rand) -> str:
    def seg(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return seg({"alg": "HS256", "typ": "JWT"}) + "." + seg({"sub": rand(ALNUM, 10), "iat": 1700000000}) + "." + rand(URLSAFE, 43)


def _generators(r) -> dict[str, list]:
    """kind → makers of one text holding one credential of that kind (each maker a lambda)."""
    begin = "-----BEGIN "
    return {
        "private key block": [lambda: f"{begin}RSA PRIVATE KEY-----\n{r(B64, 64)}\n", lambda: f"{begin}OPENSSH PRIVATE KEY-----\n{r(B64, 70)}"],
        "PuTTY private key": [lambda: "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none"],
        "age secret key": [lambda: "AGE-SECRET-KEY-1" + r(BECH32, 58)],
        "AWS access key": [lambda: "use AKIA" + r(UP + DIG, 16), lambda: "ASIA" + r(UP + DIG, 16) + " expires"],
        "AWS secret access key": [lambda: "aws_secret_access_key = " + r(B64, 40)],
        "GitHub token": [lambda: "ghp_" + r(ALNUM, 36), lambda: "github_pat_" + r(ALNUM + "_", 82)],
        "GitLab token": [lambda: "glpat-" + r(URLSAFE, 20)],
        "Slack token": [lambda: f"xoxb-{r(DIG, 12)}-{r(DIG, 12)}-{r(ALNUM, 24)}", lambda: f"xoxp-{r(DIG, 11)}-{r(DIG, 11)}-{r(DIG, 12)}-{r(HEX, 32)}"],
        "Slack app token": [lambda: f"xapp-1-A{r(UP + DIG, 10)}-{r(DIG, 13)}-{r(HEX, 64)}"],
        "Slack webhook URL": [lambda: f"https://hooks.slack.com/services/T{r(UP + DIG, 8)}/B{r(UP + DIG, 8)}/{r(ALNUM, 24)}"],
        "Stripe key": [lambda: "sk_" + "live_" + r(ALNUM, 24)],
        "Anthropic API key": [lambda: "sk-ant-api03-" + r(URLSAFE, 80)],
        "OpenAI API key": [lambda: "sk-" + r(ALNUM, 48), lambda: "sk-proj-" + r(URLSAFE, 60)],
        "Groq API key": [lambda: "gsk_" + r(ALNUM, 52)],
        "xAI API key": [lambda: "xai-" + r(ALNUM, 80)],
        "Perplexity API key": [lambda: "pplx-" + r(ALNUM, 48)],
        "Replicate API token": [lambda: "r8_" + r(ALNUM, 37)],
        "Google API key": [lambda: "AIza" + r(URLSAFE, 35)],
        "Google OAuth token": [lambda: "ya29." + r(URLSAFE, 60)],
        "Google OAuth client secret": [lambda: "GOCSPX-" + r(URLSAFE, 28)],
        "JWT": [lambda: "token " + _jwt(r)],
        "Azure storage account key": [lambda: f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={r(B64, 86)}==;EndpointSuffix=core.windows.net"],
        "Azure SAS token": [lambda: f"https://acme.blob.core.windows.net/c?sv=2022-11-02&ss=b&sp=r&se=2026-01-01&sig={r(ALNUM, 43)}%3D"],
        "Azure AD client secret": [lambda: r(ALNUM, 3) + "8Q~" + r(ALNUM + "_~.-", 31)],
        "npm token": [lambda: "//registry.npmjs.org/:_authToken=npm_" + r(ALNUM, 36)],
        "PyPI token": [lambda: "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 70)],
        "RubyGems API key": [lambda: "rubygems_" + r(HEX, 48)],
        "NuGet API key": [lambda: "oy2" + r(LOW + DIG, 43)],
        "Clojars token": [lambda: "CLOJARS_" + r(LOW + DIG, 60)],
        "Hugging Face token": [lambda: "hf_" + r(string.ascii_letters, 34)],
        "Twilio API key": [lambda: "SK" + r(HEX, 32)],
        "SendGrid API key": [lambda: "SG." + r(URLSAFE, 22) + "." + r(URLSAFE, 43)],
        "Mailgun key": [lambda: "key-" + r(HEX, 32)],
        "Mailchimp API key": [lambda: r(HEX, 32) + "-us12"],
        "DigitalOcean token": [lambda: "dop_v1_" + r(HEX, 64), lambda: "doo_v1_" + r(HEX, 64)],
        "Shopify token": [lambda: "shpat_" + r(HEX, 32), lambda: "shpss_" + r(HEX, 32)],
        "Discord bot token": [lambda: "M" + r(ALNUM, 23) + "." + r(URLSAFE, 6) + "." + r(URLSAFE, 27)],
        "Discord webhook URL": [lambda: f"https://discord.com/api/webhooks/{r(DIG, 18)}/{r(URLSAFE, 68)}"],
        "Square token": [lambda: "EAAA" + r(URLSAFE, 60), lambda: "sq0csp-" + r(URLSAFE, 43)],
        "Atlassian API token": [lambda: "ATATT3" + r(URLSAFE, 186)],
        "Databricks token": [lambda: "dapi" + r(HEX, 32)],
        "Vault token": [lambda: "hvs." + r(URLSAFE, 90), lambda: "hvb." + r(URLSAFE, 138)],
        "Linear API key": [lambda: "lin_api_" + r(ALNUM, 40)],
        "Postman API key": [lambda: f"PMAK-{r(HEX, 24)}-{r(HEX, 34)}"],
        "Doppler token": [lambda: "dp.pt." + r(ALNUM, 43)],
        "Grafana token": [lambda: "glc_" + r(B64, 40), lambda: f"glsa_{r(ALNUM, 32)}_{r(HEX, 8)}"],
        "New Relic key": [lambda: "NRAK-" + r(UP + DIG, 27)],
        "Telegram bot token": [lambda: f"{r(DIG, 10)}:AA{r(URLSAFE, 33)}"],
        "Heroku API key": [lambda: "HRKU-" + r(URLSAFE, 60)],
        "Alibaba access key": [lambda: "LTAI" + r(ALNUM, 20)],
        "Dropbox token": [lambda: "sl." + r(URLSAFE, 136)],
        "Fly.io token": [lambda: "fo1_" + r(URLSAFE, 43)],
        "PlanetScale token": [lambda: "pscale_tkn_" + r(URLSAFE, 43)],
        "Pulumi token": [lambda: "pul-" + r(HEX, 40)],
        "Terraform Cloud token": [lambda: r(ALNUM, 14) + ".atlasv1." + r(URLSAFE, 67)],
        "Sentry token": [lambda: "sntryu_" + r(HEX, 64)],
        "Notion token": [lambda: "ntn_" + r(ALNUM, 46)],
        "Airtable token": [lambda: "pat" + r(ALNUM, 14) + "." + r(HEX, 64)],
        "Figma token": [lambda: "figd_" + r(URLSAFE, 40)],
        "Mapbox secret token": [lambda: "sk.eyJ" + r(URLSAFE, 80)],
        "Docker Hub token": [lambda: "dckr_pat_" + r(URLSAFE, 27)],
        "Contentful token": [lambda: "CFPAT-" + r(URLSAFE, 43)],
        "Supabase token": [lambda: "sbp_" + r(HEX, 40)],
        "Prefect API key": [lambda: "pnu_" + r(ALNUM, 36)],
        "Typeform token": [lambda: "tfp_" + r(ALNUM, 59)],
        "Basic auth header": [lambda: "Authorization: Basic " + base64.b64encode(f"deploy:{r(ALNUM, 14)}".encode()).decode()],
        "Bearer token": [lambda: "Authorization: Bearer " + r(URLSAFE + ".", 40)],
        "password on a curl command line": [lambda: f"curl -u deploy:{r(ALNUM, 12)} https://ci.example.com/api"],
        "password on a mysql command line": [lambda: f"mysql -u root -p{r(ALNUM, 10)} app_db"],
        "password assignment": [lambda: 'db_password = "' + r(ALNUM, 12) + '"', lambda: "DB_PASS=" + r(LOW, 8),
                                lambda: '{"password": "' + r(ALNUM, 10) + '"}'],
        "secret assignment": [lambda: "SECRET_KEY=" + r(LOW, 20), lambda: "API_TOKEN=" + r(ALNUM, 24),
                              lambda: "ENCRYPTION_KEY=" + r(HEX, 32), lambda: "client_secret: '" + r(ALNUM, 16) + "'"],
        "high-entropy environment value": [lambda: "STRIPE_LIVE=" + r(ALNUM, 32)],
        "connection string with a password": [lambda: f"postgres://app:{r(ALNUM, 12)}@db.internal:5432/prod"],
        "authorization header": [lambda: "Authorization: Token " + r(ALNUM, 40), lambda: f"Authorization: {_uuid(r)}"],
        **_structured_generators(r),
    }


def _uuid(r) -> str:
    return f"{r(HEX, 8)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 12)}"


def _structured_generators(r) -> dict[str, list]:
    """Kinds found by a structure or a vendor prefix added after gitleaks' samples were run."""
    b64 = lambda n: r(B64, n)  # noqa: E731
    return {
        "Kubernetes Secret data": [
            lambda: f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  token: {b64(24)}=\n",
            lambda: f"apiVersion: v1\ndata:\n  .dockercfg: |\n    {b64(60)}\nkind: Secret\n"],
        "Bundler registry credentials": [lambda: f"BUNDLE_ENTERPRISE__CONTRIBSYS__COM={r(HEX, 8)}:{r(HEX, 8)}"],
        "Claude Code session URL": [lambda: "https://claude.ai/code/session_" + r(ALNUM, 24)],
        ".NET config password": [lambda: f'<add key="ClearTextPassword" value="{r(ALNUM, 14)}" />'],
        "SonarQube token": [lambda: "squ_" + r(HEX, 40)],
        "Sourcegraph token": [lambda: f"sgp_{r(HEX, 16)}_{r(HEX, 40)}"],
        "1Password secret key": [lambda: "A3-" + "-".join([r(UP + DIG, 6), r(UP + DIG, 6)] + [r(UP + DIG, 5) for _ in range(4)])],
        "1Password service account token": [lambda: "ops_eyJ" + b64(300)],
        "Cloudflare origin CA key": [lambda: f"v1.0-{r(HEX, 24)}-{r(HEX, 146)}"],
        "Intra 42 client secret": [lambda: "s-s4t2ud-" + r(HEX, 64)],
        "Azure Data Factory integration key": [lambda: f"IR@{_uuid(r)}@adf-app-001@we@{b64(43)}="],
        "Infracost API key": [lambda: "ico-" + r(ALNUM, 32)],
        "Sumo Logic access ID": [lambda: 'SUMO_ACCESS_ID = "su' + r(ALNUM, 12) + '"'],
        "private key (DER)": [lambda: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + b64(120),
                              lambda: "MIIEowIBAAKCAQEA" + b64(120)],
    }


def positives(seed: int = 20261201, per_kind: int = 1) -> list[tuple[str, str]]:
    """(kind, text) pairs: `per_kind` texts of each maker of every kind, inside a sentence."""
    r = sampler(seed)
    out = []
    for kind, makers in sorted(_generators(r).items()):
        for maker in makers:
            for i in range(per_kind):
                secret = maker()
                out.append((kind, [f"{secret}", f"Deploy note: {secret} (rotate monthly).", f"run:\n  {secret}\n"][i % 3]))
    return out


# Ordinary engineering text: docs, configs with placeholders, code, logs and the shapes that once
# raised false alarms (an empty `.env.example` value, YAML nested under `password:`, `xoxo-` in a URL).
NEGATIVES = [
    "We redistribute the Redis cache every night; passwords are rotated by the vault.",
    "Never store a password in memory; the secret manager holds it.",
    'password = os.environ["DB_PASSWORD"]', "password = get_password()", "secret = settings.secret",
    "password = user_password", "api_key = None", 'password = ""', 'password: "<your-password>"',
    "PASSWORD=${DB_PASSWORD}", "token = $GITHUB_TOKEN", "if password == expected:",
    "postgres://user:${PGPASSWORD}@localhost/db", "postgres://localhost:5432/app",
    'url = f"postgres://{user}:{password}@{host}/db"', "dsn = 'mysql://%(user)s:%(pw)s@%(host)s/app' % cfg",
    "https://example.com/docs?page=2", "The sk-learn package and task-runner scripts are fine.",
    "Use sk-learn-compatible-estimators-and-pipelines-everywhere here.",
    "Use AKIA-style keys only via the credentials file.",
    "```python\ndef login(user, password):\n    return check(user, password)\n```",
    "- Prefer explicit files over hidden agent memory.", "Store the JWT in an httpOnly cookie, never in localStorage.",
    "password: see the team vault", "secret=***", 'api_key: "${{ secrets.API_KEY }}"',
    "password=os.environ.get('PW')", 'api_key = os.getenv("API_KEY")', "export API_KEY=$(pass show api)",
    "SECRET_KEY = os.urandom(32)", "password_min_length = 12", "access_token: {{ vault_token }}",
    "## 2026-07-21 - Target Python 3.10+ minimum version\nDecision:\nSupport Python 3.10+.",
    "API_TOKEN=\nDB_PASS=\nSECRET_KEY=\nDEBUG=true\n", "SECRET_KEY=\n# set in production\nALLOWED_HOSTS=*\n",
    "API_TOKEN=changeme\nDB_PASS=<password>\n", "ENCRYPTION_KEY=${ENCRYPTION_KEY}\n",
    "database:\n  password:\n    from_secret: db_password\n", "secret:\n  name: app-secrets\n  key: token\n",
    "secrets:\n  - name: registry\n    valueFrom: vault\n", "password:\n  min_length: 12\n  require_digit: true\n",
    "See https://xoxo-hugs.example.com/xoxo-gallery for the team photos.", "<a href='/xoxo-2024'>xoxo</a>",
    "GIT_SHA=3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39", "BUILD_ID=20261201-1234-abcdef",
    "IMAGE=ghcr.io/acme/api:2026.12.01", "NODE_OPTIONS=--max-old-space-size=4096",
    "PATH=/usr/local/bin:/usr/bin:/bin", "PYTHONPATH=src:tests", "DATABASE_URL=postgres://localhost/app_dev",
    "curl -u $USER:$TOKEN https://api.example.com", "curl -sSL https://install.example.com | sh",
    "curl --user \"$CI_USER:$CI_PASS\" https://ci.example.com", "mysql -u root -p app_db",
    "mysql -h db -u app -p\"$MYSQL_PWD\" app", "mysqldump --single-transaction app > dump.sql",
    "Authorization: Bearer <token>", "Authorization: Bearer $ACCESS_TOKEN", "Authorization: Basic <base64>",
    "Use a bearer token from the login endpoint; basic auth is disabled.",
    "The SK of the table is the sort key; PK is the partition key.", "key-value store", "monkey-patching the client",
    "Set the hf_hub cache to /data/hf.", "The npm_config_cache variable points to ~/.npm.",
    "pypi-server runs on port 8080", "dapi is the Databricks CLI's prefix for tokens", "See RFC 7519 for JWT claims.",
    "sig=abc is the query parameter name", "The shp file format holds shapes.", "Use dop_v1_ prefixes for tokens.",
    "Run `kubectl get secret app -o yaml` to inspect it.", "Rotate the Vault root token after unseal.",
    "The SendGrid key lives in SENDGRID_API_KEY.", "Telegram bots talk to api.telegram.org.",
    "age -r age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p secret.txt",
    "PuTTY keys are converted with puttygen.", "Mailgun sends from mg.example.com.",
    "The Discord bot needs the MESSAGE_CONTENT intent.", "Linear issue ENG-1234 tracks the fix.",
    "Grafana dashboards live in ops/grafana/.", "New Relic APM is enabled in staging only.",
    "Square webhooks are verified with the signature key from the dashboard.",
    "Atlassian Jira project KEY is PLAT.", "Doppler injects env vars at runtime.", "Postman collections live in api/postman/.",
    "The token bucket refills at 10 tokens per second.", "tokens: 1200 of 1500 used",
    "max_tokens: 4096", "secret_santa_2025 channel", "password reset emails expire after 15 minutes.",
    "def test_login(client):\n    client.post('/login', data={'user': 'a', 'password': password})",
    "assert response.headers['Authorization'].startswith('Bearer ')",
    "TOKEN_TTL_SECONDS=3600", "SESSION_COOKIE_SECURE=True", "PASSWORD_HASHERS = [\"django.contrib.auth.hashers.Argon2PasswordHasher\"]",
    "AUTH_PASSWORD_VALIDATORS = []", "KEY_PREFIX=app", "CACHE_KEY_PREFIX=v2", "PRIMARY_KEY=id", "SORT_KEY=created_at",
    "Commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the race.", "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "uuid 123e4567-e89b-12d3-a456-426614174000 is the tenant id", "2026-12-01T23:40:00.123Z INFO request done in 12ms",
    "src/memory_custodian/ledger/store.py:120: in append", "Traceback (most recent call last):\n  File \"app.py\", line 3",
    "pip install 'memory-custodian[test]'", "docker run -e POSTGRES_PASSWORD -p 5432:5432 postgres:16",
    "ssh -i ~/.ssh/id_ed25519 deploy@host", "gpg --armor --export alice@example.com",
    "The session-start hook must stay under 100 ms.", "Index lines look like `[#k7m2x9qa] gotcha/high · title`.",
    "Use `git push --force-with-lease`, never `--force`.", "Tests run with `pytest -q -n 0`.",
    "The `ghp_` prefix marks a GitHub classic token; never paste one.", "AIza keys are Google API keys.",
    "BEGIN TRANSACTION; UPDATE users SET password_hash = $1 WHERE id = $2; COMMIT;",
    "SELECT token FROM sessions WHERE user_id = ?", "password_hash = bcrypt.hashpw(pw, bcrypt.gensalt())",
    "const apiKey = process.env.API_KEY;", "let secret = config.get(\"secret\")?;", "auth_token := os.Getenv(\"AUTH_TOKEN\")",
    "\"secret\": null", "token: ''", "password: !vault |", "api_key: ${API_KEY:-}", "client_secret: ${{ secrets.CLIENT_SECRET }}",
    "The lock at .cache/lock serialises writers.", "Mode 0o600 for the lock file.", "Base64 of 'hello' is aGVsbG8=.",
    "Basic usage: run `memory-custodian read`.", "basic blocks are merged by the optimizer", "Bearer of bad news: the build is red.",
    "curl -X POST https://api.example.com/v1/items -d @item.json", "mysql> SHOW TABLES;",
    "See docs/memory/decisions.md for the decision record.", "The M1 chip runs the suite in 30 s.",
    "Order: MNOP.qrstuv.wxyz is not a token.", "Version 1.2.3-rc.4+build.5", "ratio 0.97 / 0.87",
]


def negatives() -> list[str]:
    """Ordinary engineering text that must pass: the shapes that once raised alarms, then realistic text."""
    return list(NEGATIVES) + list(ENGINEERING_TEXT)


# Ordinary engineering text of the kinds a project memory collects: commit metadata, manifests and
# lock files full of hashes, UUIDs and base64 test vectors, environment files without secrets.
ENGINEERING_TEXT = [
    "Merge pull request #482 from acme/fix-lock-timeout\n\nfix: release the index lock before the rename (9fceb02)",
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39\nAuthor: Dana Lee <dana@example.com>\nDate:   Tue Dec 1 10:02:11 2026 +0000",
    "Signed-off-by: Dana Lee <dana@acme.dev>\nReviewed-on: https://review.acme.dev/c/platform/+/48213",
    "Change-Id: I8f2c0d2a6b1e4f3a9c7d5e1b2a3c4d5e6f7a8b9c",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\ndata:\n  LOG_LEVEL: info\n  FEATURE_FLAGS: a,b\n",
    "apiVersion: v1\nkind: Secret\ntype: Opaque\nstringData:\n  password: ${DB_PASSWORD}\n",
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\ntype: kubernetes.io/tls\ndata: {}\n",
    '<script src="https://cdn.example.com/lib.js" integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC"'
    ' crossorigin="anonymous"></script>',
    '"integrity": "sha512-3y1QWd2e4x1rV7Bq0Fh8n1Ax2x9dY0i3Lq8K5n8yZq0Z9mYjJ2XhU0cQm0QZ5mVq1F8r6zT3n8s5w4t7v9x0yA=="',
    "golang.org/x/oauth2 v0.15.0 h1:s8pnnxNVzjWyrvYdFUQq5llS1PX2zhPXmccZv99h7uQ=",
    "image: ghcr.io/acme/api@sha256:4b1d0e8a5f0c3b2a1d9e8f7c6b5a4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e",
    "tenant_id: 3fa85f64-5717-4562-b3fc-2c963f66afa6\nrequest_id=7c9e6679-7425-40de-944b-e07fc1f90ae7",
    '{"correlationKey": "3fa85f64-5717-4562-b3fc-2c963f66afa6", "routing_key": "orders.created.v1.2024"}',
    'assert b64encode(b"hello world") == b"aGVsbG8gd29ybGQ="',
    "HMAC-SHA256 test vector (RFC 4231 case 2): key = 0x4a656665, expected "
    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    'signature = "t=1492774577,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"',
    "https://github.com/acme/api/compare/v1.2.3...v1.3.0",
    "https://console.cloud.google.com/storage/browser/acme-backups?project=acme-prod-123456",
    "curl -H 'Accept: application/vnd.github+json' https://api.github.com/repos/acme/api/commits/9fceb02",
    'curl -sS -H "Authorization: Bearer $(gh auth token)" https://api.github.com/user',
    "The Authorization header must use the Bearer scheme (RFC 6750 section 2.1).",
    'headers = {"Authorization": f"Bearer {token}"}',
    'digest = hashlib.sha256(b"payload").hexdigest()  # e3b0c44298fc1c149afbf4c8996fb924',
    "env:\n  NODE_ENV: production\n  API_URL: https://api.staging.acme.dev\n  SENTRY_DSN: ${{ secrets.SENTRY_DSN }}",
    "- uses: actions/checkout@b4ffde65f46336ab88eb53be808477a3936bae11 # v4.1.1",
    ".env.example:\nSTRIPE_KEY=\nSTRIPE_SECRET=\nMAILGUN_DOMAIN=mg.example.com\n",
    'resource "aws_kms_key" "backups" {\n  description = "backups"\n  deletion_window_in_days = 10\n}',
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG4rT3vTt99Ox5kndS4HmgTrKBT8SKzhK4rhGkEVGlCI dana@laptop",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJRTESMBAGA1UEChMJQmFsdGltb3Jl\n",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n",
    "PGP fingerprint: 73019E949C1D3C3D1BE8B718C7CD51A565AB592C",
    "Semantic version bump: 2.14.0 -> 2.15.0-rc.1 (build 20261201.4)",
    "docker login ghcr.io -u dana --password-stdin < ~/.ghcr_token",
    "mysql -h db.internal -u app -p app_production < dump.sql",
    "psql postgresql://app@db.internal:5432/app_production",
    "redis-cli -u redis://default@cache.internal:6379/0",
    "kubectl create secret generic db --from-literal=username=app --from-env-file=.env",
    "The API key header is X-API-Key; keys are 40 hex characters and rotate every 90 days.",
    "Rotate the Stripe restricted key (rk_live_…) in the dashboard, never in code.",
    "export AWS_PROFILE=staging AWS_REGION=eu-west-1",
    'CACHE_KEY = "v2:user:{id}"\nPARTITION_KEY = "tenant_id"',
    "sha1sum: 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12  quick_brown_fox.txt",
    'base64 test: "VGhlIHF1aWNrIGJyb3duIGZveA==" decodes to "The quick brown fox"',
    "password_reset_token_ttl: 3600\ntoken_endpoint: https://login.acme.dev/oauth2/v2.0/token",
    "secret_name: prod/api/db-credentials",
    "aws secretsmanager get-secret-value --secret-id prod/api/db --query SecretString",
    'Stripe webhook signing secret lives in STRIPE_WEBHOOK_SECRET (see the "Platform" vault).',
    "ENCRYPTION_KEY_ID=arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
    "GIT_COMMIT=9fceb02d0ae598e95dc970b74767f19372d61af8",
    "SENTRY_DSN=https://3f2a9c1e8b7d4a5f@o123456.ingest.sentry.io/4504",
    "DATABASE_URL=postgres://app@db.internal:5432/app_production",
    "IMAGE_DIGEST=sha256:4b1d0e8a5f0c3b2a1d9e8f7c6b5a4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e",
    "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector.observability.svc.cluster.local:4317",
    "Flaky: tests/test_store.py::test_append_after_crash fails 1 in 40 runs on the 2-core runner.",
    "Use `git rebase -i HEAD~3` to squash; never rewrite main.",
    "The migration 0042_add_index_on_notes_kind.py takes 3 minutes on the 12 GB staging copy.",
    "CloudFront URL: https://d111111abcdef8.cloudfront.net/images/logo.png?v=20261201",
    "Presigned URLs expire after 900 s; the X-Amz-Signature query parameter is regenerated per request.",
    "pip hash: --hash=sha256:2cf0a2d9a0a5f6e2d64b43ed2a0e3fc2d5d3f1a5b3a2c1d0e9f8a7b6c5d4e3f2",
    "Jira: PLAT-1234 (lock timeout), PLAT-1240 (secret scanner false alarms on base64 fixtures).",
    "Our token bucket: capacity=100, refill_rate=10/s, burst_window=1s.",
    "api_version: 2024-10-01\napi_base: https://api.acme.dev/v2",
    "Basic health check: GET /healthz returns 200 with body ok.",
    "The JWT is signed with RS256; the JWKS lives at https://login.acme.dev/.well-known/jwks.json.",
]
