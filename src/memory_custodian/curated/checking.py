"""`check` (validate the whole curated folder, one finding a line) and `status` (one screen a person reads).

Both exit 1 on any problem they find and 0 otherwise, as MemoryCustodian 0.9.1's do; 2 is left for
a folder they cannot read at all (a symlink loop, a permission). A missing memory folder is a
ProblemsFound (exit 1). Problem codes: core-missing, manifest-invalid, manifest-section-missing,
manifest-unknown-task-heading, manifest-task-unrouted, manifest-lookalike-heading, conflict-markers, route-missing, route-escapes,
index-missing, not-indexed, over-budget, oversized-entry, unclosed-fence, not-utf8, protocol-missing,
protocol-unsupported, interrupted-write, uncurated-brief, long-entry. Warnings (reported, exit 0):
unused-task-heading, duplicate-task-heading, manifest-ignored-line, manifest-unknown-section,
cache-gitignore-missing, machine-specific-path.
"""

from __future__ import annotations

import os
import re

from ..base import fsutil
from ..base.errors import CustodianError, ProblemsFound
from ..base.fsutil import read_utf8
from ..base.records import Record, field
from ..base.tokens import estimate_tokens
from .manifest.reader import parse_manifest
from .manifest.routing import (
    CANONICAL_TASKS,
    KNOWN_SECTIONS,
    SECTION_TITLES,
    TASK_KEYWORDS,
    Manifest,
    budget_for,
    default_budget,
    manifest_errors,
)
from .pack.reading import CURATED_FOLDERS, curated_files, interrupted_write, memory_files, raise_if_unreadable, readable_errors
from .parse.bullets import split_items
from .parse.conflicts import ADVICE, marker_line
from .parse.units import pack, split_units
from .write.entries import DECISION_ENTRY_BUDGET, long_decisions
from .write.fingerprints import FILE, fingerprint, parse
from .write.templates import CORE_FILES, brief_is_template

PROBLEM, WARNING = "problem", "warning"
SUPPORTED_PROTOCOLS = ("0.5",)


class Finding(Record):
    """One finding; `file` is relative to the project root, `line` 1-based or None."""

    severity: str
    code: str
    file: str
    line: int | None
    message: str

    def to_dict(self) -> dict:
        return {"severity": self.severity, "code": self.code, "file": self.file, "line": self.line,
                "message": self.message}

    def one_line(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.severity}: {self.code}: {self.message}"


class CheckResult(Record):
    memory_dir: str
    findings: list[Finding] = field(default_factory=list)
    files_checked: int = 0

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == PROBLEM]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {"memory_dir": self.memory_dir, "ok": self.ok, "files_checked": self.files_checked,
                "problems": len(self.problems), "warnings": len(self.findings) - len(self.problems),
                "findings": [f.to_dict() for f in self.findings]}


def _memory_files(memory_dir) -> list[str]:
    return memory_files(memory_dir, CURATED_FOLDERS + ("archive",))


def _shown(memory, memory_dir) -> str:
    """The memory folder as findings and status name it: relative to the project root, POSIX."""
    return os.path.relpath(os.fspath(memory_dir), memory.root_str).replace(os.sep, "/")


