"""Small, surgical edits to manifest.md: index a module, add a budget line, add a route.

Each edit touches only the lines it must and returns the text unchanged when there is nothing to
do, so `enable` run twice writes nothing the second time. The parsing authority stays
`manifest.parse_manifest`; the caller re-parses the result to prove it still reads.
"""

from __future__ import annotations

from ..parse.units import fence_mask
from .reader import split_lines

DEFAULT_TRIGGERS = {  # MemoryCustodian 0.9.1's index descriptions for the usual modules
    "rules/output.md": "Load for user-facing artifacts, publishable text, or copied output.",
    "rules/code-style.md": "Load when writing, reviewing, or refactoring code style.",
    "rules/safety.md": "Load when safety-sensitive behavior, secrets, privacy, or permissions matter.",
    "rules/review.md": "Load when performing code or document review.",
    "profiles/git.md": "Load for branch, commit, merge, rebase, PR, or release-tag workflow tasks.",
    "profiles/docs.md": "Load for documentation writing, editing, or publishing workflows.",
    "profiles/release.md": "Load for release planning, changelogs, versioning, or packaging workflows.",
    "profiles/tickets.md": "Load for issue, ticket, backlog, or project-tracking workflows.",
    "profiles/research.md": "Load for research, source comparison, citations, or evidence-heavy tasks.",
    "areas/frontend.md": "Load when touching UI, routes, client state, styling, browser behavior, or frontend tests.",
    "areas/backend.md": "Load when touching APIs, persistence, services, CLI internals, or backend tests.",
    "areas/infra.md": "Load when touching deployment, CI, environments, dependencies, or operational config.",
}

INDEX_HEADING = "## Optional module index"
INDEX_INTRO = "Discover optional memory without loading it. Entries here are not default loads."
SUBSECTIONS = {"rules": "### Enabled rules", "profiles": "### Enabled profiles", "areas": "### Enabled areas"}
NONE_ENABLED = "- None enabled."


def default_trigger(module: str) -> str:
    """The index description of a new module: 0.9.1's, for the usual names and for any other."""
    if module in DEFAULT_TRIGGERS:
        return DEFAULT_TRIGGERS[module]
    folder = module.partition("/")[0]
    if folder == "rules":
        return "Load when this task-specific rule clearly matches the current task."
    if folder == "profiles":
        return "Load when this workflow clearly matches the current task or the user explicitly requests it."
    return "Load when touched files or task scope clearly match this area or the user explicitly requests it."


def _lines(text: str) -> list[str]:
    # `\n` only, as the manifest parser counts lines: a U+2028 inside a line stays inside it
    return split_lines(text)


def join_lines(lines: list[str]) -> str:
    return "\n".join(lines).rstrip("\n") + "\n"


def _h2_ranges(lines: list[str]) -> list[tuple[str, int, int]]:
    """(heading casefolded, start index, end index exclusive) of every H2 outside fences."""
    mask, _ = fence_mask([line + "\n" for line in lines])
    starts = [(i, lines[i][3:].strip().casefold()) for i in range(len(lines)) if not mask[i] and lines[i].startswith("## ")]
    out = []
    for pos, (index, name) in enumerate(starts):
        end = starts[pos + 1][0] if pos + 1 < len(starts) else len(lines)
        out.append((name, index, end))
    return out


def _section(lines: list[str], name: str) -> tuple[int, int] | None:
    for heading, start, end in _h2_ranges(lines):
        if heading == name:
            return start, end
    return None


def _content_end(lines: list[str], start: int, end: int) -> int:
    """Index just after the last non-blank line in [start, end)."""
    last = end
    while last > start and not lines[last - 1].strip():
        last -= 1
    return last


def insert_section(lines: list[str], block: list[str], before: tuple[str, ...]) -> list[str]:
    for name in before:
        found = _section(lines, name)
        if found:
            at = found[0]
            return lines[:at] + block + [""] + lines[at:]
    body = lines[:]
    while body and not body[-1].strip():
        body.pop()
    return body + [""] + block


