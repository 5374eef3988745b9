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
    return list(NEGATIVES)