@readable_errors
def check_memory(memory) -> CheckResult:
    memory_dir = memory.memory_dir_str
    rel = _shown(memory, memory_dir)
    result = CheckResult(rel)
    add = result.findings.append
    _require_folder(memory_dir)

    def f(name: str) -> str:
        return f"{rel}/{name}"

    for name in CORE_FILES:
        if not fsutil.is_file(os.path.join(memory_dir, name)):
            add(Finding(PROBLEM, "core-missing", f(name), None, CORE_MISSING))

    texts: dict[str, str] = {}
    forgotten = _forgotten_prints(memory_dir)
    for name in _memory_files(memory_dir):
        result.files_checked += 1
        try:
            texts[name] = read_utf8(os.path.join(memory_dir, name))
        except CustodianError as exc:
            add(Finding(PROBLEM, "not-utf8", f(name), exc.line, exc.message))
            continue
        marker = marker_line(texts[name])
        if marker is not None:
            add(Finding(PROBLEM, "conflict-markers", f(name), marker, ADVICE))
        document = split_units(texts[name])
        for line in _forgotten_lines(document, forgotten) if forgotten else ():
            add(Finding(PROBLEM, "forgotten-entry-back", f(name), line, FORGOTTEN_BACK))
        if document.unclosed_fence_line is not None:
            add(Finding(PROBLEM, "unclosed-fence", f(name), document.unclosed_fence_line,
                        "code fence is never closed; the rest of the file is read as code — close it"))

    manifest: Manifest | None = None
    if "manifest.md" in texts:
        try:
            manifest = parse_manifest(texts["manifest.md"], f("manifest.md"))
        except CustodianError as exc:
            add(Finding(PROBLEM, "manifest-invalid", f("manifest.md"), exc.line, exc.message))

    if manifest is not None:
        for code, at, message in manifest_errors(manifest, curated_files(memory_dir)):
            add(Finding(PROBLEM, code, f("manifest.md"), at, message))
        _check_manifest(manifest, memory_dir, texts, add, f)
    _check_sizes(manifest, texts, add, f)
    journal = interrupted_write(memory_dir)
    if journal is not None:
        add(Finding(PROBLEM, "interrupted-write", f(".cache/journal.json"), None, journal))
    if brief_is_template(texts.get("brief.md")):
        add(Finding(PROBLEM, "uncurated-brief", f("brief.md"), 1, UNCURATED_BRIEF))
    _check_machine_paths(texts.get("preferences.md"), add, f)
    # a folder without `.cache/` (as 0.9.1 leaves it) has nothing to ignore yet
    if os.path.isdir(os.path.join(memory_dir, ".cache")) and not fsutil.is_file(os.path.join(memory_dir, ".cache", ".gitignore")):
        add(Finding(WARNING, "cache-gitignore-missing", f(".cache/.gitignore"), None,
                    "the derived cache is not git-ignored — run `memory-custodian init` to add it"))
    result.findings.sort(key=lambda x: (x.file, x.line or 0, x.code, x.message))
    return result


FORGOTTEN_BACK = ("this entry was forgotten (its fingerprint is in forgotten.txt) and is back, through a copy or a "
                  "merge that could not see the forget — delete it, or forget its topic again")


def _forgotten_prints(memory_dir) -> frozenset:
    path = os.path.join(os.fspath(memory_dir), FILE)
    return parse(read_utf8(path)) if fsutil.is_file(path) else frozenset()


def _forgotten_lines(document, forgotten: frozenset) -> list[int]:
    """The lines of entries (and of bullets inside a dated section) whose fingerprint was forgotten."""
    lines = []
    for unit in document.units:
        if fingerprint(unit.text) in forgotten:
            lines.append(unit.start_line)
        elif unit.kind == "section" and "\n- " in unit.text:
            body = unit.text.partition("\n")[2]
            lines.extend(unit.start_line + b.start_line for b in split_units(body).units
                         if fingerprint(b.text) in forgotten)
    return lines


def _check_sizes(manifest: Manifest | None, texts: dict, add, f) -> None:
    """Each file against its budget, and each decision against the one-decision limit."""
    for name, text in texts.items():
        if name.startswith("archive/") or name == "manifest.md":
            continue
        budget = manifest.budget_for(name) if manifest is not None else default_budget(name)
        packed = pack(text, budget)
        if packed.oversized:
            unit = packed.chosen[0] if packed.chosen else None
            line = unit.start_line if unit else 1
            add(Finding(PROBLEM, "oversized-entry", f(name), line,
                        f"one entry is larger than the whole {budget}-token budget; split or shorten it"))
        elif packed.omitted:
            lead = text[: len(text) - len(text.lstrip())].count("\n")  # pack splits the stripped text
            omitted = len(packed.omitted_entries)
            add(Finding(PROBLEM, "over-budget", f(name), packed.omitted[0].start_line + lead,
                        f"{_file_tokens(text)} tokens against a {budget}-token budget: "
                        f"{omitted} entr{'y' if omitted == 1 else 'ies'} from this line on would be omitted — "
                        f"{compact_advice(name)}"))
        if name == "decisions.md":
            for heading, line, tokens in long_decisions(text):
                add(Finding(PROBLEM, "long-entry", f(name), line, long_decision_message(heading, tokens)))


