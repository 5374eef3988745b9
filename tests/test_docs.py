"""The README is a short guide and the docs state each fact once: where a fact has to appear in
prose (a host's events, the CI command, a count), it is checked here against the code that makes it
true, so the two cannot drift apart."""

from __future__ import annotations

import re
import shlex
import unicodedata
from pathlib import Path

import merge_model
import pytest
from conftest import REPO

from memory_custodian.agents import hooks
from memory_custodian.agents.hosts import HOSTS, load
from memory_custodian.base import secret_rules, secrets
from memory_custodian.cli import argv as cli_argv
from memory_custodian.cli.output import UsageError

README = REPO / "README.md"
README_MAX_LINES = 600
DOCS = sorted([README, *(REPO / "docs").glob("*.md"), *(REPO / "docs" / "hosts").glob("*.md")])
TOP_LEVEL_FLAGS = {"--version", "--help", "-h"}


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def outside_fences(lines: list[str]):
    """(line number, line) for each line not inside a fenced code block."""
    fence = None
    for number, line in enumerate(lines, 1):
        mark = re.match(r"\s*(`{3,}|~{3,})", line)
        if mark:
            if fence is None:
                fence = mark.group(1)
                continue
            if mark.group(1).startswith(fence) and not line.strip()[len(mark.group(1)):].strip():
                fence = None
                continue
        if fence is None:
            yield number, line


