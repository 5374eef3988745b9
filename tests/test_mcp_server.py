"""The MCP server as a host runs it: a subprocess on stdio, driven by the SDK's own client."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memory_custodian.agents.hooks import run_hook
from memory_custodian.memory import Memory

REPO = Path(__file__).resolve().parents[1]
HOSTS = REPO / "tests" / "fixtures" / "hosts"

USER_SAYS = ("From now on the refund webhook must be idempotent: Stripe retries it up to three times, "
             "so check the event id before issuing money back.")


@pytest.fixture
def project(tmp_path):
    memory = Memory.open(tmp_path)
    memory.init(extended=True)  # with changelog.md: the server must not touch it
    directive = memory.remember("Always run make test before pushing.", kind="directive", priority="high")
    gotcha = memory.remember("Refund rounding must use Decimal quantize, never round(): floats lost cents.",
                             kind="gotcha", priority="high", paths=["src/shop/payments.py"], title="Refund rounding")
    return tmp_path, memory, directive, gotcha


def curated_files(root: Path) -> dict[str, bytes]:
    folder = root / "docs/memory"
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.md")
            if ".cache" not in p.parts and p.name != "MEMORY.md"}


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content)


async def _session_run(root: Path, body):
    params = StdioServerParameters(command=sys.executable, args=["-m", "memory_custodian", "mcp"], cwd=str(root))
    with open(root / "server-stderr.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await body(session)


def run(root: Path, body):
    anyio.run(_session_run, root, body)


def test_every_tool_over_stdio(project):
    root, memory, directive, gotcha = project
    memory.export_enable()
    mirror = root / "docs/memory/MEMORY.md"
    curated_before = curated_files(root)
    out: dict = {}

    async def body(session):
        out["context"] = await session.call_tool("memory_context", {"task": "implementation",
                                                                    "paths": ["src/shop/payments.py"]})
        out["recall"] = await session.call_tool("memory_recall", {"query": "refund rounding"})
        out["expand"] = await session.call_tool("memory_expand", {"ids": [gotcha.id[:5]]})
        out["plain"] = await session.call_tool("memory_remember", {
            "text": "The CI cache key includes the lockfile hash.", "kind": "finding", "tags": ["ci"]})
        # the user's words arrive through the prompt hook, as the host would send them
        payload = json.loads((HOSTS / "claude/UserPromptSubmit.json").read_text().replace("__PROJECT__", str(root)))
        payload["prompt"] = USER_SAYS
        run_hook("claude", "UserPromptSubmit", json.dumps(payload))
        out["bound"] = await session.call_tool("memory_remember", {
            "text": "Refund webhook: Stripe retries it up to three times, so check the event id before issuing money back.",
            "kind": "directive", "priority": "high"})
        out["refused_quote"] = await session.call_tool("memory_remember", {
            "text": "Refunds go out within a day.", "quote": "refunds must always go out within one business day"})
        out["supersede"] = await session.call_tool("memory_supersede", {
            "id": gotcha.id, "text": "Refund rounding: use Decimal.quantize(ROUND_HALF_EVEN); round() lost cents.",
            "reason": "name the rounding mode"})
        new_id = out["supersede"].structured_content["id"]
        out["stale"] = await session.call_tool("memory_flag_stale", {"id": new_id, "reason": "payments rewrite in progress"})
        out["reinstate"] = await session.call_tool("memory_reinstate", {"id": new_id, "reason": "checked after the rewrite"})
        out["revoke"] = await session.call_tool("memory_revoke", {"id": out["plain"].structured_content["id"],
                                                                  "reason": "the cache key changed"})
        out["history"] = await session.call_tool("memory_history", {"id": new_id})
        out["propose"] = await session.call_tool(
            "memory_propose", {"text": "Decision: refunds are issued only through the payments service."})
        # the mirror is re-rendered once writes have been quiet for 3 s, while the server runs
        probe = await session.call_tool("memory_remember", {"text": "Mirror probe: written last."})
        written = time.monotonic()
        probe_id = out["probe_id"] = probe.structured_content["id"]
        out["mirror_soon"] = mirror.read_text() if mirror.exists() else ""
        while time.monotonic() - written < 15 and f"#{probe_id}" not in mirror.read_text():
            await anyio.sleep(0.2)
        out["mirror_delay"] = time.monotonic() - written
        out["mirror_later"] = mirror.read_text()

    run(root, body)
    mirror_soon, mirror_later, probe_id = out.pop("mirror_soon"), out.pop("mirror_later"), out.pop("probe_id")
    mirror_delay = out.pop("mirror_delay")
    for name, result in out.items():
        assert result.is_error is False, (name, text_of(result))

    context = text_of(out["context"])
    assert "```memory\n# Memory context pack" in context
    assert f"#{directive.id}" in context and f"#{gotcha.id}" in context

    recall = text_of(out["recall"])
    assert f"[#{gotcha.id}] gotcha/high · Refund rounding" in recall
    assert "recorded by a person" in recall and "below the cutoff" in recall

    assert "floats lost cents" in text_of(out["expand"])

    plain = memory.note(out["plain"].structured_content["id"])
    assert (plain.provenance, plain.created_by) == ("agent", "agent")

    bound = memory.note(out["bound"].structured_content["id"])
    assert bound.provenance == "user-stated" and bound.created_by == "agent"
    assert bound.quote == "Stripe retries it up to three times, so check the event id before issuing money back."
    assert "bound to the user's words" in text_of(out["bound"])

    refused = out["refused_quote"]
    assert "quote refused: it does not appear verbatim" in text_of(refused)
    assert memory.note(refused.structured_content["id"]).provenance == "agent"

    new = memory.note(out["supersede"].structured_content["id"])
    assert new.supersedes == gotcha.id and new.paths == ("src/shop/payments.py",) and new.kind == "gotcha"
    assert memory.note(gotcha.id).state == "superseded"
    assert new.state == "active"
    assert memory.note(plain.id).state == "revoked"
    history = out["history"].structured_content["events"]
    assert [e["op"] for e in history] == ["create", "flag_stale", "reinstate"]
    assert {e["actor"] for e in history} == {"agent"}

    # the export mirror was kept fresh: debounced while writes came in, rendered 3 s after the last
    assert f"#{probe_id}" not in mirror_soon
    assert f"#{probe_id}" in mirror_later and f"#{new.id}" in mirror_later
    assert mirror_delay >= 2.9  # debounced: not re-rendered before the writes had been quiet for 3 s
    # the only curated file the server wrote is the inbox
    after = curated_files(root)
    assert {k for k in after if after[k] != curated_before.get(k)} == {"inbox.md"}

    inbox = (root / "docs/memory/inbox.md").read_text()
    assert "Decision: refunds are issued only through the payments service." in inbox
    assert "No unprocessed memory candidates." not in inbox


def test_listing_and_errors_that_say_how_to_fix(project):
    root, memory, directive, gotcha = project
    out: dict = {}
    seen: dict = {}

    async def body(session):
        seen.update({t.name: t for t in (await session.list_tools()).tools})
        out["unknown_id"] = await session.call_tool("memory_revoke", {"id": "zzzzzzzz", "reason": "x"})
        out["short_id"] = await session.call_tool("memory_expand", {"ids": ["ab"]})
        out["no_reason"] = await session.call_tool("memory_flag_stale", {"id": gotcha.id, "reason": " "})
        await session.call_tool("memory_revoke", {"id": directive.id, "reason": "obsolete"})
        out["illegal"] = await session.call_tool("memory_revoke", {"id": directive.id, "reason": "again"})
        out["bad_kind"] = await session.call_tool("memory_remember", {"text": "x", "kind": "rumour"})
        out["secret"] = await session.call_tool("memory_remember", {
            "text": "deploy key AKIAIOSFODNN7EXAMPLE with secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"})
        out["human"] = await session.call_tool("memory_remember", {"text": "sneaky", "provenance": "human",
                                                                   "actor": "human"})
        out["no_tool"] = await session.call_tool("memory_forget", {"id": gotcha.id})
        out["empty_proposal"] = await session.call_tool("memory_propose", {"text": "   "})

    run(root, body)
    check_tool_listing(seen)
    assert "no note #zzzzzzzz" in text_of(out["unknown_id"])
    assert "at least 4 characters" in text_of(out["short_id"])
    assert "needs a reason" in text_of(out["no_reason"])
    assert "revoke" in text_of(out["illegal"]).lower()
    assert "kind" in text_of(out["bad_kind"])
    assert "secret" in text_of(out["secret"]).lower()
    assert "memory_forget" in text_of(out["no_tool"])
    assert "proposal needs text" in text_of(out["empty_proposal"])
    for name in ("unknown_id", "short_id", "no_reason", "illegal", "bad_kind", "secret", "no_tool", "empty_proposal"):
        assert out[name].is_error is True, name
    # extra arguments cannot buy trust: the note is the agent's
    if not out["human"].is_error:
        assert memory.note(out["human"].structured_content["id"]).provenance == "agent"
    assert all(n.provenance != "human" for n in memory.notes() if n.created_by == "agent")
    assert memory.note(gotcha.id).state == "active"


def check_tool_listing(seen: dict) -> None:
    """Every tool, with annotations; nothing that could raise trust, hard-delete or promote."""
    assert sorted(seen) == sorted([
        "memory_context", "memory_recall", "memory_expand", "memory_history", "memory_remember",
        "memory_supersede", "memory_revoke", "memory_flag_stale", "memory_reinstate", "memory_propose"])
    for name in ("memory_context", "memory_recall", "memory_expand", "memory_history"):
        assert seen[name].annotations.read_only_hint is True
    for name in ("memory_revoke", "memory_supersede"):
        assert seen[name].annotations.read_only_hint is False and seen[name].annotations.destructive_hint is True
    for name in ("memory_remember", "memory_propose", "memory_flag_stale", "memory_reinstate"):
        assert seen[name].annotations.destructive_hint is False
    remember = seen["memory_remember"].input_schema
    assert "provenance" not in remember["properties"] and "actor" not in remember["properties"]
    assert remember["required"] == ["text"]
    assert seen["memory_remember"].description.startswith("Record a note in the ledger")
    assert all(t.description for t in seen.values())