# a preference that names one person's disk does not hold on a teammate's machine or in CI
_MACHINE_PATH_RE = re.compile(r"(?<![\w.])(/Volumes/|/Users/|/home/[^/\s]+/|[A-Za-z]:\\)")


def _check_machine_paths(text: str | None, add, f) -> None:
    if text is None:
        return
    for number, line in enumerate(text.split("\n"), 1):
        hit = _MACHINE_PATH_RE.search(line)
        if hit:
            add(Finding(WARNING, "machine-specific-path", f("preferences.md"), number,
                        f"{hit.group(1)}… is a path on one machine; write it relative to the project, or keep "
                        "it in your own settings"))


CORE_MISSING = "core file is missing — run `memory-custodian init` to recreate it"


def compact_advice(name: str) -> str:
    return f"run `memory-custodian compact --target {name}` or raise the budget"


def _require_folder(memory_dir: str) -> None:
    """No memory folder at all: 0.9.1's `check` and `status` say so and exit 1 (a finding, not bad input)."""
    if not os.path.isdir(memory_dir):
        raise ProblemsFound("no memory folder here — run {verb:init} first, or pass {field}", path=memory_dir,
                            field="project_root")


# MemoryCustodian 0.9.1 fails `check` and `status` on these two (exit 1); so do we
UNCURATED_BRIEF = "brief.md is still the template; describe the project so every task starts from it"


def long_decision_message(heading: str, tokens: int) -> str:
    return (f"decision {heading!r} is {tokens} tokens (> {DECISION_ENTRY_BUDGET}); shorten it, or move its detail "
            "to constraints.md, an area or the source docs")


def _file_tokens(text: str) -> int:
    return estimate_tokens(text.strip())


def _check_manifest(manifest: Manifest, memory_dir, texts: dict, add, f) -> None:
    mpath = f("manifest.md")
    version = manifest.metadata.get("protocol_version")
    if version is None:
        add(Finding(PROBLEM, "protocol-missing", mpath, None,
                    "no `## MemoryCustodian Protocol` section with `- protocol_version: 0.5`; add it"))
    elif version not in SUPPORTED_PROTOCOLS:
        add(Finding(PROBLEM, "protocol-unsupported", mpath, None,
                    f"protocol_version {version} is not supported (this build reads {', '.join(SUPPORTED_PROTOCOLS)})"))
    for line, message in manifest.warnings:
        add(Finding(WARNING, "manifest-ignored-line", mpath, line, message))
    for line, heading, known, odd in manifest.lookalikes:
        add(Finding(PROBLEM, "manifest-lookalike-heading", mpath, line,
                    f"`## {heading}` is not `## {SECTION_TITLES[known]}`: it contains {odd}, so the section "
                    f"is ignored — retype the heading"))
    faked = {line for line, *_ in manifest.lookalikes}
    for name, line in manifest.sections:
        if name not in KNOWN_SECTIONS and line not in faked:
            add(Finding(WARNING, "manifest-unknown-section", mpath, line,
                        f"`## ` section {name!r} is not part of the protocol; routing ignores it"))
    seen_tasks: dict[str, int] = {}
    for section in manifest.task_sections:
        heading = section.heading.casefold()
        served = [t for t in CANONICAL_TASKS if any(k in heading for k in TASK_KEYWORDS[t])]
        for task in served:
            if task in seen_tasks:
                add(Finding(WARNING, "duplicate-task-heading", mpath, section.line,
                            f"{task} is already served by the heading on line {seen_tasks[task]}; this one is never used for it"))
            else:
                seen_tasks[task] = section.line
    base = fsutil.real_path(memory_dir)
    routes = list(manifest.always) + [r for s in manifest.task_sections for r in s.routes]
    for route in routes:
        path = os.path.join(memory_dir, *route.module.split("/"))
        if not fsutil.inside(fsutil.real_path(path), base):
            add(Finding(PROBLEM, "route-escapes", mpath, route.line,
                        f"{route.module} leaves the memory folder through a symlink; replace the link with a real file"))
        elif route.required and not fsutil.is_file(path):
            raise_if_unreadable(path)
            add(Finding(PROBLEM, "route-missing", mpath, route.line,
                        f"required route {route.module} does not exist; create it or move it under `Load if present:`"))
    indexed = set()
    for entry in manifest.index:
        indexed.add(entry.module)
        if not fsutil.is_file(os.path.join(memory_dir, entry.module)):
            add(Finding(PROBLEM, "index-missing", mpath, entry.line,
                        f"{entry.module} is in the module index but does not exist; create it or remove the entry"))
    for name in manifest.unrouted_core(set(texts)):
        add(Finding(PROBLEM, "core-not-routed", mpath, None, manifest.unrouted_core_text(name)))
    routed = set(manifest.all_routed_modules())
    for name in texts:
        folder = name.split("/", 1)[0] if "/" in name else ""
        if (folder in ("rules", "profiles", "areas") and not name.endswith("/README.md")
                and name not in indexed and name not in routed):
            add(Finding(PROBLEM, "not-indexed", f(name), None,
                        f"optional module is not in the manifest's module index, so nothing can load it — "
                        f"run `memory-custodian enable {name[:-3]}` or list it under `### Enabled {folder}`"))