def code_blocks(source: str):
    """(info string, [(line number, line)]) of each fenced code block, its indentation removed."""
    blocks, current, info, fence, indent = [], [], "", None, 0
    for number, line in enumerate(source.split("\n"), 1):
        mark = re.match(r"(\s*)(`{3,}|~{3,})(.*)", line)
        if fence is None and mark:
            indent, fence, info, current = len(mark.group(1)), mark.group(2), mark.group(3).strip(), []
        elif fence is not None and mark and mark.group(2).startswith(fence) and not mark.group(3).strip():
            blocks.append((info, current))
            fence = None
        elif fence is not None:
            current.append((number, line[indent:] if line[:indent].isspace() else line))
    return blocks


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    heading = re.sub(r"`|\*\*|\*|_(?=\W)|(?<=\W)_", "", heading.strip()).lower()
    kept = "".join(ch for ch in heading if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _number, line in outside_fences(text(path).split("\n")):
        heading = re.match(r"#{1,6} (.+?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(path: Path):
    """(line number, target) of each Markdown link or image outside code."""
    for number, line in outside_fences(text(path).split("\n")):
        prose = re.sub(r"`[^`]*`", "", line)
        for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", prose):
            yield number, target


# -- the README is a guide ---------------------------------------------------------------------

def test_the_readme_is_at_most_600_lines():
    lines = text(README).count("\n")
    assert lines <= README_MAX_LINES, (f"README.md has {lines} lines; the guide stays under {README_MAX_LINES}: "
                                       "move reference, figures and design notes to a page under docs/ and link it")


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_resolves(path):
    broken = []
    for number, target in links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: — not ours to check
            continue
        file_part, _, anchor = target.partition("#")
        where = (path.parent / file_part).resolve() if file_part else path
        if not where.exists():
            broken.append(f"{path.name}:{number}: {target} — no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{path.name}:{number}: {target} — no heading with that anchor in {where.name}")
    assert not broken, "\n".join(broken)


def readme_commands() -> list[tuple[int, str]]:
    """(line, command) of every `memory-custodian …` the README shows: shell and console blocks, inline code."""
    source = text(README)
    found = []
    for info, lines in code_blocks(source):
        if info not in ("sh", "console", "bash", "shell"):
            continue
        pending, start = "", 0
        for number, line in lines:
            if info == "console" and not pending:
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            start = start or number
            if line.endswith("\\"):  # a command continued on the next line
                pending += line[:-1] + " "
                continue
            found.append((start, pending + line))
            pending, start = "", 0
    for number, line in outside_fences(source.split("\n")):
        found.extend((number, span) for span in re.findall(r"`(memory-custodian [^`]+)`", line))
    commands = []
    for number, line in found:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.commenters = "#"
        words: list[str] = []
        for word in [*lexer, "&&"]:
            if word in ("&&", "||", "|", ";", "<", ">", "&"):
                if words and words[0] == "memory-custodian":
                    commands.append((number, words[1:]))
                words = [] if word != "<" and word != ">" else ["<redirect>"]
            else:
                words.append(word)
    return commands


def test_every_command_the_readme_shows_parses():
    commands = readme_commands()
    assert len(commands) > 30  # the guide shows the everyday commands
    wrong = []
    for number, argv in commands:
        if argv and argv[0] in TOP_LEVEL_FLAGS:
            continue
        try:
            cli_argv.parse(argv)
        except UsageError as exc:
            wrong.append(f"README.md:{number}: memory-custodian {shlex.join(argv)}: {exc}")
    assert not wrong, "\n".join(wrong)


def opening_commands() -> list[str]:
    info, lines = code_blocks(text(README))[0]
    assert info == "sh"
    return [line for _number, line in lines if line.strip() and not line.lstrip().startswith("#")]


def ci_test_command() -> str:
    """The commands .ci/run runs, from the virtual environment through the test run, joined as one line."""
    lines = [line.strip() for line in text(REPO / ".ci" / "run").split("\n")]
    start = next(i for i, line in enumerate(lines) if line.startswith("python3 -m venv"))
    end = next(i for i, line in enumerate(lines) if line.startswith("python -m pytest"))
    return " && ".join(line for line in lines[start:end + 1] if line and not line.startswith("#"))


def test_the_readme_opens_with_the_demo_and_the_ci_test_command():
    demo, tests_command = opening_commands()
    assert tests_command == ci_test_command(), (
        "the README's second command must be what .ci/run runs; write it as:\n" + ci_test_command())
    setup = ci_test_command().split(" && ")[:2]  # the same virtual environment, made the same way
    assert demo.split(" && ")[:2] == setup
    assert demo.endswith("&& bash examples/demo.sh") and (REPO / "examples" / "demo.sh").is_file()
    assert "The first two lines of the README" not in text(README)


def test_the_readme_states_the_supported_python_as_pyproject_does():
    wanted = re.search(r'requires-python = ">=(\d+\.\d+)"', text(REPO / "pyproject.toml")).group(1)
    assert f"Python ≥ {wanted}" in text(README)


# -- host events: one table, checked against the host modules ----------------------------------

def host_table() -> tuple[list[str], list[list[str]]]:
    source = text(REPO / "docs" / "hosts" / "README.md")
    section = source.split("## What the agent sees at each event", 1)[1].split("\n## ", 1)[0]
    rows = [[cell.strip() for cell in line.strip().strip("|").split(" | ")]
            for line in section.split("\n") if line.startswith("|")]
    return rows[0], rows[2:]


def test_the_host_event_table_matches_the_host_modules():
    header, rows = host_table()
    columns = {name: next(i for i, cell in enumerate(header) if name in cell.lower()) for name in HOSTS}
    actions = {}
    for row in rows:
        action = re.search(r"\(`(\w+)`\)", row[0]).group(1)
        actions[action] = row
    hosts = {name: load(name) for name in HOSTS}
    assert set(actions) == {action for host in hosts.values() for action in host.events.values()}
    wrong = []
    for action, row in actions.items():
        for name, host in hosts.items():
            cell = row[columns[name]]
            named = re.findall(r"`([^`]+)`", cell)
            events = [word for word in named if word in host.events]
            tools = [word for word in named if word not in host.events]
            want_events = [event for event, does in host.events.items() if does == action]
            want_tools = list(host.file_tools) if action == "file" else []
            if sorted(events) != sorted(want_events) or sorted(tools) != sorted(want_tools):
                wanted = ", ".join(f"`{e}`" for e in want_events) or "—"
                if want_tools:
                    wanted += " on " + ", ".join(f"`{t}`" for t in want_tools)
                wrong.append(f"{action} / {name}: the table says {cell!r}; {name}.py says {wanted}")
    assert not wrong, "docs/hosts/README.md:\n" + "\n".join(wrong)


@pytest.mark.parametrize("name", HOSTS)
def test_each_host_page_names_its_events_and_its_file_matcher(name):
    host = load(name)
    page = text(REPO / "docs" / "hosts" / f"{name}.md")
    missing = [event for event in host.events if f"`{event}`" not in page and f"**{event}**" not in page]
    assert not missing, f"docs/hosts/{name}.md never names {missing}"
    matchers = [m.replace("\\|", "|") for m in re.findall(r"matcher `([^`]+)`", page)]
    assert matchers and all(m == "|".join(host.file_tools) for m in matchers), matchers


def test_the_readme_repeats_no_host_event():
    """The README links the host table rather than copy it (its copy had drifted once)."""
    readme = text(README)
    events = {event for name in HOSTS for event in load(name).events}
    named = sorted(event for event in events if re.search(rf"\b{event}\b", readme))
    assert not named, f"README.md names host events {named}: link docs/hosts/README.md instead"


def test_the_docs_say_how_many_task_checkpoints_the_session_start_lists():
    said = []
    for path in DOCS:
        source = text(path)
        said += [int(n) for n in re.findall(r"up to (\d+) open task checkpoints", source)]
        said += [int(n) for n in re.findall(r"most recent first \((\d+), and the count of the rest\)", source)]
        assert not re.search(r"high-priority task checkpoints", source), path  # every priority is listed
    assert said and set(said) == {hooks.HIGH_TASKS}


# -- counts stated in prose ---------------------------------------------------------------------

def test_the_merge_matrix_count_is_the_models():
    said = [int(n.replace(",", "")) for path in DOCS for n in re.findall(r"\b(\d[\d,]*) cells\b", text(path))]
    assert said and set(said) == {merge_model.case_count()}, said


def test_the_secret_detector_kind_count_is_the_rules():
    kinds = {kind for kind, _source, _triggers in secret_rules.RULES} | secrets.GENERIC_KINDS
    said = re.findall(r"plugins cover: (\d+) kinds", text(REPO / "docs" / "reliability.md"))
    assert said == [str(len(kinds))]


def test_every_benchmark_script_is_listed():
    scripts = sorted(p.name for p in (REPO / "benchmarks").glob("*.py") if "__main__" in text(p))
    listed = text(REPO / "docs" / "development.md")
    missing = [name for name in scripts if f"`{name}" not in listed]
    assert not missing, f"docs/development.md's benchmark table lacks {missing}"


def test_the_readme_copies_no_compatibility_table():
    """docs/compatibility.md says what matched and what differs; a second copy drifted before."""
    assert "| matched" not in text(README)


def test_the_note_limits_the_ledger_page_states_are_the_code_s():
    from memory_custodian.base import limits

    page = " ".join(text(REPO / "docs" / "ledger.md").split())
    said = re.search(r"Limits, in characters: note text ([\d,]+); title (\d+); quote and each reason ([\d,]+); "
                     r"a tag (\d+) and (\d+) tags a note; a path (\d+) and (\d+) paths a note", page)
    assert said, "docs/ledger.md no longer states the note limits: link the limits table instead and drop this test"
    assert [int(n.replace(",", "")) for n in said.groups()] == [
        limits.NOTE_TEXT_CHARS, limits.TITLE_CHARS, limits.QUOTE_CHARS, limits.TAG_CHARS, limits.TAGS_PER_NOTE,
        limits.PATH_CHARS, limits.PATHS_PER_NOTE]
    assert limits.QUOTE_CHARS == limits.REASON_CHARS  # the page states them as one figure
    assert f"at most {limits.SHOWN_CHARS} characters of what was given" in page


def test_every_extra_the_readme_installs_exists():
    table = text(REPO / "pyproject.toml").split("[project.optional-dependencies]")[1].split("\n[")[0]
    extras = set(re.findall(r"^(\w[\w-]*) = \[", table, re.M))
    named = set(re.findall(r"\.\[([\w,-]+)\]", text(README)))
    unknown = {extra for group in named for extra in group.split(",")} - extras
    assert not unknown, f"README.md installs extras pyproject.toml does not declare: {sorted(unknown)}"


def test_the_limits_page_states_every_limit_the_code_declares():
    from memory_custodian.base import limits

    page = text(REPO / "docs" / "limits.md")
    declared = {name: value for name, value in vars(limits).items() if name.isupper() and isinstance(value, int)}
    assert len(declared) >= 15
    missing = [name for name, value in declared.items() if f"{value:,}" not in page]
    assert not missing, f"docs/limits.md does not state {missing}: add them to its table"
