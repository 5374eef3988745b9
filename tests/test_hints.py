"""Results carry hints, callers word them: the library names what would show more, and each door says
it in its own terms (`errors.Terms`); no CLI flag or command reaches a library result or error."""

from __future__ import annotations

import ast
import asyncio
import re

import pytest
from conftest import REPO, run_cli

from memory_custodian.agents.hooks import HookTerms
from memory_custodian.agents.mcp_server import TOOL_TERMS, TOOLS, build_server
from memory_custodian.agents.recall_view import TOOL_VERBS
from memory_custodian.base.errors import InvalidInput
from memory_custodian.cli.table import COMMANDS
from memory_custodian.cli.terms import CLI_TERMS
from memory_custodian.web.html import WEB_TERMS

SRC = REPO / "src" / "memory_custodian"
ADAPTERS = ("cli", "agents", "web")
COMMAND_NAMES = "|".join(map(re.escape, COMMANDS))
CLI_WORDS = re.compile(rf"memory-custodian (?:{COMMAND_NAMES})\b|(?:^|[\s(`\"'])--[a-z]")

# What the library still says in the command line's words, by module: the curated tier's findings and plan
# lines, the ledger's doctor and mirror lines, the export and check-out files (their text is golden), the
# setup doctor's fixes and the merge drivers' (with git's own options), the stats report, the stop hook's
# and the rule nudge's instructions. Each is to be turned into a hint the same way; a number may only go down.
STILL_IN_CLI_WORDS = {
    "curated/checking.py": 6, "curated/manifest/routing.py": 3, "curated/pack/reading.py": 5,
    "curated/parse/conflicts.py": 1, "curated/write/add.py": 2, "curated/write/compact.py": 1,
    "curated/write/forget.py": 4, "curated/write/initializing.py": 1, "curated/write/write_api.py": 1,
    "ledger/storage/fold.py": 1, "ledger/storage/shard_doctor.py": 3, "ledger/storage/store.py": 2,
    "ledger/text/edit.py": 4, "ledger/text/export.py": 3, "ledger/text/mirror.py": 4, "ledger/text/text_api.py": 4,
    "base/launcher.py": 1,  # the line a hook prints where the tool is not installed: only a shell can act on it
    "session/adoption.py": 5, "session/checkpoint.py": 1, "session/rule_prompts.py": 1,
    "setup/merge_drivers.py": 6, "setup/gitrepo.py": 2, "setup/setup_doctor.py": 8,
    "history/gitsource.py": 24,  # git's own options, and the git fetch a shallow clone needs: none of ours
}


def _cli_words_by_module() -> dict[str, int]:
    """Library string constants (docstrings aside) that name a CLI command or flag."""
    found: dict[str, int] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.split("/")[0] in ADAPTERS or rel == "__main__.py":
            continue
        source = path.read_text(encoding="utf-8")
        if not CLI_WORDS.search(source):
            continue
        tree = ast.parse(source)
        docs = {id(node.body[0].value) for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                    and CLI_WORDS.search(node.value)):
                found[rel] = found.get(rel, 0) + 1
    return found


def test_no_new_cli_word_in_a_library_string():
    found = _cli_words_by_module()
    grown = {m: n for m, n in found.items() if n > STILL_IN_CLI_WORDS.get(m, 0)}
    assert grown == {}, "a library result or error names a CLI flag or command: write a hint ({verb:...})"
    # the ledger's recall and pack, and evaluate, say none
    assert not {"ledger/recall/recall_result.py", "ledger/pack_sections.py", "ledger/recall/evaluate.py",
                "base/fsutil.py", "memory.py"} & set(found)


def test_the_scan_finds_cli_words():
    assert CLI_WORDS.search("— --all to include") and CLI_WORDS.search("run `memory-custodian expand ID`")
    assert not CLI_WORDS.search("newer than this memory-custodian supports") and not CLI_WORDS.search("a - b")


def test_one_recall_hint_in_each_doors_words(memory):
    note = memory.remember("release tags are signed")
    memory.flag_stale(note.id, reason="key rotation")
    memory.remember("release notes are in CHANGES.md")
    result = memory.recall("release")
    assert result.hint == "more_states" and result.to_dict()["hint"] == "more_states"
    assert result.footer().endswith("— include_all=True to include")
    assert result.footer(CLI_TERMS).endswith("— --all to include")
    assert result.footer(TOOL_TERMS).endswith("— include_all=true to include")
    assert result.footer(WEB_TERMS).endswith("— tick the \u201csearch every state\u201d box to include")
    cli = run_cli("recall", "release", cwd=memory.root)
    assert "1 excluded (1 stale) — --all to include" in cli.stdout
    mcp = asyncio.run(build_server(memory).call_tool("memory_recall", {"query": "release"}))
    assert "include_all=true to include" in mcp.content[0].text and "--" not in mcp.content[0].text.split("```")[2]


def test_the_pack_points_to_expand_in_each_doors_words(memory):
    memory.remember("The daemon holds the workspace lock across restarts", paths=["src/daemon.py"])
    app = build_server(memory)
    context = asyncio.run(app.call_tool("memory_context", {"paths": ["src/daemon.py"], "query": "daemon lock"}))
    text = context.content[0].text
    assert "`memory_expand` with ids=[ID] for full notes" in text and "memory-custodian expand" not in text
    read = run_cli("read", "--task", "implementation", "--path", "src/daemon.py", "-q", "daemon lock",
                   cwd=memory.root)
    assert "`memory-custodian expand ID` for full notes" in read.stdout
    hooks = HookTerms(CLI_TERMS).call("expand", [("ids", "ID")])
    assert hooks == "`memory_expand` (MCP) or `memory-custodian expand ID`"


def test_a_library_error_names_no_flag(memory):
    with pytest.raises(InvalidInput) as err:
        memory.evaluate(REPO / "tests" / "golden" / "nonexistent.jsonl", k=0)
    assert err.value.one_line() == "k must be 1 or more"
    assert err.value.one_line(CLI_TERMS) == "--k must be 1 or more"
    assert err.value.one_line(TOOL_TERMS) == "`k` must be 1 or more"


def test_the_hooks_know_the_tools_the_server_has():
    assert set(TOOL_VERBS.values()) == {name for name, _ in TOOLS}
