"""`init`: create the protocol 0.5 files, the private `.cache/`, and the git merge rules for the memory folder.

It never overwrites: every existing file is left alone and reported as kept. Everything is
checked before the first write, so a refusal leaves the disk as it was.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone

from ...base.errors import CustodianError, InvalidInput
from ...base.fsutil import atomic_write, cache_dir, disk_error, project_lock, stopped_part_way
from ...base.records import Record, field
from ..manifest import index_edit, migrate
from ..parse.files import curated_files
from . import journal, templates
from .plans import Reader

TYPE_CHECKING = False  # not `typing`'s: importing it costs every fresh process
if TYPE_CHECKING:
    from typing import Any


class InitResult(Record):
    """What `init` did; paths are relative to the project root. `gitattributes` is created, updated
    or unchanged; `agents` is what the agent installer reported, when `init` was asked for it."""

    memory_dir: str
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    gitattributes: str = "unchanged"
    agents: dict[str, Any] | None = None
    repaired: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    overwrites: list[str] = field(default_factory=list)
    applied: bool = True
    merge_drivers: str | None = None

    def to_dict(self) -> dict:
        agents = self.agents
        if agents is not None and hasattr(agents, "to_dict"):
            agents = agents.to_dict()
        return {"memory_dir": self.memory_dir, "created": self.created, "kept": self.kept,
                "gitattributes": self.gitattributes, "agents": agents, "repaired": self.repaired,
                "replaced": self.replaced, "overwrites": self.overwrites, "applied": self.applied,
                "merge_drivers": self.merge_drivers}


def memory_rel(memory) -> str:
    """The memory folder, relative to the project root."""
    return os.path.relpath(memory.memory_dir_str, memory.root_str)


CURATED_DRIVER, MIRROR_DRIVER = "memory-custodian-curated", "memory-custodian-mirror"
LEDGER_DRIVER = "memory-custodian-ledger"


def gitattributes_lines(memory_rel: str) -> list[str]:
    """The memory folder's merge rules, in the order that lets the later ones win: ledger shards line by
    line (both sides' new events, a forget on either side applied), curated files entry by entry, the
    export mirror rendered again, the forgotten fingerprints by git's union (`setup.merge_drivers`)."""
    return [f"{memory_rel}/ledger/*.jsonl merge={LEDGER_DRIVER}", f"{memory_rel}/**/*.md merge={CURATED_DRIVER}",
            f"{memory_rel}/MEMORY.md merge={MIRROR_DRIVER}", f"{memory_rel}/forgotten.txt merge=union"]


def _older_rules(memory_rel: str) -> set[str]:
    """Lines an older init wrote that this one replaces (the ledger was merged by git's union)."""
    return {f"{memory_rel}/ledger/*.jsonl merge=union"}


def _merged_gitattributes(existing: str | None, memory_rel: str) -> str | None:
    """The new .gitattributes text, or None if every pattern already has a rule (ours or the project's)."""
    newline = "\r\n" if existing and "\r\n" in existing else "\n"  # keep the file's own line endings
    older = _older_rules(memory_rel)
    kept_lines = (existing or "").splitlines(keepends=True)
    replaced = [line for line in kept_lines if line.strip() in older]
    if replaced:
        kept_lines = [line for line in kept_lines if line.strip() not in older]
        existing = "".join(kept_lines)
    taken = {line.split()[0] for line in (existing or "").splitlines() if line.split()}
    lines = [line for line in gitattributes_lines(memory_rel) if line.split()[0] not in taken]
    if not lines:
        return None  # the project already decided how these merge (maybe with its own driver)
    if existing is None:
        return "\n".join(lines) + "\n"
    sep = "" if not existing or existing.endswith("\n") else newline
    return existing + sep + newline.join(lines) + newline


def _read_exact(path: str) -> str:
    """The file's text exactly (no newline normalisation), so merging leaves other lines byte-identical."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInput("not valid UTF-8; re-save it as UTF-8 and run init again", path=path, line=line) from exc


def init_memory(memory, *, extended: bool = False, repair: bool = False, replace_existing: bool = False,
                apply: bool = False) -> InitResult:
    """The curated part of `init`: the memory folder's files, `.cache/` and the ledger's merge rule.

    `repair` also adds what an existing manifest lacks (what `migrate` adds; an invalid or newer
    protocol is refused before anything is written). `replace_existing` previews overwriting every
    existing file with its template and, with `apply`, writes it — MemoryCustodian 0.9.1's options."""
    if repair and replace_existing:
        raise InvalidInput("{field:repair} and {field:replace_existing} cannot be used together", field="repair")
    if apply and not replace_existing:
        raise InvalidInput("{field} is only used with {field:replace_existing}", field="apply")
    root = memory.root_str
    memory_dir = memory.memory_dir_str
    rel = memory_rel(memory)
    result = InitResult(rel)
    if not os.path.isdir(root):
        raise InvalidInput(f"project root {root} is not a folder")
    if os.path.exists(memory_dir) and not os.path.isdir(memory_dir):
        raise InvalidInput("exists and is not a folder; move it away or choose another {field}", path=memory_dir,
                           field="memory_dir")
    names = list(templates.CORE_FILES) + (list(templates.EXTENDED_FILES) if extended else [])
    for name in names:
        target = os.path.join(memory_dir, name)
        if os.path.exists(target) and not os.path.isfile(target):
            raise InvalidInput("exists and is not a file; move it away and run init again", path=target)
    gitattributes = os.path.join(root, ".gitattributes")
    if os.path.exists(gitattributes) and not os.path.isfile(gitattributes):
        raise InvalidInput("exists and is not a file", path=gitattributes)
    existing_attrs = _read_exact(gitattributes) if os.path.exists(gitattributes) else None
    today = datetime.now(timezone.utc).date().isoformat()
    if replace_existing:
        replace_plan = _replacement(memory_dir, names, today, rel, result)
        if not apply:
            result.applied = False
            return result  # a preview: nothing written, not even `.cache/`
    repaired = _repaired_manifest(memory_dir) if repair else None

    try:
        os.makedirs(memory_dir, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"cannot create the memory folder ({exc.strerror})", path=memory_dir) from exc
    cache_existed = os.path.isdir(os.path.join(memory_dir, ".cache"))
    cache_dir(memory_dir)
    if not cache_existed:
        result.created.append(f"{rel}/.cache/")
    with project_lock(memory_dir):
        try:
            _write_all(memory_dir, rel, result, names, today, replace_plan if replace_existing else None, repaired,
                       extended)
            merged = _merged_gitattributes(existing_attrs, rel)
            if merged is not None:
                atomic_write(gitattributes, merged)
                result.gitattributes = "created" if existing_attrs is None else "updated"
        except CustodianError as exc:
            done = [p for p in result.created + result.repaired if not p.endswith("/.cache/")]
            if not done:
                raise
            raise stopped_part_way(exc, f"{', '.join(done)} {'was' if len(done) == 1 else 'were'} written",
                                   "the other files are not", "run {verb:init} again: it keeps what exists and "
                                   "writes the rest") from exc.__cause__
    return result


def _write_all(memory_dir: str, rel: str, result: InitResult, names: list[str], today: str, replace_plan,
               repaired: str | None, extended: bool) -> None:
    """The memory folder's files, each as it is written noted in `result` (so a failure can say which)."""
    if replace_plan is not None:
        journal.apply_changes(memory_dir, replace_plan, "init --replace-existing")
    if repaired is not None:
        atomic_write(os.path.join(memory_dir, "manifest.md"), repaired)
        result.repaired.append(f"{rel}/manifest.md")
    for name in names:
        target = os.path.join(memory_dir, name)
        if os.path.exists(target):
            result.kept.append(f"{rel}/{name}")
            continue
        atomic_write(target, templates.render(name, date=today, memory_dir=rel))
        result.created.append(f"{rel}/{name}")
    if extended:
        areas = os.path.join(memory_dir, "areas")
        if not os.path.exists(areas):
            try:
                os.mkdir(areas)
            except OSError as exc:
                raise disk_error(areas, exc) from exc
            result.created.append(f"{rel}/areas/")


def _repaired_manifest(memory_dir: str) -> str | None:
    """The manifest with what migrate would add (its metadata, routes, index); None if it needs nothing."""
    if not os.path.isfile(os.path.join(memory_dir, "manifest.md")):
        return None
    plan = migrate.build_plan(memory_dir)  # an invalid or newer protocol raises here, before any write
    change = next((c for c in plan.effective if c.path == "manifest.md"), None)
    return None if change is None else change.new


def _replacement(memory_dir: str, names: list[str], today: str, rel: str, result: InitResult) -> list:
    """The changes that put init's template over every existing file that is not a template already;
    fills `replaced` and `overwrites`."""
    reader = Reader(memory_dir)
    changes = []
    for name in names:
        current = reader.read(name)
        if current is None:
            continue
        rendered = templates.render(name, date=today, memory_dir=rel)
        if name == "manifest.md":  # modules that exist stay reachable
            for module in curated_files(memory_dir, include_archive=False):
                if module.split("/", 1)[0] in ("rules", "profiles", "areas") and not module.endswith("README.md"):
                    rendered = index_edit.index_entry(rendered, module)
        if current == rendered or templates.is_091_template(name, current):
            continue  # already a template (ours, or MemoryCustodian 0.9.1's): as 0.9.1, nothing to replace
        changes.append(reader.change(name, rendered))
        result.replaced.append(f"{rel}/{name}")
        if not _looks_generated(name, current, today, rel):
            result.overwrites.append(f"{rel}/{name}")
    return changes


def _looks_generated(name: str, text: str, today: str, rel: str) -> bool:
    """Whether `text` is still a template (any day's), so replacing it loses nothing a person wrote."""
    rendered = templates.render(name, date=today, memory_dir=rel)
    dated = re.sub(r"\d{4}-\d{2}-\d{2}", "DATE", text.strip())
    return dated == re.sub(r"\d{4}-\d{2}-\d{2}", "DATE", rendered.strip())
