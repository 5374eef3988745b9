"""Secrets: a corpus of real-format (generated, never real) credentials and of ordinary prose and
code, run through every way text reaches memory. Nothing with a secret may reach disk, and the
error must name the kind without echoing the value; ordinary text must pass.

`corpus()` is shared with `benchmarks/fuzz.py`, which prints the detector's catch and false-alarm
figures for the README.
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

import pytest
from conftest import run_cli

from memory_custodian.base.errors import SecretFound
from memory_custodian.base.secrets import scan
from memory_custodian.memory import Memory


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


AN = string.ascii_letters + string.digits
UP = string.ascii_uppercase + string.digits
B64 = AN + "+/"
URLSAFE = AN + "-_"


def _b64url(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def secrets_corpus(seed: int = 8, per_kind: int = 6) -> list[tuple[str, str]]:
    """(kind, text) pairs: each text carries one generated credential in a realistic sentence."""
    rng = random.Random(seed)
    makers = {
        "AWS access key": lambda: "AKIA" + _r(rng, UP, 16),
        "AWS secret access key": lambda: "aws_secret_access_key = " + _r(rng, B64, 40),
        "GitHub token": lambda: rng.choice(["ghp_", "gho_", "ghs_", "ghu_"]) + _r(rng, AN, 36),
        "GitHub fine-grained token": lambda: "github_pat_" + _r(rng, AN, 22) + "_" + _r(rng, AN, 59),
        "GitLab token": lambda: "glpat-" + _r(rng, URLSAFE, 20),
        "Slack token": lambda: "xoxb-" + _r(rng, string.digits, 12) + "-" + _r(rng, string.digits, 12) + "-" + _r(rng, AN, 24),
        "Slack webhook": lambda: f"https://hooks.slack.com/services/T{_r(rng, UP, 8)}/B{_r(rng, UP, 10)}/{_r(rng, AN, 24)}",
        "Stripe key": lambda: rng.choice(["sk_live_", "rk_live_", "sk_test_"]) + _r(rng, AN, 24),
        "OpenAI key": lambda: "sk-proj-" + _r(rng, URLSAFE, 48),
        "OpenAI legacy key": lambda: "sk-" + _r(rng, AN, 48),
        "Anthropic key": lambda: "sk-ant-api03-" + _r(rng, URLSAFE, 93) + "AA",
        "Google API key": lambda: "AIza" + _r(rng, URLSAFE, 35),
        "Google OAuth token": lambda: "ya29." + _r(rng, URLSAFE, 60),
        "Google client secret": lambda: "GOCSPX-" + _r(rng, URLSAFE, 28),
        "JWT": lambda: f"{_b64url({'alg': 'HS256', 'typ': 'JWT'})}.{_b64url({'sub': _r(rng, string.digits, 8)})}."
                       f"{_r(rng, URLSAFE, 43)}",
        "private key": lambda: "-----BEGIN " + rng.choice(["RSA ", "EC ", "OPENSSH ", ""]) + "PRIVATE KEY-----\n"
                               + _r(rng, B64, 64) + "\n-----END PRIVATE KEY-----",
        "password assignment": lambda: rng.choice(["password", "DB_PASSWORD", "db.password", "passwd"]) + " = \""
                                       + _r(rng, AN + "!@#", 14) + "\"",
        "secret assignment": lambda: rng.choice(["client_secret", "api_key", "API_KEY", "auth_token"]) + ": "
                                     + _r(rng, AN, 12) + _r(rng, string.digits, 4),
        "connection string": lambda: rng.choice(["postgres", "mysql", "mongodb+srv", "redis", "amqp"]) + "://app:"
                                     + _r(rng, AN, 12) + "@db.internal:5432/app",
    }
    frames = ["Use {} for the staging deploy.", "The CI job reads {}", "export TOKEN={}", "config: {}",
              "Gotcha: the old key {} still works", "{}"]
    out = []
    for kind, make in makers.items():
        for _ in range(per_kind):
            value = make()
            out.append((kind, rng.choice(frames).format(value)))
    return out


CLEAN_CORPUS = [
    # prose people write in project memory
    "Use PostgreSQL for persistence; SQLite only in tests.",
    "Passwords are hashed with argon2id; never log them.",
    "The password reset flow sends a one-time link valid for 15 minutes.",
    "Rotate the API key every 90 days (see the runbook).",
    "Secrets live in Vault under secret/app; the app reads them at start-up.",
    "Never commit .env files; use .env.example with placeholders.",
    "The token bucket limiter allows 100 requests per second.",
    "JWTs are verified with the JWKS endpoint; tokens expire after an hour.",
    "Redistribute the load across the three workers with consistent hashing.",
    "Set AWS_REGION to eu-west-1 for every environment.",
    "sk-learn is not a dependency; we use scikit-learn via its own package name.",
    "The key insight: migrations must be reversible.",
    "Skip the flaky test test_payment_token_refresh on CI until #482 is fixed.",
    # code and config that name secrets without holding one
    "password = os.environ['DB_PASSWORD']",
    "password = getpass.getpass()",
    "api_key = settings.API_KEY",
    "secret: ${CLIENT_SECRET}",
    "DB_PASSWORD=<your-password>",
    "password: changeme",
    "password=\"\"",
    "api_key: xxxxxxxx",
    "token = request.headers.get('Authorization')",
    "if password == confirm_password: save(user)",
    "postgres://localhost:5432/app",
    "postgres://app@db.internal/app",
    "postgres://app:${DB_PASSWORD}@db/app",
    "url = f\"postgres://{user}:{password}@{host}/db\"",
    "def check_password(password: str) -> bool:",
    "The commit sha 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it.",
    "uuid 123e4567-e89b-12d3-a456-426614174000 identifies the tenant",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "Use `git log --author` to find who changed the secret rotation job.",
    "ghp_ prefixes mark GitHub personal tokens; scan for them in CI.",
    "base64 of 'hello world' is aGVsbG8gd29ybGQ=",
    "The header is `Authorization: Bearer <token>`.",
    "secret_key_base is generated by `rails secret` on each machine.",
    "password_min_length: 12",
    "access_key_id: AKIA... (ask ops)",
]


# Flagged on purpose: a documented placeholder in a real key's exact format is indistinguishable
# from a key, and a false alarm costs one rewording while a miss leaks a credential.
FLAGGED_PLACEHOLDERS = ["AKIAIOSFODNN7EXAMPLE is the placeholder key in the AWS docs"]

# False alarms we know of and have reported; each is xfailed below so a fix shows.
KNOWN_FALSE_ALARMS: dict[str, str] = {}


def corpus() -> dict:
    return {"secrets": secrets_corpus(), "clean": CLEAN_CORPUS}


def detection_report() -> dict:
    """Catches per kind and false alarms, for the README."""
    per_kind: dict[str, list[int]] = {}
    for kind, text in secrets_corpus():
        row = per_kind.setdefault(kind, [0, 0])
        row[1] += 1
        row[0] += bool(scan(text))
    false_alarms = [t for t in CLEAN_CORPUS if scan(t)]
    return {"per_kind": per_kind, "caught": sum(r[0] for r in per_kind.values()),
            "total": sum(r[1] for r in per_kind.values()), "clean": len(CLEAN_CORPUS),
            "false_alarms": false_alarms}


# ---- the detector ---------------------------------------------------------------------------------

# A JWT inside prose is caught only with its `eyJ` header; the remaining kinds are all in scope.
@pytest.mark.parametrize("kind,text", secrets_corpus(), ids=lambda v: v if len(v) < 30 else None)
def test_every_generated_secret_is_caught(kind, text):
    assert scan(text), f"{kind} not detected in {text!r}"


@pytest.mark.parametrize("text", [
    pytest.param(t, marks=pytest.mark.xfail(strict=True, reason=KNOWN_FALSE_ALARMS[t])) if t in KNOWN_FALSE_ALARMS
    else t for t in CLEAN_CORPUS])
def test_ordinary_prose_and_code_pass(text):
    assert scan(text) == [], f"false alarm on {text!r}: {scan(text)}"


def test_findings_never_carry_the_secret():
    for _kind, text in secrets_corpus():
        for finding in scan(text):
            assert set(finding.to_dict()) == {"kind", "line", "column"}


# ---- nothing with a secret reaches disk, through any door -----------------------------------------

def _user_files(root: Path) -> dict:
    """Every file but the derived cache (the index may catch up on a refused write)."""
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".cache" not in p.parts}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("secrets")
    memory = Memory.open(root)
    memory.init(extended=True)
    memory.remember("Seed note for supersede targets", kind="finding")
    return memory


def _secret_values():
    # one of each kind, the raw value only (what must never be written)
    seen, out = set(), []
    for kind, text in secrets_corpus(seed=99, per_kind=1):
        if kind not in seen:
            seen.add(kind)
            out.append((kind, text))
    return out


@pytest.mark.parametrize("kind,text", _secret_values(), ids=lambda v: v if len(v) < 30 else None)
def test_api_writers_refuse_and_write_nothing(project, kind, text):
    memory = project
    before = _user_files(memory.root)
    seed = memory.notes()[0].id
    attempts = [
        lambda: memory.remember(text),
        *([lambda: memory.remember("harmless body", title=text)] if len(text) <= 80 and "\n" not in text else []),
        lambda: memory.remember("harmless body", quote=text),
        lambda: memory.add(text, type="constraint"),
        lambda: memory.add("Harmless decision", type="decision", reasons=[text]),
        lambda: memory.add(text, type="inbox"),
        lambda: memory.supersede(seed, text, reason="rotate"),
        lambda: memory.flag_stale(seed, reason=text),
    ]
    for attempt in attempts:
        with pytest.raises(SecretFound) as info:
            attempt()
        assert "secret" in str(info.value).lower() or "looks like" in str(info.value)
    assert _user_files(memory.root) == before


def test_cli_refuses_without_echoing(tmp_path):
    run_cli("init", cwd=tmp_path)
    _kind, text = _secret_values()[2]  # a GitHub token
    token = text.split()[-1] if " " in text else text
    for args in (["remember", text], ["add", text, "--type", "constraint"], ["remember", "-"]):
        r = run_cli(*args, cwd=tmp_path, input=text if args[-1] == "-" else None)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith("error:") and len(r.stderr.strip().splitlines()) == 1
        assert token not in r.stderr and token not in r.stdout
    blob = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert token.encode() not in blob


def test_edit_checkin_with_a_secret_writes_nothing(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init()
    memory.remember("Seed", kind="finding")
    buf = tmp_path / "buf.md"
    memory.edit_checkout(buf)
    token = "ghp_" + "a1B2c3D4" * 5
    buf.write_text(buf.read_text(encoding="utf-8") + f"\n### new\n- kind: finding\n\ncall it with {token}\n",
                   encoding="utf-8")
    shard_before = [p.read_bytes() for p in sorted((tmp_path / "docs/memory/ledger").glob("*.jsonl"))]
    with pytest.raises(SecretFound):
        memory.edit_checkin(buf, reason="r")
    assert [p.read_bytes() for p in sorted((tmp_path / "docs/memory/ledger").glob("*.jsonl"))] == shard_before


def test_mcp_remember_and_propose_refuse_secrets(tmp_path):
    import asyncio

    from mcp.server.mcpserver.exceptions import ToolError

    from memory_custodian.agents.mcp_server import build_server

    memory = Memory.open(tmp_path)
    memory.init()
    app = build_server(memory)
    token = "sk-ant-api03-" + "Zz9_" * 24
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and ".cache" not in p.parts}
    for tool, args in (("memory_remember", {"text": f"the key is {token}"}),
                       ("memory_remember", {"text": "fine", "tags": ["x"], "title": token[:60]}),
                       ("memory_propose", {"text": f"Always use {token}"})):
        with pytest.raises(ToolError) as info:
            asyncio.run(app.call_tool(tool, args))
        assert token not in str(info.value)
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and ".cache" not in p.parts}
    assert after == before


def test_detection_figures_are_what_the_readme_claims():
    report = detection_report()
    assert report["caught"] == report["total"]
    assert sorted(report["false_alarms"]) == sorted(KNOWN_FALSE_ALARMS)


def test_a_secret_in_a_prompt_is_not_kept_on_disk(tmp_path):
    """The prompt hook keeps the user's last message for quote binding; never a credential in it."""
    from memory_custodian.agents.hooks import run_hook

    memory = Memory.open(tmp_path)
    memory.init()
    token = "ghp_" + "aB3dE5gH7jK9" * 3
    raw = json.dumps({"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
                      "prompt": f"deploy with token {token} please"})
    run_hook("claude", "UserPromptSubmit", raw, project_root=str(tmp_path))
    blob = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert token.encode() not in blob