def index_entry(text: str, module: str, description: str | None = None, paths: tuple[str, ...] = ()) -> str:
    """`text` with `module` listed under `### Enabled <kind>`; new `paths` globs are merged in."""
    kind = module.split("/", 1)[0]
    lines = _lines(text)
    found = _section(lines, INDEX_HEADING[3:].casefold())
    if found is None:
        block = [INDEX_HEADING, INDEX_INTRO, ""]
        for heading in SUBSECTIONS.values():
            block += [heading, NONE_ENABLED, ""]
        lines = insert_section(lines, block[:-1], ("optional rules", "optional profiles", "area-specific memory",
                                                     "explicit only", "context budget"))
        found = _section(lines, INDEX_HEADING[3:].casefold())
        assert found is not None  # the section was just inserted
    start, end = found
    sub_heading = SUBSECTIONS[kind]
    sub_start = next((i for i in range(start + 1, end) if lines[i].strip().casefold() == sub_heading.casefold()), None)
    if sub_start is None:
        at = _content_end(lines, start, end)
        lines = lines[:at] + ["", sub_heading, NONE_ENABLED] + lines[at:]
        found = _section(lines, INDEX_HEADING[3:].casefold())
        assert found is not None  # only a subsection was inserted into it
        start, end = found
        sub_start = next(i for i in range(start + 1, end) if lines[i].strip().casefold() == sub_heading.casefold())
    sub_end = next((i for i in range(sub_start + 1, end) if lines[i].startswith("### ")), end)

    entry_at = None
    for i in range(sub_start + 1, sub_end):
        line = lines[i]
        if line.startswith("- ") and (line[2:].strip().strip("`").startswith(module + "`")
                                      or line[2:].strip().split(":")[0].strip("` ") == module):
            entry_at = i
            break
    if entry_at is not None:
        if not paths:
            return join_lines(lines)
        meta_end = entry_at + 1
        while meta_end < sub_end and lines[meta_end][:1].isspace() and lines[meta_end].strip():
            meta_end += 1
        path_line = next((i for i in range(entry_at + 1, meta_end) if lines[i].strip().startswith("- paths:")), None)
        existing: list[str] = []
        if path_line is not None:
            existing = [p.strip().strip("`").strip() for p in lines[path_line].split(":", 1)[1].split(",") if p.strip()]
        merged = list(dict.fromkeys(existing + list(paths)))
        if merged == existing:
            return join_lines(lines)
        rendered = "  - paths: " + ", ".join(f"`{p}`" for p in merged)
        if path_line is None:
            lines.insert(entry_at + 1, rendered)
        else:
            lines[path_line] = rendered
        return join_lines(lines)

    new = [f"- `{module}`: {description or default_trigger(module)}"]
    if paths:
        new.append("  - paths: " + ", ".join(f"`{p}`" for p in dict.fromkeys(paths)))
    body = [i for i in range(sub_start + 1, sub_end) if lines[i].strip() == NONE_ENABLED]
    for i in reversed(body):
        del lines[i]
        sub_end -= 1
    at = _content_end(lines, sub_start + 1, sub_end)
    lines = lines[:at] + new + lines[at:]
    return join_lines(lines)


def budget_line(text: str, key: str, line: str) -> str:
    """Add `line` to `## Context budget` unless `key` already has one (or there is no such section)."""
    lines = _lines(text)
    found = _section(lines, "context budget")
    if found is None:
        return text
    start, end = found
    for i in range(start + 1, end):
        if lines[i].startswith("- ") and lines[i][2:].split(":", 1)[0].strip().strip("`") == key:
            return text
    anchor = next((i for i in range(start + 1, end) if lines[i].startswith("- inbox.md")), None)
    at = anchor if anchor is not None else _content_end(lines, start + 1, end)
    lines.insert(at, line)
    return join_lines(lines)


def explicit_only(text: str, item: str) -> str:
    lines = _lines(text)
    found = _section(lines, "explicit only")
    if found is None:
        return join_lines(insert_section(lines, ["## Explicit only", f"- {item}"], ("context budget",)))
    start, end = found
    if any(lines[i].strip() in (f"- {item}", f"- `{item}`") for i in range(start + 1, end)):
        return text
    at = _content_end(lines, start + 1, end)
    lines.insert(at, f"- {item}")
    return join_lines(lines)


def task_route(text: str, keywords: tuple[str, ...], module: str) -> str:
    """List `module` as `Load if present:` in every `### ` task section whose heading has a keyword."""
    lines = _lines(text)
    found = _section(lines, "load by task")
    if found is None:
        return text
    start, end = found
    heads = [i for i in range(start + 1, end) if lines[i].startswith("### ")]
    for pos in reversed(range(len(heads))):
        h = heads[pos]
        if not any(k in lines[h].casefold() for k in keywords):
            continue
        h_end = heads[pos + 1] if pos + 1 < len(heads) else end
        if any(lines[i].strip() in (f"- {module}", f"- `{module}`") for i in range(h + 1, h_end)):
            continue
        at = _content_end(lines, h + 1, h_end)
        labels = [lines[i].strip().casefold() for i in range(h + 1, at)
                  if lines[i].strip().casefold() in ("load:", "also load:", "load if present:")]
        has_optional = bool(labels) and labels[-1] == "load if present:"
        lines[at:at] = ([] if has_optional else ["Load if present:"]) + [f"- {module}"]
    return join_lines(lines)
