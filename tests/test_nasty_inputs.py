"""Hand-written nasty inputs (tests/fixtures/nasty/) and generated huge ones, through every reader.

For each: a result or one of the tool's own errors, one line on stderr from the CLI, never a
traceback or a hang, and no file changed by a command that failed.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest
from conftest import FIXTURES, run_cli

from memory_custodian.base.errors import CustodianError
from memory_custodian.memory import Memory

NASTY = FIXTURES / "nasty"
CURATED_FIXTURES = {
    "invalid-utf8-decisions.md": "decisions.md",
    "bom-crlf-constraints.md": "constraints.md",
    "lone-cr-constraints.md": "constraints.md",
    "nul-bytes-constraints.md": "constraints.md",
    "unbalanced-fence-decisions.md": "decisions.md",
    "tilde-fence-mixed-decisions.md": "decisions.md",
    "deeply-nested-list-constraints.md": "constraints.md",
    "lookalike-headings-manifest.md": "manifest.md",
    "duplicate-route-headings-manifest.md": "manifest.md",
    "self-reference-manifest.md": "manifest.md",
    "cycle-area-self.md": "areas/self.md",
}


def user_files(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".cache" not in p.parts}


def outcome(memory, fn, *args, **kwargs):
    """'ok' or 'error'; an error must leave every file as it was, anything else fails the test."""
    before = user_files(memory.root)
    started = time.monotonic()
    try:
        fn(*args, **kwargs)
        result = "ok"
    except CustodianError as exc:
        assert "\n" not in exc.one_line()
        assert user_files(memory.root) == before, f"files changed after: {exc.one_line()}"
        result = "error"
    assert time.monotonic() - started < 20, f"{fn.__name__} took {time.monotonic() - started:.1f} s"
    return result


def cli_ok(result) -> None:
    """A clean CLI outcome: exit 0, or exit 1/2 with one `error:` line and no traceback."""
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    if result.returncode:
        assert result.returncode in (1, 2), (result.returncode, result.stderr)
        lines = [ln for ln in result.stderr.strip().splitlines() if not ln.startswith("warning:")]
        assert lines and lines[-1].startswith("error:"), result.stderr


@pytest.fixture
def project(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init(extended=True)
    memory.remember("Seed gotcha", kind="gotcha", paths=["src/**"])
    return memory


def _every_reader(memory):
    out = {}
    for task in ("planning", "implementation", "maintenance"):
        out[f"read {task}"] = outcome(memory, memory.read, task, paths=("src/x.py",))
    out["check"] = outcome(memory, memory.check)
    out["status"] = outcome(memory, memory.status)
    out["recall"] = outcome(memory, memory.recall, "seed")
    return out


def _every_writer(memory):
    return {
        "add constraint": outcome(memory, memory.add, "Another constraint", type="constraint"),
        "add decision": outcome(memory, memory.add, "Another decision", type="decision", reasons=["r"]),
        "forget": outcome(memory, memory.forget, "constraint", mode="soft", apply=True, allow_broad_match=True),
        "compact": outcome(memory, memory.compact, apply=True),
        "remember": outcome(memory, memory.remember, "still works"),
    }


@pytest.mark.parametrize("fixture", sorted(CURATED_FIXTURES))
def test_curated_fixture_through_every_reader_and_writer(project, fixture):
    target = Path(project.memory_dir) / CURATED_FIXTURES[fixture]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes((NASTY / fixture).read_bytes())
    _every_reader(project)
    _every_writer(project)


def test_invalid_utf8_is_named_with_file_and_line(project):
    (Path(project.memory_dir) / "decisions.md").write_bytes((NASTY / "invalid-utf8-decisions.md").read_bytes())
    r = run_cli("read", "--task", "planning", cwd=project.root)
    cli_ok(r)
    assert r.returncode == 2 and "decisions.md" in r.stderr and "UTF-8" in r.stderr
    r = run_cli("add", "x", "--type", "decision", "--reason", "y", cwd=project.root)
    cli_ok(r)
    assert r.returncode == 2


def test_lookalike_headings_are_not_taken_for_the_real_ones(project):
    """A Cyrillic `А`, a fullwidth `Ｌ` or a zero-width space must not route like the real heading."""
    (Path(project.memory_dir) / "manifest.md").write_bytes((NASTY / "lookalike-headings-manifest.md").read_bytes())
    try:
        result = project.read("planning")
    except CustodianError as exc:  # refusing the manifest is fine, in one line naming it
        result = None
        assert "\n" not in exc.one_line() and "manifest.md" in exc.one_line(), exc.one_line()
    if result is not None:  # accepting it is fine too, if nothing routes and the reader is told why
        assert result.loaded == [], result.loaded
        assert [w for w in result.warnings if "U+0410" in w and "only looks like" in w], result.warnings


def test_lookalike_headings_are_reported_by_check(project):
    """With look-alike section headings nothing routes, not even brief.md: `check` must say so."""
    (Path(project.memory_dir) / "manifest.md").write_bytes((NASTY / "lookalike-headings-manifest.md").read_bytes())
    report = project.check().to_dict()
    assert [f for f in report["findings"] if f["file"].endswith("manifest.md")], report


def test_nasty_shard_lines(project):
    shard_dir = Path(project.memory_dir) / "ledger"
    (shard_dir / "2026-01.jsonl").write_bytes((NASTY / "nasty-shard.jsonl").read_bytes())
    assert outcome(project, project.recall, "seed") == "ok"  # each bad line costs only itself
    report = project.doctor()
    assert not report.ok and report.problems
    r = run_cli("doctor", cwd=project.root)
    cli_ok(r)
    r = run_cli("recall", "seed", cwd=project.root)
    cli_ok(r)
    assert r.returncode == 0


def test_nasty_truth_and_config(project, tmp_path):
    from memory_custodian.ledger.recall.evaluate import load_truth
    from memory_custodian.ledger.storage.config import parse_config

    with pytest.raises(CustodianError):
        load_truth(NASTY / "nasty-truth.jsonl")
    with pytest.raises(CustodianError):
        parse_config((NASTY / "nasty-config.json").read_bytes(), Path("config.json"))
    (Path(project.memory_dir) / "config.json").write_bytes((NASTY / "nasty-config.json").read_bytes())
    cli_ok(run_cli("remember", "with a bad config", cwd=project.root))
    cli_ok(run_cli("export", cwd=project.root))


def test_edit_buffer_with_bom_crlf_and_fences(project):
    from memory_custodian.ledger.text.edit import parse_buffer

    text = (NASTY / "mixed-endings-buffer.md").read_text(encoding="utf-8")
    try:
        parse_buffer(text, "buf.md")
    except CustodianError as exc:
        assert "buf.md" in exc.one_line()
    buf = Path(project.root) / "buf.md"
    buf.write_bytes((NASTY / "mixed-endings-buffer.md").read_bytes())
    outcome(project, project.edit_checkin, buf, reason="nasty")


def test_hook_payloads_that_are_not_utf8_or_have_wrong_types(project):
    for name in ("hook-not-utf8.bin", "hook-wrong-types.json"):
        raw = (NASTY / name).read_bytes().decode("utf-8", "surrogateescape")
        for event in ("UserPromptSubmit", "PreToolUse", "SessionStart"):
            r = run_cli("hook", "--project-root", str(project.root), event,
                        input=raw.encode("utf-8", "surrogateescape").decode("latin-1"), cwd=project.root)
            assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
            if r.stdout.strip():
                json.loads(r.stdout)


# ---- generated: huge and deep inputs --------------------------------------------------------------

def test_a_10_mb_line(project):
    line = "- " + ("ten megabytes of one bullet " * 360_000)[:10_000_000] + "\n"
    (Path(project.memory_dir) / "constraints.md").write_text("# Constraints\n\n" + line, encoding="utf-8")
    r = run_cli("read", "--task", "implementation", cwd=project.root, timeout=120)
    cli_ok(r)
    # Packing never cuts an entry: an oversized first entry is kept whole, and the pack says so.
    assert len(r.stdout) < 200_000 or "larger than the 400-token budget and was kept whole" in r.stdout
    assert outcome(project, project.check) == "ok"
    # a 1 MB note (10 MB takes ~17 s to index: see note-8.md)
    assert outcome(project, project.remember, "y" * 1_000_000) in ("ok", "error")


def test_10000_headings(project):
    body = "# Decisions\n\n" + "".join(f"## 2026-01-01 - Decision {i}\nDecision: d{i}\nReason: r\n\n"
                                        for i in range(10_000))
    (Path(project.memory_dir) / "decisions.md").write_text(body, encoding="utf-8")
    started = time.monotonic()
    _every_reader(project)
    outcome(project, project.add, "Decision on top", type="decision", reasons=["r"])
    outcome(project, project.compact, target="decisions.md", apply=True, archive_oldest=True)
    assert time.monotonic() - started < 30


def test_10000_route_headings_in_the_manifest(project):
    manifest = Path(project.memory_dir) / "manifest.md"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text + "".join(f"\n### Task {i}\nLoad:\n- decisions.md\n" for i in range(10_000)),
                        encoding="utf-8")
    started = time.monotonic()
    _every_reader(project)
    assert time.monotonic() - started < 30


DEEP = "[" * 100_000 + "]" * 100_000


def test_deeply_nested_json_in_a_shard(project):
    with open(next((Path(project.memory_dir) / "ledger").glob("*.jsonl")), "a", encoding="utf-8") as fh:
        fh.write(DEEP + "\n")
    cli_ok(run_cli("recall", cwd=project.root))
    cli_ok(run_cli("doctor", cwd=project.root))


def test_deeply_nested_json_in_a_truth_file(project, tmp_path):
    truth = tmp_path / "truth.jsonl"
    truth.write_text(DEEP + "\n", encoding="utf-8")
    cli_ok(run_cli("eval", str(truth), cwd=project.root))


def test_deeply_nested_json_in_config(project):
    (Path(project.memory_dir) / "config.json").write_text(DEEP, encoding="utf-8")
    cli_ok(run_cli("export", cwd=project.root))


def test_deeply_nested_json_on_a_hook_fails_open(project):
    r = run_cli("hook", "--project-root", str(project.root), "UserPromptSubmit", input=DEEP, cwd=project.root)
    assert r.returncode == 0 and "Traceback" not in r.stderr


@pytest.mark.parametrize("state", ['{"v": 1, "turn": "x"}', '{"v": 1, "last_message": {"at": "soon", "text": "x"}}'])
def test_a_corrupt_session_file_is_rebuilt_not_fatal(project, state):
    """`.cache/sessions/*.json` is a cache: a file with wrong-typed fields must be replaced, not make
    every later hook of that session fail open with no memory."""
    from memory_custodian.agents.hooks import run_hook
    from memory_custodian.session.sessions import session_key, sessions_dir

    path = Path(sessions_dir(project.memory_dir)) / f"{session_key('tamper')}.json"
    path.write_text(state, encoding="utf-8")
    raw = json.dumps({"session_id": "tamper", "cwd": str(project.root), "hook_event_name": "UserPromptSubmit",
                      "prompt": "seed gotcha"})
    out = run_hook("claude", "UserPromptSubmit", raw, project_root=str(project.root))
    assert "Seed gotcha" in out, out  # memory was served, not a fail-open with none
    rebuilt = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(rebuilt["turn"], int), rebuilt
    assert rebuilt["last_message"]["text"] == "seed gotcha" and isinstance(rebuilt["last_message"]["at"], float), rebuilt


@pytest.mark.parametrize("journal", [DEEP, json.dumps({"v": 1, "label": "add", "changes": [
    {"path": "new.md", "new": 5, "old": "absent", "new_digest": "0"},
    {"path": "new2.md", "new": "ok", "old": "absent", "new_digest": "0"}]}),
    # well-typed, but the text does not match its digest: a damaged plan is never applied in part
    json.dumps({"v": 1, "label": "add", "changes": [
        {"path": "new.md", "new": "ok", "old": "absent", "new_digest": hashlib.sha256(b"ok").hexdigest()},
        {"path": "new2.md", "new": "ok", "old": "absent", "new_digest": "0"}]}),
    # a journal may only name curated files: never the ledger or the cache
    json.dumps({"v": 1, "label": "add", "changes": [
        {"path": "new.md", "new": "ok", "old": "absent", "new_digest": hashlib.sha256(b"ok").hexdigest()},
        {"path": "ledger/x.jsonl", "new": "ok", "old": "absent", "new_digest": hashlib.sha256(b"ok").hexdigest()}]})])
def test_a_corrupt_write_journal_is_a_clear_error(project, journal):
    jpath = Path(project.memory_dir) / ".cache" / "journal.json"
    jpath.write_text(journal, encoding="utf-8")
    before = user_files(project.root)
    r = run_cli("add", "After a corrupt journal", "--type", "constraint", cwd=project.root)
    cli_ok(r)
    assert r.returncode == 2 and "journal" in r.stderr and "delete this file" in r.stderr, r.stderr
    assert user_files(project.root) == before
    assert jpath.exists(), "a pending plan must never be dropped silently"


@pytest.mark.parametrize("days", ["99999999999999999999", "3000000", "1" + "0" * 400])
def test_absurd_expiry_is_a_clear_error(project, days):
    r = run_cli("remember", "expires far away", "--expires", days, cwd=project.root)
    cli_ok(r)
    assert r.returncode == 2 and "--expires" in r.stderr


def test_a_corrupt_index_is_rebuilt_not_fatal(project):
    """`.cache/index.sqlite` is disposable (DESIGN: deleting it is always safe), so a damaged page
    must cost a rebuild, not every command until someone deletes it by hand."""
    for i in range(5):
        project.remember(f"filler note {i} about caching " + "z" * 500)
    assert run_cli("recall", "caching", cwd=project.root).returncode == 0  # a closed index: pages on disk
    index = Path(project.memory_dir) / ".cache" / "index.sqlite"
    data = index.read_bytes()
    index.write_bytes(data[:4096 * 3] + b"\xff" * 4096 + data[4096 * 4:])  # one page of the tables
    r = run_cli("recall", "caching", cwd=project.root)
    assert r.returncode == 0 and "filler note" in r.stdout, r.stderr


def test_mcp_server_survives_garbage_frames(project):
    """Junk on the server's stdin is skipped; the next valid request is answered; EOF ends it cleanly."""
    import subprocess
    import sys

    frames = ["garbage, not JSON", '{"jsonrpc":"2.0"}', "[]", "\x00\xff",
              json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                  "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})]
    proc = subprocess.run([sys.executable, "-m", "memory_custodian", "mcp"], cwd=project.root, capture_output=True,
                          text=True, input="\n".join(frames) + "\n", timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-1000:]
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert any(a.get("id") == 1 and "result" in a for a in answers)


@pytest.mark.parametrize("text", [
    "password=" + "a" * 200_000, "postgres://" + "a:" * 50_000, "x://" + "u" * 100_000 + ":" + "p" * 100_000,
    "eyJ" + "a" * 100_000 + ".eyJ" + "b" * 100_000, "secret" * 20_000 + "=x", "api_key " * 30_000,
    "a@" * 100_000, "x:" * 100_000 + "@"], ids=lambda t: t[:12])
def test_secret_scanner_has_no_catastrophic_backtracking(text):
    """Every write scans its text: a pathological input must cost time linear in its size."""
    from memory_custodian.base.secrets import scan

    started = time.monotonic()
    scan(text)
    assert time.monotonic() - started < 5


def test_expiry_bounds_are_exact():
    """The largest expiry the ledger's 4-digit-year format holds is accepted, one day more is not;
    an ISO time whose offset leaves the calendar is a clear error too (MCP passes the same text)."""
    from memory_custodian.base.errors import InvalidInput
    from memory_custodian.cli.terms import CLI_TERMS
    from memory_custodian.ledger.storage.inputs import clean_expires

    now = "2026-11-30T12:00:00.000Z"
    assert clean_expires("2912109", now=now).startswith("9999-")
    assert clean_expires("9999-12-31", now=now) == "9999-12-31T00:00:00.000Z"
    for bad in ("2912111", "1e999", "9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+01:00"):
        with pytest.raises(InvalidInput) as err:
            clean_expires(bad, now=now)
        assert err.value.field == "expires" and err.value.one_line().startswith("expires ")
        assert err.value.one_line(CLI_TERMS).startswith("--expires ")  # the CLI names its flag


@pytest.mark.parametrize("argv", [
    ("export", "--path", "N.md"), ("edit", "--checkout", "N.md"), ("edit", "--checkin", "N.md"),
    ("init", "--memory-dir", "docs/N"), ("eval", "N.jsonl"),
], ids=["export", "checkout", "checkin", "init", "eval"])
def test_a_name_over_255_bytes_is_one_line_and_changes_nothing(tmp_path, argv):
    assert run_cli("init", cwd=tmp_path).returncode == 0
    run_cli("remember", "a note to export", cwd=tmp_path)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    name = "é" * 200  # 400 bytes, 200 characters
    proc = run_cli(*[a.replace("N", name) for a in argv], cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "bytes; file systems allow 255" in proc.stderr and name not in proc.stderr  # a short prefix only
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
