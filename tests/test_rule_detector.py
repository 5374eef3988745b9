"""The standing-rule detector behind the prompt hook's nudge, on real sentences.

The labelled sets live in `benchmarks/rules/` (docs/rule-detector.md says where each sentence comes
from). The test splits are frozen: their hashes are pinned here, so no one can tune the detector on
them and quietly edit a label; `benchmarks/bench_rule_detector.py` prints the figures on both splits.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import run_cli_process

from memory_custodian import Memory
from memory_custodian.agents import hosts
from memory_custodian.session.rule_prompts import nudge, sentences, standing_rule

RULES = Path(__file__).resolve().parents[1] / "benchmarks" / "rules"
HOSTS = Path(__file__).parent / "fixtures" / "hosts"
PROMPT_EVENT = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}
FROZEN = {  # sha256 of each held-out file, taken when it was written, before the detector was tuned
    "test.jsonl": "38045c51833b099fce37a985ad7f0d67072353210baf517c63137fd4f58293e9",
    "prompts-test.jsonl": "2c4e10f2977125494d4c0f3ec9772fed2ce35988d56ab79988788d72edcca9d3",
}


def rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (RULES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_held_out_splits_are_frozen():
    for name, digest in FROZEN.items():
        assert hashlib.sha256((RULES / name).read_bytes()).hexdigest() == digest, f"{name} changed"


def test_no_source_is_in_both_splits():
    def repos(name: str) -> set[str]:
        return {row["source"].split(" ")[0].split("#")[0] for row in rows(name)}

    assert not repos("dev.jsonl") & repos("test.jsonl")
    assert not repos("prompts-dev.jsonl") & repos("prompts-test.jsonl") - {"examples"}
    assert all(row["source"] and row["text"] for name in ("dev.jsonl", "test.jsonl") for row in rows(name))


def figures(name: str) -> tuple[float, float]:
    labelled = rows(name)
    caught = [standing_rule(r["text"]) is not None for r in labelled]
    tp = sum(c and r["rule"] for c, r in zip(caught, labelled, strict=True))
    return tp / max(1, sum(caught)), tp / sum(r["rule"] for r in labelled)


def test_the_goals_hold_on_both_splits():
    """Recall ≥ 0.80 at precision ≥ 0.95 on the held-out split (measured once the detector was built;
    the dev split is what it was tuned on). A change that drops below either must say so in
    docs/rule-detector.md, not tune against the test split."""
    for name in ("dev.jsonl", "test.jsonl"):
        precision, recall = figures(name)
        assert precision >= 0.95 and recall >= 0.80, (name, precision, recall)


@pytest.mark.parametrize("name", ["prompts-dev.jsonl", "prompts-test.jsonl"])
def test_whole_messages_nudge_never_on_errors_and_logs_and_quote_only_the_rule(name):
    for row in rows(name):
        quote = standing_rule(row["text"])
        if row["rule_sentence"] is None:
            assert quote is None, (row["source"], quote)
        else:
            assert quote is not None and " ".join(quote.split()) == " ".join(row["rule_sentence"].split()), row


@pytest.mark.parametrize("text", [
    "Prefer dataclasses over hand-written `__init__` methods", "Limit lines to 88 characters",
    "Keep the CLI free of network calls so it works offline",
    "If the linter complains, fix the code rather than silencing it",
    "When you add an endpoint, add its OpenAPI entry too", "After changing the schema, regenerate the client",
    "Every public function needs a docstring", "All migrations must be reversible", "Only maintainers may tag releases",
    "This repo uses poetry, not pip", "We squash commits before merging",
    "Make sure you never commit secrets or .env files",
    "in this repo we always squash-merge PRs", "Remember: the release branch is frozen on Fridays",
    "Don\u2019t commit generated files.",
])
def test_the_forms_people_write_rules_in(text):
    assert standing_rule(text) == text


@pytest.mark.parametrize("text", [
    "always the same error: KeyError 'protocol' when I run migrate",
    "Can we always retry on 503?", "Don't push this yet, I want to look at the diff first.",
    "Skip the flaky upload test for now.", "This time, run only the unit tests.", "Use tabs in this file.",
    "I always get this error after upgrading to 2.1.", "It never returns when the cache is cold.",
    "Don't worry about the failing lint job, it is flaky upstream.", "Never mind, it was a typo in my config.",
    "Add a --verbose flag to the export command.", "Fix the failing test in tests/test_api.py.",
    "npm ERR! Fix the upstream dependency conflict, or retry",
    "keila-1  | To configure a captcha, use the following environment variables:",
    "ERROR: Always check the input file (code 3)",
    "```\nnever call this from a signal handler\n```",
])
def test_questions_one_offs_reports_and_error_text_are_not_rules(text):
    assert standing_rule(text) is None


def test_a_rule_inside_a_paragraph_or_a_list_is_quoted_alone():
    message = ("The deploy went fine this morning, thanks. Two things for the future:\n"
               "- the staging database is shared with QA\n"
               "- always run the migrations through `make migrate`,\n"
               "  never by hand\n\nCan you look at the flaky upload test next?")
    assert standing_rule(message) == "always run the migrations through `make migrate`, never by hand"
    assert standing_rule("When I run migrate I get KeyError: 'protocol'. From now on, run migrations through make.") \
        == "From now on, run migrations through make."
    assert sentences("See e.g. `uv run`. Use it. Version 2.1. Then stop.") == [
        "See e.g. `uv run`.", "Use it.", "Version 2.1. Then stop."]


def test_the_nudge_names_the_sentence_and_asks_rather_than_guesses():
    line = nudge("Always   run the migrations through make migrate.")
    assert "\u201cAlways run the migrations through make migrate.\u201d" in line
    assert "record that exact sentence" in line and "ask them first" in line and "never record a reworded" in line


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    Memory.open(root).init()
    return root


def _prompt_hook(host: str, root: Path, prompt: str) -> str:
    event = PROMPT_EVENT[host]
    data = json.loads((HOSTS / host / f"{event}.json").read_text().replace("__PROJECT__", str(root)))
    data["prompt"] = prompt
    proc = run_cli_process("hook", "--host", host, event, cwd=root, input=json.dumps(data),
                           env={"PATH": os.environ.get("PATH", "")})
    assert proc.returncode == 0 and "could not be loaded" not in proc.stderr, proc.stderr
    out = proc.stdout.strip()
    return json.loads(out).get("hookSpecificOutput", {}).get("additionalContext", "") if out else ""


@pytest.mark.parametrize("host", hosts.HOSTS)
def test_the_hook_nudges_on_the_rule_in_a_pasted_error_report_and_only_on_it(tmp_path, host):
    root = _project(tmp_path)
    report = ("migrate fails again:\n\nTraceback (most recent call last):\n  File \"manage.py\", line 22, in <module>\n"
              "KeyError: 'protocol'\n\nIt always fails the same way on staging. Fix it, and from now on run "
              "`make check` before every push.")
    context = _prompt_hook(host, root, report)
    assert "standing rule: \u201cFix it, and from now on run `make check` before every push.\u201d" in context
    assert "KeyError" not in context.split("standing rule")[1] and "ask them first" in context
    assert "standing rule" not in _prompt_hook(host, root, rows("prompts-dev.jsonl")[0]["text"])