class FileStatus(Record):
    name: str
    tokens: int
    budget: int | None
    entries: int
    kind: str
    over_budget: bool

    def to_dict(self) -> dict:
        return {"name": self.name, "tokens": self.tokens, "budget": self.budget, "entries": self.entries,
                "kind": self.kind, "over_budget": self.over_budget}


class StatusResult(Record):
    """`problems` are the one-line findings that make `status` exit 1, as in MemoryCustodian 0.9.1;
    `ledger`: {"shards", "bytes", "mirror"} of the ledger tier (the mirror is generated, not a curated file)."""

    memory_dir: str
    protocol_version: str | None
    files: list[FileStatus]
    inbox_items: int
    archive_files: int
    missing_core: list[str]
    problems: list[str] = field(default_factory=list)
    ledger: dict[str, int | None] | None = None

    def to_dict(self) -> dict:
        return {"memory_dir": self.memory_dir, "protocol_version": self.protocol_version,
                "files": [x.to_dict() for x in self.files], "inbox_items": self.inbox_items,
                "archive_files": self.archive_files, "missing_core": self.missing_core, "problems": self.problems,
                "ledger": self.ledger}

    def text(self) -> str:
        out = [f"memory: {self.memory_dir} (protocol {self.protocol_version or 'unknown'})"]
        width = max([len(x.name) for x in self.files] + [4])
        out.append(f"{'file'.ljust(width)}  {'tokens':>6}  {'budget':>6}  {'entries':>7}")
        for x in self.files:
            budget = str(x.budget) if x.budget is not None else "-"
            flag = "  OVER BUDGET" if x.over_budget else ""
            out.append(f"{x.name.ljust(width)}  {x.tokens:>6}  {budget:>6}  {x.entries:>7}{flag}")
        out.append(f"inbox: {self.inbox_items} candidate{'s' if self.inbox_items != 1 else ''}"
                   f" · archive: {self.archive_files} file{'s' if self.archive_files != 1 else ''}")
        if self.ledger:
            mirror = f" · mirror {self.ledger['mirror']} (generated by `export`)" if self.ledger["mirror"] else ""
            out.append(f"ledger: {self.ledger['shards']} shard{'s' if self.ledger['shards'] != 1 else ''}, "
                       f"{self.ledger['bytes']} bytes{mirror} — `memory-custodian doctor` checks it")
        out.extend(f"problem: {p}" for p in self.problems)
        return "\n".join(out) + "\n"


