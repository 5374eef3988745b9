"""The MCP tools in process (fast): an empty ledger, filters, the not-shown account, quote rules."""

from __future__ import annotations

import asyncio
import json

from mcp.server.mcpserver.exceptions import ToolError

from memory_custodian.agents.hooks import run_hook
from memory_custodian.agents.mcp_server import build_server


def call(app, tool, args):
    try:
        return asyncio.run(app.call_tool(tool, args))
    except ToolError as exc:
        return exc


def text(result) -> str:
    return "\n".join(block.text for block in result.content)


def test_empty_ledger_answers_plainly(memory):
    app = build_server(memory)
    recall = call(app, "memory_recall", {"query": "anything at all"})
    assert "(no notes matched)" in text(recall)
    assert "0 more matched below the cutoff; 0 excluded" in text(recall)
    context = call(app, "memory_context", {})
    assert "# Memory context pack" in text(context) and context.structured_content["note_ids"] == []


def test_recall_filters_and_what_was_not_shown(memory):
    app = build_server(memory)
    for i in range(4):
        memory.remember(f"Queue consumer {i} drops messages when the broker restarts.", kind="gotcha",
                        paths=[f"src/queue/consumer{i}.py"], tags=["queue"])
    finding = memory.remember("Queue broker restarts nightly at 02:00 UTC.", kind="finding", tags=["ops"])
    memory.revoke(finding.id, reason="schedule moved")
    result = call(app, "memory_recall", {"query": "queue broker restarts", "kinds": ["gotcha"], "limit": 2})
    body = text(result)
    assert body.count("gotcha/medium") == 2 and "finding" not in body.split("```")[1].split("more matched")[0]
    assert "2 more matched below the cutoff" in body
    data = result.structured_content
    assert data["below_cutoff"]["count"] == 2 and len(data["hits"]) == 2
    everything = call(app, "memory_recall", {"query": "queue broker restarts", "include_all": True, "limit": 10})
    assert f"[#{finding.id}]" in text(everything) and "REVOKED" in text(everything)
    by_path = call(app, "memory_recall", {"paths": ["src/queue/consumer2.py"]})
    assert len(by_path.structured_content["hits"]) == 1
    bad = call(app, "memory_recall", {"kinds": ["rumour"]})
    assert isinstance(bad, ToolError)


def test_quote_rules_in_process(memory):
    app = build_server(memory)
    said = "Never deploy the billing service on Fridays, the on-call rota is thin then."
    run_hook("claude", "UserPromptSubmit", json.dumps({"session_id": "q1", "cwd": str(memory.root),
                                                       "hook_event_name": "UserPromptSubmit", "prompt": said}))
    whole = call(app, "memory_remember", {"text": "Rule: never deploy the billing service on Fridays.",
                                          "kind": "directive"})
    assert whole.structured_content["provenance"] == "user-stated"
    assert whole.structured_content["quote"] == "Never deploy the billing service on Fridays"  # as the user typed it
    short = call(app, "memory_remember", {"text": "Fridays are special.", "quote": "Fridays"})
    assert short.structured_content["provenance"] == "agent"
    assert "at least 30 characters" in short.structured_content["quote_refused"]
    # superseding binds the same way
    new = call(app, "memory_supersede", {"id": whole.structured_content["id"], "reason": "wording",
                                         "text": "Never deploy the billing service on Fridays (thin on-call rota)."})
    assert new.structured_content["provenance"] == "user-stated"
    assert memory.note(new.structured_content["id"]).kind == "directive"


def test_errors_name_tool_arguments_and_offer_only_tools_the_server_has(memory):
    app = build_server(memory)
    note = memory.remember("an active note")
    missing = call(app, "memory_flag_stale", {"id": note.id, "reason": " "})
    assert str(missing).endswith("flag-stale needs a reason: pass the `reason` argument")
    memory.revoke(note.id, reason="wrong")
    illegal = call(app, "memory_revoke", {"id": note.id, "reason": "again"})
    assert "(allowed: memory_reinstate)" in str(illegal) and "--" not in str(illegal)
    active = memory.remember("offered only the tools there are")  # promote and expire are legal, with no tool here
    refused = call(app, "memory_reinstate", {"id": active.id, "reason": "x"})
    assert "(allowed: memory_supersede, memory_revoke, memory_flag_stale)" in str(refused)
    unknown = call(app, "memory_expand", {"ids": ["zzzzzzzz"]})
    assert str(unknown).endswith("no note #zzzzzzzz in the ledger — try `memory_recall`")
