"""The secret detector: one true positive per kind, and ordinary prose and code that must pass.

Fake credentials are assembled at run time from random characters in the real formats, so this
file holds no string that a push-protection scanner would take for a real key.
"""

from __future__ import annotations

import random
import string

import pytest
import secret_samples
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_custodian.base.errors import SecretFound
from memory_custodian.base.secrets import SecretFinding, refuse_secrets, scan

RNG = random.Random(20261130)
UPPER_DIGITS = string.ascii_uppercase + string.digits
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"


def rand(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def jwt() -> str:
    import base64
    import json

    def seg(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    return seg({"alg": "HS256", "typ": "JWT"}) + "." + seg({"sub": rand(ALNUM, 10), "iat": 1700000000}) + "." + rand(URLSAFE, 43)


PEM_HEAD = "-----BEGIN " + "RSA PRIVATE KEY-----"
OPENSSH_HEAD = "-----BEGIN " + "OPENSSH PRIVATE KEY-----"

POSITIVES = [
    ("private key block", f"key:\n{PEM_HEAD}\n{rand(ALNUM, 64)}\n-----END RSA PRIVATE KEY-----\n"),
    ("private key block", f"{OPENSSH_HEAD}\n{rand(ALNUM, 70)}\n"),
    ("AWS access key", "Use key " + "AKIA" + rand(UPPER_DIGITS, 16) + " for uploads."),
    ("AWS access key", "temporary creds ASIA" + rand(UPPER_DIGITS, 16)),
    ("AWS secret access key", "aws_secret_access_key = " + rand(ALNUM + "/+", 40)),
    ("GitHub token", "token ghp_" + rand(ALNUM, 36)),
    ("GitHub token", "gho_" + rand(ALNUM, 36)),
    ("GitHub token", "github_pat_" + rand(ALNUM + "_", 82)),
    ("GitLab token", "CI uses glpat-" + rand(URLSAFE, 20)),
    ("Slack token", "bot xoxb-" + rand(string.digits, 12) + "-" + rand(string.digits, 12) + "-" + rand(ALNUM, 24)),
    ("Slack webhook URL",
     "post to https://hooks.slack.com/services/T" + rand(UPPER_DIGITS, 8) + "/B" + rand(UPPER_DIGITS, 8) + "/" + rand(ALNUM, 24)),
    ("Stripe key", "stripe " + "sk_" + "live_" + rand(ALNUM, 24)),
    ("Stripe key", "rk_" + "test_" + rand(ALNUM, 24)),
    ("OpenAI API key", "OPENAI key sk-" + rand(ALNUM, 48)),
    ("OpenAI API key", "sk-proj-" + rand(URLSAFE, 60)),
    ("Anthropic API key", "sk-ant-" + "api03-" + rand(URLSAFE, 80)),
    ("Google API key", "maps key AIza" + rand(URLSAFE, 35)),
    ("Google OAuth token", "bearer ya29." + rand(URLSAFE, 60)),
    ("Google OAuth client secret", "GOCSPX-" + rand(URLSAFE, 28)),
    ("JWT", "Authorization: Bearer " + jwt()),
    ("password assignment", 'db_password = "' + rand(ALNUM, 12) + '"'),
    ("password assignment", "PASSWORD=" + rand(string.ascii_lowercase, 6) + "42"),
    ("password assignment", '{"password": "' + rand(ALNUM, 10) + '"}'),
    ("secret assignment", "client_secret: '" + rand(ALNUM, 16) + "'"),
    ("secret assignment", "API_KEY=" + rand(ALNUM, 8) + "9x"),
    ("connection string with a password", "postgres://app:" + rand(ALNUM, 12) + "@db.internal:5432/prod"),
    ("connection string with a password", "mongodb+srv://admin:" + rand(ALNUM, 10) + "@cluster0.example.net/test"),
]


@pytest.mark.parametrize("kind,text", POSITIVES, ids=[f"{k}-{i}" for i, (k, _t) in enumerate(POSITIVES)])
def test_true_positive_per_kind(kind, text):
    findings = scan(text)
    assert [f.kind for f in findings] == [kind], findings


def test_every_advertised_kind_has_a_true_positive():
    from memory_custodian.base.secret_rules import RULES

    covered = {k for k, _ in POSITIVES} | {k for k, _ in secret_samples.positives()}
    assert {k for k, _, _ in RULES} <= covered
    assert len(covered) >= 40


@pytest.mark.parametrize("kind,text", secret_samples.positives(seed=7))
def test_generated_sample_of_every_kind_is_caught_as_its_kind(kind, text):
    assert [f.kind for f in scan(text)] == [kind]


@pytest.mark.parametrize("text", secret_samples.negatives())
def test_ordinary_engineering_text_passes(text):
    assert scan(text) == []


NEGATIVES = [
    "We redistribute the Redis cache every night; passwords are rotated by the vault.",
    "Never store a password in memory; the secret manager holds it.",
    'password = os.environ["DB_PASSWORD"]',
    "password = get_password()",
    "secret = settings.secret",
    "password = user_password",
    "api_key = None",
    'password = ""',
    'password: "<your-password>"',
    "PASSWORD=${DB_PASSWORD}",
    "token = $GITHUB_TOKEN",
    "if password == expected:",
    "postgres://user:${PGPASSWORD}@localhost/db",
    "postgres://localhost:5432/app",
    'url = f"postgres://{user}:{password}@{host}/db"',
    "dsn = 'mysql://%(user)s:%(pw)s@%(host)s/app' % cfg",
    "https://example.com/docs?page=2",
    "The sk-learn package and task-runner scripts are fine.",
    "Use sk-learn-compatible-estimators-and-pipelines-everywhere here.",
    "Stripe publishable key pk_" + "live_" + "51HqLyjWDarjtT1zdp7dc" + " is public by design.",
    "Use AKIA-style keys only via the credentials file.",
    "```python\ndef login(user, password):\n    return check(user, password)\n```",
    "- Prefer explicit files over hidden agent memory.",
    "Store the JWT in an httpOnly cookie, never in localStorage.",
    "password: see the team vault",
    "secret=***",
    'api_key: "${{ secrets.API_KEY }}"',
    "password=os.environ.get('PW')",
    'api_key = os.getenv("API_KEY")',
    "export API_KEY=$(pass show api)",
    "SECRET_KEY = os.urandom(32)",
    "password_min_length = 12",
    "access_token: {{ vault_token }}",
    "## 2026-07-21 - Target Python 3.10+ minimum version\nDecision:\nSupport Python 3.10+.",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_prose_and_code_pass(text):
    assert scan(text) == []


def test_fixture_memories_are_clean():
    from conftest import MC_FIXTURES

    for path in sorted(MC_FIXTURES.rglob("*.md")):
        assert scan(path.read_text(encoding="utf-8")) == [], path


def test_finding_reports_line_and_column_not_the_secret():
    key = "AKIA" + rand(UPPER_DIGITS, 16)
    text = f"line one\nsecond line has {key} inside\n"
    (finding,) = scan(text)
    assert (finding.line, finding.column) == (2, 17)
    assert key not in repr(finding) and key not in str(finding.to_dict())
    assert set(finding.to_dict()) == {"kind", "line", "column"}


def test_refuse_secrets_names_kind_and_line_never_the_value():
    key = "ghp_" + rand(ALNUM, 36)
    with pytest.raises(SecretFound) as exc:
        refuse_secrets(f"ok\nok\nuse {key}", "the text to add")
    message = exc.value.one_line()
    assert message == (
        "the text to add contains what looks like a GitHub token at line 3 — remove it; "
        "secrets must not be stored in memory"
    )
    assert key not in message
    assert exc.value.exit_code == 2  # a secret is bad input


def test_refuse_secrets_passes_clean_text():
    refuse_secrets("Use Postgres for persistence.", "the text to add")


def test_overlapping_patterns_report_one_finding():
    text = "token = '" + jwt() + "'"
    assert len(scan(text)) == 1


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=string.ascii_lowercase + " .,\n", max_size=300))
def test_lowercase_prose_never_flags(text):
    assert scan(text) == []


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200), st.text(max_size=200))
def test_a_key_is_found_wherever_it_is_embedded(before, after):
    key = "AKIA" + rand(UPPER_DIGITS, 16)
    findings = scan(before + " " + key + " " + after)
    # an assignment found around it (`SECRET: AKIA…`) reports the span once, under that kind
    assert any(f.kind in ("AWS access key", "secret assignment") for f in findings)
    assert all(isinstance(f, SecretFinding) for f in findings)


@pytest.mark.parametrize("text", ["curl " * 5000, "mysql " * 5000, "Sumoa1" * 6000, "curl -X POST " * 3000],
                         ids=["curl", "mysql", "sumo", "curl-options"])
def test_a_run_of_command_words_scans_in_linear_time(text):
    # each of these took over a second when a command's options were searched past the next command
    import time

    started = time.perf_counter()
    scan(text)
    assert time.perf_counter() - started < 0.5
