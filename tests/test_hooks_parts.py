"""The pieces under the hooks: fencing, quote binding, session state, host payload parsing."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_custodian.agents.hosts import HOSTS, load
from memory_custodian.agents.touched import project_relative
from memory_custodian.base.errors import InvalidInput
from memory_custodian.base.fence import fence
from memory_custodian.session.quotes import bind_quote, find_shared_span
from memory_custodian.session.sessions import open_session, prune_sessions, recent_user_messages

RECORDED = Path(__file__).parent / "fixtures" / "hosts"


# ---- fence ---------------------------------------------------------------------------------------

def test_fence_outgrows_any_backtick_run():
    text = "see ```python\nprint(1)\n```\nand ````` five"
    out = fence(text)
    assert out.startswith("``````memory\n") and out.endswith("\n``````")


@settings(max_examples=200)
@given(st.text(alphabet=st.sampled_from("`a\n ~"), max_size=60))
def test_no_content_closes_the_fence_early(text):
    out = fence(text)
    opening = out.split("\n", 1)[0]
    ticks = opening[: len(opening) - len("memory")]
    lines = out.split("\n")
    # the only line that is a closing fence of that length is the last one
    closers = [i for i, line in enumerate(lines[1:], 1) if line.strip().startswith(ticks) and set(line.strip()) == {"`"}]
    assert closers == [len(lines) - 1]
    assert ticks not in text


# ---- quotes --------------------------------------------------------------------------------------

MESSAGE = "Please remember: never run the billing migration on Fridays, ops is short-staffed then."


def test_shared_span_binds_the_users_words():
    note = "Team rule — never run the billing migration on Fridays (ops capacity)."
    assert find_shared_span(note, MESSAGE) == "never run the billing migration on Fridays"
    binding = bind_quote(note, None, [MESSAGE])
    assert binding.provenance == "user-stated"
    assert binding.quote == "never run the billing migration on Fridays"


def test_short_overlap_is_not_a_quote():
    binding = bind_quote("the billing migration is slow", None, [MESSAGE])
    assert binding.provenance == "agent" and binding.quote is None and binding.refused_reason is None


def test_explicit_quote_checked_and_refused_with_reason():
    ok = bind_quote("Billing migration: not on Fridays.", "never run the billing migration on Fridays", [MESSAGE])
    assert ok.provenance == "user-stated"
    bad = bind_quote("Billing migration: not on Fridays.", "always run the billing migration on Mondays", [MESSAGE])
    assert bad.provenance == "agent" and bad.quote is None
    assert "does not appear verbatim" in bad.refused_reason
    none = bind_quote("x", "never run the billing migration on Fridays", [])
    assert "no user message" in none.refused_reason
    short = bind_quote("x", "Fridays", [MESSAGE])
    assert "at least 30 characters" in short.refused_reason


def test_whitespace_rewrapping_still_matches():
    note = "never run the billing\n   migration on Fridays"
    assert bind_quote(note, None, [MESSAGE]).provenance == "user-stated"


# ---- sessions ------------------------------------------------------------------------------------

NOTE = SimpleNamespace(id="a", last_event="b", updated_at="2026-11-30T10:00:00.000Z")


def make_memory_dir(tmp_path: Path) -> Path:
    memory_dir = tmp_path / "docs" / "memory"
    memory_dir.mkdir(parents=True)
    (memory_dir / "manifest.md").write_text("# Memory Manifest\n")
    return memory_dir


def test_session_state_is_private_and_persistent(tmp_path):
    memory_dir = make_memory_dir(tmp_path)
    note = SimpleNamespace(id="k7m2x9qa", last_event="01EV", updated_at="2026-11-30T10:00:00.000Z")
    with open_session(memory_dir, "../../etc/passwd") as state:
        state.mark(note)
        state.keep_message("hello there", now=1000.0)
    files = list((memory_dir / ".cache" / "sessions").glob("*.json"))
    assert len(files) == 1 and files[0].parent.name == "sessions"
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(files[0].parent.stat().st_mode) == 0o700
    with open_session(memory_dir, "../../etc/passwd") as state:
        assert state.seen(note) and not state.seen(SimpleNamespace(id="k7m2x9qa", last_event="01EW", updated_at=""))
        assert not state.seen(note, full=True)
        # a pack marks notes by the time it was shown: unchanged since then means seen
        state.mark_shown_at("p3evabj0", "2026-11-30T11:00:00.000Z", full=True)
        assert state.seen(SimpleNamespace(id="p3evabj0", last_event="x", updated_at="2026-11-30T10:59:59.999Z"), full=True)
        assert not state.seen(SimpleNamespace(id="p3evabj0", last_event="y", updated_at="2026-11-30T11:00:00.001Z"))


def test_recent_messages_expire_after_ten_minutes(tmp_path):
    import time

    memory_dir = make_memory_dir(tmp_path)
    now = time.time()
    with open_session(memory_dir, "a") as state:
        state.keep_message("old words", now=now - 601)
    with open_session(memory_dir, "b") as state:
        state.keep_message("new words", now=now - 5)
    assert recent_user_messages(memory_dir, now=now) == ["new words"]
    # the expired message is dropped from disk on the next touch of its session
    with open_session(memory_dir, "a"):
        pass
    assert "old words" not in "".join(p.read_text() for p in (memory_dir / ".cache/sessions").glob("*.json"))


def test_turn_budget(tmp_path):
    memory_dir = make_memory_dir(tmp_path)
    with open_session(memory_dir, "s") as state:
        state.new_turn()
        state.spend(900)
        assert state.budget_left(1000) == 100
        state.new_turn()
        assert state.budget_left(1000) == 1000


def one_session(tmp_path):
    """A memory folder with one session file: (memory dir, the file, a time 8 days before it)."""
    memory_dir = make_memory_dir(tmp_path)
    with open_session(memory_dir, "s") as state:
        state.mark(NOTE)
    path = next((memory_dir / ".cache/sessions").glob("*.json"))
    return memory_dir, path, path.stat().st_mtime - 8 * 24 * 3600


def test_prune_old_sessions(tmp_path):
    memory_dir, path, old = one_session(tmp_path)
    os.utime(path, (old, old))
    assert prune_sessions(memory_dir) == 1
    assert not path.exists()


def test_broken_session_file_is_rebuilt(tmp_path):
    memory_dir = make_memory_dir(tmp_path)
    with open_session(memory_dir, "s") as state:
        state.mark(NOTE)
    path = next((memory_dir / ".cache/sessions").glob("*.json"))
    path.write_text("{not json")
    with open_session(memory_dir, "s") as state:
        assert not state.seen(NOTE)
        state.mark(NOTE)
    path.write_bytes(b"\x00\xff\xfe torn by a crash")  # session files skip fsync: this can happen
    with open_session(memory_dir, "s") as state:
        assert not state.seen(NOTE)


# ---- hosts ---------------------------------------------------------------------------------------

def recorded(host: str, event: str, root: Path) -> dict:
    return json.loads((RECORDED / host / f"{event}.json").read_text().replace("__PROJECT__", str(root)))


@pytest.mark.parametrize("host,event,action", [
    (host, event, action) for host in HOSTS for event, action in load(host).events.items()])
def test_recorded_payloads_parse(tmp_path, host, event, action):
    hook = load(host).parse_event(event, recorded(host, event, tmp_path))
    assert hook.action == action and hook.session_id and hook.cwd == str(tmp_path)
    if action == "prompt":
        assert hook.prompt.startswith("The payment webhook")
    if action == "file":
        assert project_relative(hook.paths, tmp_path, hook.cwd)[:1] == ["src/shop/payments.py"]
    if action == "start":
        assert hook.source == "startup"


def test_paths_outside_the_project_are_dropped(tmp_path):
    assert project_relative(["/etc/passwd", "../x.py", "a/b.py", "./a/b.py"], tmp_path, str(tmp_path)) == ["a/b.py"]


def test_non_file_tools_have_no_paths(tmp_path):
    payload = recorded("claude", "PreToolUse", tmp_path)
    payload["tool_name"] = "Bash"
    assert load("claude").parse_event("PreToolUse", payload).paths == []


def test_unknown_event_and_host_are_named():
    with pytest.raises(InvalidInput, match="gemini event 'PreToolUse' is not handled"):
        load("gemini").parse_event("PreToolUse", {})
    with pytest.raises(InvalidInput, match="unknown host"):
        load("cursor").parse_event("SessionStart", {})


def test_output_shapes():
    assert json.loads(load("claude").render_output("UserPromptSubmit", "x")) == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}}
    assert load("claude").render_output("PreCompact", "x") == ""
    assert load("gemini").render_output("PreCompress", "") == "{}"
    assert load("codex").render_output("SessionStart", "") == ""


def test_only_the_mcp_module_imports_mcp_and_nothing_here_imports_click():
    import ast

    package = Path(__file__).resolve().parents[1] / "src" / "memory_custodian" / "agents"
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text())
        roots = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                roots.add(node.module.split(".")[0])
        assert "click" not in roots, path.name
        if path.name != "mcp_server.py":
            assert not roots & {"mcp", "mcp_types", "pydantic", "anyio"}, path.name


WORDS = st.sampled_from(["refund", "webhook", "never", "retry", "the", "ledger", "lock", "on", "Fridays", "cache",
                         "deploy", "must", "be", "idempotent", "payments", "3", "v2", "API"])


@settings(max_examples=60, deadline=None)
@given(st.lists(WORDS, min_size=12, max_size=30), st.integers(0, 5), st.lists(WORDS, max_size=5))
def test_a_bound_quote_is_always_the_users_verbatim_words(message_words, start, extra):
    message = " ".join(message_words)
    quoted = " ".join(message_words[start:start + 8])
    note = " ".join(extra) + " — " + quoted + " (noted)"
    binding = bind_quote(note, None, [message])
    if len(quoted) >= 30:
        assert binding.provenance == "user-stated"
    if binding.provenance == "user-stated":
        assert binding.quote in message and len(binding.quote) >= 30
    else:
        assert binding.quote is None
    # an explicit quote is only accepted when the user said it
    forged = bind_quote(note, quoted + " and more words that were never said", [message])
    assert forged.provenance == "agent" or (quoted + " and more words that were never said") in message


def test_control_characters_are_shown_not_passed_on():
    out = fence("evil \x1b[2J\x1b]0;owned\x07 title\r\x9b\tok\nnext")
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out and "\r" not in out
    assert "\\u001b[2J" in out and "\tok\nnext" in out


def test_codex_patch_and_command_paths(tmp_path):
    patch = "*** Begin Patch\n*** Update File: src/shop/payments.py\n@@\n-a\n+b\n*** Add File: docs/x.md\n*** End Patch"
    hook = load("codex").parse_event("PreToolUse", {"session_id": "s", "cwd": str(tmp_path), "tool_name": "apply_patch",
                                               "tool_input": {"patch": patch}})
    assert hook.paths == ["src/shop/payments.py", "docs/x.md"]
    hook = load("codex").parse_event("PreToolUse", {"session_id": "s", "cwd": str(tmp_path), "tool_name": "Bash",
                                               "tool_input": {"command": ["bash", "-lc", "cat 'src/a b.py' | head -n 5"]}})
    assert "src/a b.py" in hook.paths
    hook = load("codex").parse_event("PreToolUse", {"session_id": "s", "cwd": str(tmp_path), "tool_name": "Bash",
                                               "tool_input": {"command": "python -m pytest tests/test_x.py -k 'a and b'"}})
    assert "tests/test_x.py" in hook.paths and "-k" not in hook.paths


def test_session_start_prunes_at_most_hourly(tmp_path):
    from memory_custodian.session.sessions import PRUNE_EVERY_S, prune_sessions_now_and_then

    memory_dir, path, old = one_session(tmp_path)
    assert prune_sessions_now_and_then(memory_dir) == 0  # nothing idle yet; the scan is stamped
    os.utime(path, (old, old))
    assert prune_sessions_now_and_then(memory_dir) == 0  # within the hour: no scan
    assert path.exists()
    later = time.time() + PRUNE_EVERY_S + 1
    assert prune_sessions_now_and_then(memory_dir, now=later) == 1  # the hour is over: the idle file goes
    assert not path.exists()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["the", "of", "lock", "locking", "daemonRestart", "retry", "budget", "a", "is",
                                 "src/cache.py", "release_lock", "x"]), max_size=15),
       st.lists(st.sampled_from(["lock", "daemon", "restar", "retry", "cache", "the", "releas"]), max_size=5),
       st.integers(min_value=0, max_value=3))
def test_early_exit_shared_terms_agree_with_the_full_count(words, wanted, need):
    from memory_custodian.agents.recall_view import _shares, _terms

    text = " ".join(words)
    assert _shares(set(wanted), text, need) == (len(set(wanted) & _terms(text)) >= need)
