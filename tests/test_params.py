"""A note's and a recall's inputs are declared once (`ledger/params.py`): the MCP tools' schemas and
descriptions and the CLI's options are built from it, and they state what the library really does."""

from __future__ import annotations

import asyncio
import inspect

import pytest
from jsonschema import Draft202012Validator

from memory_custodian.agents.mcp_server import build_server
from memory_custodian.cli.table import COMMANDS
from memory_custodian.ledger.params import KEPT_DEFAULT, NOTE, NOTE_INPUTS, RECALL, RECALL_INPUTS
from memory_custodian.ledger.storage import model
from memory_custodian.memory import Memory


@pytest.fixture
def schemas(memory) -> dict:
    """Each tool's input schema as the real SDK gives it to a client."""
    return {tool.name: tool.input_schema for tool in asyncio.run(build_server(memory).list_tools())}


def test_every_tool_schema_is_valid_json_schema_with_the_ledgers_enums(schemas):
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)
    remember, recall = schemas["memory_remember"]["properties"], schemas["memory_recall"]["properties"]
    assert remember["kind"]["enum"] == list(model.KINDS)
    assert remember["priority"]["enum"] == list(model.PRIORITIES)
    assert remember["scope"]["enum"] == list(model.SCOPES)
    assert recall["kinds"]["items"]["enum"] == list(model.KINDS)
    assert recall["states"]["items"]["enum"] == list(model.RECALL_STATES)
    assert "provenance" not in remember and "provenance" not in schemas["memory_supersede"]["properties"]
    Draft202012Validator(schemas["memory_recall"]).validate({"query": "x", "states": ["stale"], "limit": 5})
    assert not Draft202012Validator(schemas["memory_remember"]).is_valid({"text": "x", "kind": "rumour"})


@pytest.mark.parametrize("tool,inputs", [("memory_remember", NOTE_INPUTS), ("memory_recall", RECALL_INPUTS)])
def test_the_tool_descriptions_state_the_declared_defaults(schemas, tool, inputs):
    props = schemas[tool]["properties"]
    for inp in inputs:
        if inp.who != "anyone":
            continue
        prop = props[inp.name]
        said = inp.default_said()
        assert prop["description"] == (f"{inp.help} (default: {said})" if said else inp.help)
        if inp.default is not model.REQUIRED:
            default = list(inp.default) if isinstance(inp.default, tuple) else inp.default
            assert prop["default"] == default, inp.name
    for name in ("kind", "priority", "tags", "paths", "scope"):
        assert schemas["memory_supersede"]["properties"][name]["description"].endswith(f"(default: {KEPT_DEFAULT})")


def test_the_declared_defaults_are_the_librarys_own():
    """`Memory`'s signatures take every declared input, with the declared default."""
    remember = inspect.signature(Memory.remember).parameters
    supersede = inspect.signature(Memory.supersede).parameters
    recall = inspect.signature(Memory.recall).parameters
    for inp in NOTE_INPUTS:
        if inp.default is not model.REQUIRED:
            assert remember[inp.name].default == inp.default, inp.name
        assert inp.name in supersede
    for inp in RECALL_INPUTS:
        assert recall[inp.name].default == inp.default, inp.name


def test_the_recall_descriptions_are_what_the_query_does(memory, schemas):
    """States default to active only (a stale note is left out); tags match any of those given."""
    stale = memory.remember("release tags are signed", tags=["release"])
    memory.flag_stale(stale.id, reason="key rotation pending")
    other = memory.remember("release notes live in CHANGES.md", tags=["docs"])
    assert [h.note.id for h in memory.recall("release").hits] == [other.id]
    assert RECALL["states"].default_said() == "active" == " and ".join(model.RECALL_DEFAULT_STATES)
    assert "(default: active)" in schemas["memory_recall"]["properties"]["states"]["description"]
    both = {h.note.id for h in memory.recall(None, tags=["release", "docs"], include_all=True).hits}
    assert both == {stale.id, other.id}  # any tag, not all of them
    assert "any of these tags" in schemas["memory_recall"]["properties"]["tags"]["description"]


def test_the_cli_options_are_built_from_the_same_declaration():
    remember = {p.dest: p for p in COMMANDS["remember"].params}
    supersede = {p.dest: p for p in COMMANDS["supersede"].params}
    recall = {p.dest: p for p in COMMANDS["recall"].params}
    for inp in NOTE_INPUTS:
        if inp.name == "text":
            assert remember["text"].help.startswith(inp.help)
            continue
        if inp.who != "anyone":  # the actor is known only when the command runs: no --provenance
            assert inp.name not in remember
            continue
        opt = remember[inp.name]
        assert opt.help.startswith(inp.help) and opt.choices == inp.choices and opt.repeat == inp.many
        assert opt.default == (None if inp.many else inp.default)
        assert (supersede[inp.name].default is None) if inp.kept else supersede[inp.name].default == opt.default
    for inp in RECALL_INPUTS:
        assert recall[inp.name].help.startswith(inp.help)
    assert recall["include_all"].flags == ("--all",) and recall["limit"].default == RECALL["limit"].default
    assert NOTE["kind"].default == remember["kind"].default == "finding"
