"""`init`: create the protocol 0.5 files, the private `.cache/`, and the git merge rule for the ledger.

It never overwrites: every existing file is left alone and reported as kept. Everything is
checked before the first write, so a refusal leaves the disk as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InvalidInput
from . import templates

AGENTS = ("claude", "codex", "gemini")
EXTENDED_DIRS = ("rules", "profiles", "archive")


@dataclass
class InitResult:
    memory_dir: str  # relative to the project root
    created: list[str] = field(default_factory=list)  # relative to the project root
    kept: list[str] = field(default_factory=list)
    gitattributes: str = "unchanged"  # created | updated | unchanged
    agents: object = None  # whatever the agent installer reports

    def to_dict(self) -> dict:
        agents = self.agents
        if agents is not None and hasattr(agents, "to_dict"):
            agents = agents.to_dict()
        return {"memory_dir": self.memory_dir, "created": self.created, "kept": self.kept,
                "gitattributes": self.gitattributes, "agents": agents}


def gitattributes_line(memory_rel: str) -> str:
    return f"{memory_rel}/ledger/*.jsonl merge=union"


def _merged_gitattributes(existing: str | None, memory_rel: str) -> str | None:
    """The new .gitattributes text, or None if the ledger pattern already has a rule (ours or the project's)."""
    line = gitattributes_line(memory_rel)
    pattern = line.split()[0]
    if existing is None:
        return line + "\n"
    for current in existing.splitlines():
        parts = current.split()
        if parts and parts[0] == pattern:
            return None  # the project already decided how these merge (maybe its own driver)
    newline = "\r\n" if "\r\n" in existing else "\n"  # keep the file's own line endings
    sep = "" if not existing or existing.endswith("\n") else newline
    return existing + sep + line + newline


def _read_exact(path: Path) -> str:
    """The file's text exactly (no newline normalisation), so merging leaves other lines byte-identical."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInput("not valid UTF-8; re-save it as UTF-8 and run init again", path=str(path), line=line) from exc


def expand_agents(agents) -> list[str]:
    names: list[str] = []
    for agent in agents or ():
        value = str(agent).strip().casefold()
        if value == "all":
            names.extend(AGENTS)
        elif value in AGENTS:
            names.append(value)
        else:
            raise InvalidInput(f"unknown agent {agent!r}; use one of: {', '.join(AGENTS)}, all")
    return list(dict.fromkeys(names))


def init_memory(memory, *, extended: bool = False, agents=(), remove: bool = False) -> InitResult:
    from datetime import datetime, timezone

    from ..fsutil import atomic_write, ensure_cache_dir, project_lock

    root: Path = memory.root
    memory_dir: Path = memory.memory_dir
    memory_rel = memory_dir.relative_to(root).as_posix()
    agent_names = expand_agents(agents)
    if remove and not agent_names:
        agent_names = list(AGENTS)
    installer = None
    if agent_names:
        try:
            from ..agents.install import install_agents as installer
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("memory_custodian"):
                raise InvalidInput("agent install not available in this build") from exc
            raise
    result = InitResult(memory_rel)
    if remove:
        result.agents = installer(memory, agent_names, remove=True)
        return result

    if not root.is_dir():
        raise InvalidInput(f"project root {root} is not a folder")
    if memory_dir.exists() and not memory_dir.is_dir():
        raise InvalidInput("exists and is not a folder; move it away or choose another --memory-dir", path=str(memory_dir))
    names = list(templates.CORE_FILES) + (list(templates.EXTENDED_FILES) if extended else [])
    for name in names:
        target = memory_dir / name
        if target.exists() and not target.is_file():
            raise InvalidInput("exists and is not a file; move it away and run init again", path=str(target))
    gitattributes = root / ".gitattributes"
    if gitattributes.exists() and not gitattributes.is_file():
        raise InvalidInput("exists and is not a file", path=str(gitattributes))
    existing_attrs = _read_exact(gitattributes) if gitattributes.exists() else None
    today = datetime.now(timezone.utc).date().isoformat()

    try:
        memory_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"cannot create the memory folder ({exc.strerror})", path=str(memory_dir)) from exc
    cache_existed = (memory_dir / ".cache").is_dir()
    ensure_cache_dir(memory_dir)
    if not cache_existed:
        result.created.append(f"{memory_rel}/.cache/")
    with project_lock(memory_dir):
        for name in names:
            target = memory_dir / name
            rel = f"{memory_rel}/{name}"
            if target.exists():
                result.kept.append(rel)
                continue
            atomic_write(target, templates.render(name, date=today, memory_dir=memory_rel))
            result.created.append(rel)
        if extended:
            areas = memory_dir / "areas"
            if not areas.exists():
                areas.mkdir()
                result.created.append(f"{memory_rel}/areas/")
        merged = _merged_gitattributes(existing_attrs, memory_rel)
        if merged is not None:
            atomic_write(gitattributes, merged)
            result.gitattributes = "created" if existing_attrs is None else "updated"
    if installer is not None:
        result.agents = installer(memory, agent_names, remove=False)
    return result