@readable_errors
def status_memory(memory) -> StatusResult:
    """The folder's files against their budgets. `problems` are what make MemoryCustodian 0.9.1's
    `status` exit 1: a missing core file, a core file, `preferences.md` or `changelog.md` over its
    budget, the template brief, a decision over 120 tokens, a protocol newer than 0.5 or unreadable
    (an older one only wants `migrate`), and a manifest that does not parse."""
    memory_dir = memory.memory_dir_str
    rel = _shown(memory, memory_dir)
    _require_folder(memory_dir)
    problems: list[str] = []
    manifest: Manifest | None = None
    version: str | None = None
    manifest_path = os.path.join(memory_dir, "manifest.md")
    if fsutil.is_file(manifest_path):
        try:
            manifest = parse_manifest(read_utf8(manifest_path), manifest_path)
        except CustodianError as exc:
            problems.append(f"manifest.md{f':{exc.line}' if exc.line else ''}: {exc.message}")
        else:
            version = manifest.metadata.get("protocol_version")
            problems.extend(_protocol_problems(version))
    files, inbox_items, archive = _file_statuses(memory_dir, manifest, problems)
    missing = [n for n in CORE_FILES if not fsutil.is_file(os.path.join(memory_dir, n))]
    problems.extend(f"{name}: {CORE_MISSING}" for name in missing)
    return StatusResult(rel, version, files, inbox_items, archive, missing, problems,
                        _ledger_status(memory, memory_dir))


# the files whose budget 0.9.1's `status` holds them to (rules, profiles and areas only `check` does)
_STATUS_BUDGETED = (*CORE_FILES, "preferences.md", "changelog.md")


def _file_statuses(memory_dir, manifest: Manifest | None, problems: list[str]) -> tuple[list, int, int]:
    """(a FileStatus a file, inbox candidates, archive files); budget and entry problems go to `problems`."""
    files = []
    archive = inbox_items = 0
    for name in _memory_files(memory_dir):
        if name.startswith("archive/"):
            archive += name != "archive/README.md"
            continue
        if name.endswith("README.md") or name == "MEMORY.md":
            continue  # the mirror is the ledger's, generated: it is reported with the ledger
        text = read_utf8(os.path.join(memory_dir, name))
        document = split_units(text.strip())
        tokens = estimate_tokens(text.strip())
        budget = budget_for(name, manifest)
        entries = len(document.units) if document.mode in ("section", "bullet") and name != "manifest.md" else 0
        over = budget is not None and tokens > budget
        if name == "brief.md" and brief_is_template(text):
            problems.append(f"{name}: {UNCURATED_BRIEF}")
        elif over and name in _STATUS_BUDGETED:
            problems.append(f"{name}: {tokens} tokens, over its {budget}-token budget — {compact_advice(name)}")
        if name == "decisions.md":
            problems.extend(f"{name}:{line}: {long_decision_message(heading, tokens)}"
                            for heading, line, tokens in long_decisions(text))
        if name == "inbox.md":
            inbox_items = len(split_items(text)[1])  # `*` and `+` items too, as 0.9.1 counts them
        files.append(FileStatus(name, tokens, budget, entries, document.mode, over))
    return files, inbox_items, archive


def _protocol_problems(version: str | None) -> list[str]:
    """A protocol newer than this build reads, or not a version at all: 0.9.1's `status` exits 1 on both."""
    if version is None:
        return []
    parts = version.strip().split(".")
    if not all(part.isdigit() for part in parts):
        return [f"manifest.md: protocol_version {version!r} is not a version number — set it to "
                f"{SUPPORTED_PROTOCOLS[-1]}"]
    newest = tuple(int(part) for part in SUPPORTED_PROTOCOLS[-1].split("."))
    ours = tuple(int(part) for part in parts)
    width = max(len(ours), len(newest))
    if ours + (0,) * (width - len(ours)) > newest + (0,) * (width - len(newest)):
        return [f"manifest.md: protocol_version {version} is newer than this build reads ({SUPPORTED_PROTOCOLS[-1]}) "
                "— update memory-custodian"]
    return []


def _ledger_status(memory, memory_dir) -> dict | None:
    folder = os.path.join(memory_dir, "ledger")
    if not os.path.isdir(folder):
        return None
    shards = [e for e in os.scandir(folder) if e.name.endswith(".jsonl") and not e.name.startswith(".")]
    mirror = os.path.join(memory_dir, "MEMORY.md")
    return {"shards": len(shards), "bytes": sum(e.stat().st_size for e in shards),
            "mirror": _shown(memory, mirror) if os.path.isfile(mirror) else None}
