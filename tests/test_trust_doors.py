"""The library keeps its trust rules whoever calls it: every door that can set a quote or a provenance
(the CLI's remember, supersede and edit check-in, the MCP tools, the Python API, the hooks) reaches
`user-stated` only with the user's own words, and `human` only as a person."""

from __future__ import annotations

import asyncio
import json
import re
import shlex

import pytest
from conftest import run_cli

from memory_custodian.agents.hooks import run_hook
from memory_custodian.agents.mcp_server import build_server
from memory_custodian.base.errors import InvalidInput, Refused
from memory_custodian.ledger.storage.store import Ledger
from memory_custodian.session.rule_prompts import nudge
from memory_custodian.session.usage_log import read_store

SAID = "From now on every release tag must be signed with the team key, no exceptions."
NEVER_SAID = "the user explicitly allowed unsigned release tags on Fridays"


def user_says(memory, prompt: str = SAID) -> None:
    """The user's message, kept by the prompt hook as a host would send it."""
    run_hook("claude", "UserPromptSubmit", json.dumps({"session_id": "trust-doors", "cwd": str(memory.root),
                                                       "hook_event_name": "UserPromptSubmit", "prompt": prompt}))


def cli_json(memory, *args: str, env: dict | None = None) -> tuple[dict, str]:
    done = run_cli(*args, "--format", "json", cwd=memory.root, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def creates(memory) -> list[dict]:
    return [ev for ev in Ledger(memory.memory_dir).read_events(lenient=True)[0] if ev["op"] == "create"]


def test_cli_remember_as_agent_with_words_the_user_never_wrote_stays_agent_and_says_why(memory):
    user_says(memory)
    note, err = cli_json(memory, "remember", "Unsigned tags are fine on Fridays.", "--actor", "agent",
                         "--quote", NEVER_SAID)
    assert (note["provenance"], note["quote"]) == ("agent", None)
    assert note["quote_refused"] == "quote refused: it does not appear verbatim in the user's last message"
    assert err.splitlines() == ["warning: quote refused: it does not appear verbatim in the user's last message; "
                                "the note was stored at agent provenance"]
    # the user's own words bind, through the same door
    bound, err = cli_json(memory, "remember", "Release tags are signed.", "--actor", "agent",
                          "--quote", "every release tag must be signed with the team key")
    assert (bound["provenance"], bound["quote"], bound["quote_refused"]) == (
        "user-stated", "every release tag must be signed with the team key", None) and err == ""
    # a person's word is taken as given
    person, _ = cli_json(memory, "remember", "Said at the retro.", "--actor", "human", "--quote", NEVER_SAID)
    assert (person["provenance"], person["quote"]) == ("human", NEVER_SAID)


def test_cli_supersede_as_agent_is_checked_the_same_way(memory):
    old = memory.remember("Tags are signed by the release manager.", kind="directive")
    user_says(memory)
    new, err = cli_json(memory, "supersede", old.id, "Anyone may tag unsigned.", "--reason", "user said so",
                        "--actor", "agent", "--quote", NEVER_SAID)
    assert (new["provenance"], new["kind"], new["quote_refused"] is not None) == ("agent", "directive", True)
    assert "the note was stored at agent provenance" in err


def test_a_host_runs_the_cli_as_agent_and_the_nudge_it_is_given_is_safe(memory):
    """The rule nudge's command, run as an agent would run it inside a host, binds only what the user wrote."""
    user_says(memory)
    command = re.search(r"`(memory-custodian remember [^`]*)`", nudge(SAID)).group(1)
    words = shlex.split(command)[1:]  # the quote and the text are placeholders: the agent fills them in
    assert words[:3] == ["remember", "--actor", "agent"] and "--quote" in words
    at = words.index("--quote") + 1
    assert at < len(words) - 1, "the text comes after the quote"

    def run_as_agent(quote: str, text: str) -> dict:
        given = [*words[:at], quote, *words[at + 1:-1], text]
        return cli_json(memory, *given, env={"CLAUDECODE": "1"})[0]

    forged = run_as_agent(NEVER_SAID, "Tags may go unsigned.")
    honest = run_as_agent(SAID, "Sign every release tag.")
    assert (forged["provenance"], forged["kind"]) == ("agent", "directive")
    assert (honest["provenance"], honest["quote"]) == ("user-stated", SAID)


def test_mcp_remember_and_supersede_go_through_the_same_rule(memory):
    app = build_server(memory)
    user_says(memory)
    made = asyncio.run(app.call_tool("memory_remember", {"text": "Unsigned tags are fine.", "quote": NEVER_SAID}))
    assert made.structured_content["provenance"] == "agent" and made.structured_content["quote_refused"]
    new = asyncio.run(app.call_tool("memory_supersede", {"id": made.structured_content["id"], "reason": "user",
                                                         "text": "Sign every release tag with the team key.",
                                                         "quote": "every release tag must be signed"}))
    assert new.structured_content["provenance"] == "user-stated"


def test_python_api_as_agent_or_auto(memory):
    user_says(memory)
    forged = memory.remember("x", actor="agent", quote=NEVER_SAID)
    assert (forged.provenance, forged.quote) == ("agent", None) and "verbatim" in forged.quote_refused
    claimed = memory.remember("y", actor="agent", provenance="user-stated", quote=NEVER_SAID)
    assert claimed.provenance == "agent" and claimed.quote_refused
    with pytest.raises(Refused, match="human provenance"):
        memory.remember("z", actor="agent", provenance="human")
    with pytest.raises(InvalidInput, match="verbatim"):
        memory.remember("z", actor="agent", provenance="user-stated")
    lower = memory.remember("the team key signs release tags", actor="agent", provenance="auto")
    assert lower.provenance == "auto"  # less than its own is allowed
    # an automatic note that repeats the user (a checkpoint quotes the request) is a record, not their rule
    auto = memory.remember(f'Last request: "{SAID}"', kind="task", actor="auto")
    assert (auto.provenance, auto.quote) == ("auto", None)
    # a refused quote leaves nothing to promote on
    with pytest.raises(Refused, match="no bound user quote"):
        memory.promote(forged.id, to="user-stated", actor="agent")
    assert all(ev["provenance"] != "human" for ev in creates(memory) if ev["actor"] != "human")


def test_edit_checkin_as_agent_never_reaches_human(memory, tmp_path):
    person = memory.remember("Release tags are signed with the team key.", kind="directive", title="Signed tags")
    buffer = tmp_path / "notes.md"
    memory.edit_checkout(buffer)
    text = buffer.read_text(encoding="utf-8")
    relabelled = text.replace("- priority: medium", "- priority: high", 1)
    assert relabelled != text
    buffer.write_text(relabelled + "\n### A new note\n- kind: finding\n\nAdded by an agent.\n", encoding="utf-8")
    done = run_cli("edit", "--checkin", str(buffer), "--format", "json", cwd=memory.root, env={"CLAUDECODE": "1"})
    assert done.returncode == 0, done.stderr
    added = {ev["note"]: ev for ev in creates(memory)[1:]}
    assert {ev["actor"] for ev in added.values()} == {"agent"}
    assert sorted(ev["provenance"] for ev in added.values()) == ["agent", "agent"]  # the relabel too
    assert memory.note(person.id).state == "superseded"


def test_usage_is_logged_by_the_library_from_its_caller(memory):
    note = memory.remember("Release tags are signed.")
    memory.recall("release")  # no caller: a hook's own injection, or a script, is not a read for `stats`
    memory.recall("release", caller="mcp")
    memory.expand([note.id], caller="cli")
    entries, _ = read_store(memory.memory_dir_str)
    assert sorted((e["kind"], e["door"], e["ids"]) for e in entries) == [("expand", "cli", [note.id]),
                                                                         ("recall", "mcp", [note.id])]
    with pytest.raises(InvalidInput, match="unknown caller"):
        memory.recall("release", caller="someone")


def test_propose_is_a_memory_method(memory):
    made = memory.propose("Decision: release tags are signed with the team key.")
    assert made["file"] == "inbox.md" and made["item"] in (memory.memory_dir / "inbox.md").read_text()
