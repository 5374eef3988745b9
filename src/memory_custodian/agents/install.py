"""`init --agent claude|codex|gemini|all` and `--remove`: wire the memory into each host.

Everything we add is findable again: text snippets sit between our markers, JSON entries carry
a command starting with `memory-custodian `, the TOML block sits between marker comments. So a
second run changes nothing and `--remove` takes out exactly what we added. The file as it was
before our first install is kept in `.cache/agents/`, and when removing leaves the rest of it
as it was, those exact bytes come back (formatting, key order, trailing newline and all).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..errors import InvalidInput
from ..fsutil import atomic_write, ensure_cache_dir, project_lock, read_utf8
from ..project import DEFAULT_MEMORY_DIR

AGENTS = ("claude", "codex", "gemini")
SERVER_NAME = "memory-custodian"
COMMAND_PREFIX = "memory-custodian "

MD_BEGIN = "<!-- memory-custodian:begin (managed by `memory-custodian init --agent`; --remove takes it out) -->"
MD_END = "<!-- memory-custodian:end -->"
TOML_BEGIN = "# >>> memory-custodian (managed by `memory-custodian init --agent`; --remove takes it out) >>>"
TOML_END = "# <<< memory-custodian <<<"

ORIGINALS = "agents-originals.json"

# (event, matcher or None) per host, in the order they are written
HOOK_EVENTS = {
    "claude": [("SessionStart", None), ("UserPromptSubmit", None),
               ("PreToolUse", "Edit|Write|MultiEdit|Read|NotebookEdit"), ("PreCompact", None)],
    "codex": [("SessionStart", None), ("UserPromptSubmit", None),
              ("PreToolUse", "Bash|shell|apply_patch"), ("PreCompact", None)],
    "gemini": [("SessionStart", None), ("BeforeAgent", None),
               ("AfterTool", "read_file|write_file|replace|read_many_files"), ("PreCompress", None)],
}

ENTRY_FILES = {"claude": "CLAUDE.md", "codex": "AGENTS.md", "gemini": "GEMINI.md"}

_SNIPPET = """## Project memory (memory-custodian)

This project keeps its memory in the repository: curated rules in `{mem}/*.md`, notes in the
append-only ledger `{mem}/ledger/`. Both reach you as quoted data framed by who recorded it.

{first}
- Look things up: `memory_recall` / `memory_expand` (MCP), or `memory-custodian recall QUERY`
  and `memory-custodian expand ID`.
- Record what the next session must know with `memory_remember` (kinds: gotcha, finding, task,
  decision, directive), or `memory-custodian remember --actor agent TEXT`. When the user said it,
  quote them verbatim (`quote`). Correct notes with `memory_supersede`, `memory_flag_stale`,
  `memory_revoke`; propose a curated rule with `memory_propose` (it lands in `{mem}/inbox.md`).
- Never edit `{mem}/ledger/*.jsonl` or `{mem}/.cache/` by hand.
"""

_FIRST = {
    "claude": ("- Hooks inject the context pack at session start, matching notes on each prompt and "
               "gotchas for the files\n  you touch. If you see no memory context, run "
               "`memory-custodian read --task implementation` first."),
    "codex": ("- Before any task, run `memory-custodian read --task implementation` (or `--task planning`) "
              "and follow\n  its directives; if hooks are enabled they inject the same pack "
              "at session start."),
    "gemini": ("- Hooks inject the context pack at session start, matching notes on each prompt and "
               "gotchas for the files\n  you read or write. If you see no memory context, run "
               "`memory-custodian read --task implementation` first."),
}


def _rel_memory_dir(memory) -> str:
    return Path(memory.memory_dir).resolve().relative_to(Path(memory.root).resolve()).as_posix()


def _dir_args(memory) -> list[str]:
    rel = _rel_memory_dir(memory)
    return [] if rel == DEFAULT_MEMORY_DIR else ["--memory-dir", rel]


def hook_command(memory, host: str, event: str) -> str:
    extra = " ".join(_dir_args(memory))
    return f"memory-custodian hook --host {host}{' ' + extra if extra else ''} {event}"


def server_entry(memory) -> dict:
    return {"args": ["mcp", *_dir_args(memory)], "command": "memory-custodian"}


def snippet(memory, host: str) -> str:
    body = _SNIPPET.format(mem=_rel_memory_dir(memory), first=_FIRST[host])
    return f"{MD_BEGIN}\n{body}{MD_END}\n"


# ---- text blocks between markers -----------------------------------------------------------

def _find_block(text: str, begin: str, end: str) -> tuple[int, int] | None:
    start = text.find(begin)
    if start < 0:
        return None
    stop = text.find(end, start)
    if stop < 0:
        raise InvalidInput(f"found the {begin.split(' ')[0]} marker but not its end marker; "
                           "restore the end marker or delete the block, then retry")
    stop += len(end)
    if text[stop:stop + 1] == "\n":
        stop += 1
    return start, stop


def _with_block(text: str | None, block: str, begin: str, end: str) -> str:
    text = text or ""
    found = _find_block(text, begin, end)
    if found:
        return text[:found[0]] + block + text[found[1]:]
    if not text:
        return block
    sep = "\n" if text.endswith("\n") else "\n\n"
    return text + sep + block


def _without_block(text: str, begin: str, end: str) -> str:
    found = _find_block(text, begin, end)
    if not found:
        return text
    before, after = text[:found[0]], text[found[1]:]
    if not after and before.endswith("\n\n"):
        before = before[:-1]  # the blank line we put before the block
    return before + after


# ---- JSON entries ----------------------------------------------------------------------------

def _load_json(path: Path, text: str | None) -> dict:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"not valid JSON ({exc.msg} at line {exc.lineno}); fix it, then rerun "
                           "`memory-custodian init --agent`", path=str(path)) from exc
    if not isinstance(data, dict):
        raise InvalidInput("expected a JSON object at the top level", path=str(path))
    return data


def _indent_of(text: str | None):
    if text:
        for line in text.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and len(stripped) < len(line):
                ws = line[: len(line) - len(stripped)]
                return "\t" if ws.startswith("\t") else len(ws)
    return 2


def _dump_json(data: dict, like: str | None) -> str:
    out = json.dumps(data, indent=_indent_of(like), ensure_ascii=False)
    return out + "\n" if (like is None or like.endswith("\n") or not like.strip()) else out


def _ours(entry) -> bool:
    return isinstance(entry, dict) and str(entry.get("command", "")).startswith(COMMAND_PREFIX)


def _strip_hooks(data: dict) -> dict:
    """`data` without our hook commands, dropping only the containers our removal emptied."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    new_hooks = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            new_hooks[event] = groups
            continue
        kept = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(inner, list) and any(_ours(h) for h in inner):
                rest = [h for h in inner if not _ours(h)]
                if rest:
                    kept.append({**group, "hooks": rest})
            else:
                kept.append(group)
        if kept or not groups:
            new_hooks[event] = kept
    out = dict(data)
    if new_hooks or not hooks:
        out["hooks"] = new_hooks
    else:
        del out["hooks"]
    return out


def _add_hooks(data: dict, memory, host: str) -> dict:
    data = _strip_hooks(data)
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InvalidInput('"hooks" is not a JSON object; fix it by hand, then rerun')
    hooks = dict(hooks or {})
    for event, matcher in HOOK_EVENTS[host]:
        group: dict = {"hooks": [{"command": hook_command(memory, host, event), "type": "command"}]}
        if matcher:
            group = {"hooks": group["hooks"], "matcher": matcher}
        existing = hooks.get(event, [])
        if not isinstance(existing, list):
            raise InvalidInput(f'"hooks.{event}" is not a list; fix it by hand, then rerun')
        hooks[event] = [*existing, group]
    return {**data, "hooks": hooks}


def _strip_server(data: dict) -> dict:
    servers = data.get("mcpServers")
    if not isinstance(servers, dict) or SERVER_NAME not in servers:
        return data
    rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
    out = dict(data)
    if rest:
        out["mcpServers"] = rest
    else:
        del out["mcpServers"]
    return out


def _add_server(data: dict, memory) -> dict:
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise InvalidInput('"mcpServers" is not a JSON object; fix it by hand, then rerun')
    servers = dict(servers or {})
    servers[SERVER_NAME] = server_entry(memory)
    return {**data, "mcpServers": servers}


def _prune(value):
    """For comparing what is left with the original: empty containers do not count."""
    if isinstance(value, dict):
        pruned = {k: _prune(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v not in ({}, [])}
    if isinstance(value, list):
        return [_prune(v) for v in value]
    return value


# ---- TOML block (Codex) ------------------------------------------------------------------------

def _toml_block(memory) -> str:
    entry = server_entry(memory)
    args = ", ".join(json.dumps(a) for a in entry["args"])
    return (f"{TOML_BEGIN}\n[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(entry['command'])}\n"
            f"args = [{args}]\n{TOML_END}\n")


def _user_defines_server(text: str) -> bool:
    outside = _without_block(text, TOML_BEGIN, TOML_END)
    return any(line.strip().replace(" ", "") in (f"[mcp_servers.{SERVER_NAME}]", f'[mcp_servers."{SERVER_NAME}"]')
               for line in outside.splitlines())


# ---- planning ------------------------------------------------------------------------------------

RESTORE = object()  # _plan_file's answer when the file's pre-install bytes should come back


class _Form:
    """A file's byte-level habits (a BOM, CRLF line ends), so our edits keep them."""

    def __init__(self, raw: str | None):
        self.bom = bool(raw) and raw.startswith("\ufeff")
        body = raw[1:] if self.bom else (raw or "")
        self.crlf = "\r\n" in body and "\n" not in body.replace("\r\n", "")
        self.text = None if raw is None else (body.replace("\r\n", "\n") if self.crlf else body)

    def encode(self, text: str | None) -> str | None:
        if text is None:
            return None
        return ("\ufeff" if self.bom else "") + (text.replace("\n", "\r\n") if self.crlf else text)


def _read_raw(path: Path) -> str | None:
    """A host file exactly as it is (no newline or BOM normalisation: we must give it back intact)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InvalidInput(f"cannot read ({exc.strerror})", path=str(path)) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"not valid UTF-8 (byte {exc.start}); re-save it as UTF-8, then rerun", path=str(path)) from exc


def _plan_file(memory, rel: str, kind: str, host: str, remove: bool, current: str | None,
               original: str | None, has_original: bool):
    """The new text of one file (None: the file should not exist; RESTORE: its original bytes)."""
    path = Path(memory.root) / rel
    if remove and not _contains_ours(path, kind, current):
        return current
    if kind == "md":
        if remove:
            if current is None:
                return None
            new = _without_block(current, MD_BEGIN, MD_END)
        else:
            return _with_block(current, snippet(memory, host), MD_BEGIN, MD_END)
        if has_original and (original or "").rstrip() == new.rstrip():
            return RESTORE
        return new if new.strip() else None
    if kind == "toml":
        if remove:
            if current is None:
                return None
            new = _without_block(current, TOML_BEGIN, TOML_END)
            if has_original and (original or "").rstrip() == new.rstrip():
                return RESTORE
            return new if new.strip() else None
        if current is not None and _user_defines_server(current):
            return current
        return _with_block(current, _toml_block(memory), TOML_BEGIN, TOML_END)
    # JSON: "hooks", "server" or "hooks+server"
    data = _load_json(path, current)
    stripped = _strip_kind(data, kind)
    if remove:
        if current is None:
            return None
        if has_original:
            if _prune(_load_json(path, original)) == _prune(stripped):
                return RESTORE
        if not stripped and not has_original:
            return None
        return _dump_json(stripped, current)
    new = data
    if "hooks" in kind:
        new = _add_hooks(new, memory, host)
    if "server" in kind:
        new = _add_server(new, memory)
    return _dump_json(new, current)


def _contains_ours(path: Path, kind: str, current: str | None) -> bool:
    if current is None:
        return False
    if kind == "md":
        return MD_BEGIN in current
    if kind == "toml":
        return TOML_BEGIN in current
    data = _load_json(path, current)
    return _strip_kind(data, kind) != data


def _strip_kind(data: dict, kind: str) -> dict:
    if "hooks" in kind:
        data = _strip_hooks(data)
    if "server" in kind:
        data = _strip_server(data)
    return data


def _files_for(host: str) -> list[tuple[str, str]]:
    if host == "claude":
        return [("CLAUDE.md", "md"), (".claude/settings.json", "hooks"), (".mcp.json", "server")]
    if host == "codex":
        return [("AGENTS.md", "md"), (".codex/hooks.json", "hooks"), (".codex/config.toml", "toml")]
    return [("GEMINI.md", "md"), (".gemini/settings.json", "hooks+server")]


def _load_originals(store_path: Path) -> dict:
    """The pre-install bytes we kept. A cache: if it is unreadable, removal still takes out only
    our entries, it just cannot promise the exact original formatting."""
    if not store_path.is_file():
        return {}
    try:
        data = json.loads(read_utf8(store_path))
    except (ValueError, InvalidInput):
        return {}
    return data if isinstance(data, dict) else {}


def _confined(root: Path, rel: str) -> Path:
    """`root / rel`, refusing when it or a folder on the way is a symlink.

    A cloned repository can ship `CLAUDE.md -> ~/.ssh/config` or `.claude -> ~/.claude`: reading
    through the link would copy an outside file into the repo, writing through it would change
    files outside the project (the user's global agent settings). We never follow such links,
    not even ones that point inside the project: atomic writes would silently replace the link.
    """
    path = root
    parts = rel.split("/")
    for i, part in enumerate(parts):
        path = path / part
        if path.is_symlink():
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            what = "file" if i == len(parts) - 1 else "folder"
            raise InvalidInput(f"is a symlink (to {target}); `init --agent` does not write through links — "
                               f"replace it with a real {what}, then rerun", path=str(path))
    return path


def install_agents(memory, agents: list[str], remove: bool = False) -> dict:
    """Write (or with `remove`, take out) the entry snippet, hooks and MCP server for each host.

    Returns {"action", "agents", "changed": [paths], "unchanged": [paths], "removed": [paths]}.
    Nothing is written unless every file involved could be read and planned.
    """
    wanted: list[str] = []
    for agent in agents:
        names = AGENTS if agent == "all" else (agent,)
        for name in names:
            if name not in AGENTS:
                raise InvalidInput(f"unknown agent {agent!r}; use claude, codex, gemini or all")
            if name not in wanted:
                wanted.append(name)
    if not wanted:
        raise InvalidInput("no agent given; use --agent claude|codex|gemini|all")
    root = Path(memory.root)
    with project_lock(memory.memory_dir):
        store_path = ensure_cache_dir(memory.memory_dir) / ORIGINALS
        originals = _load_originals(store_path)
        plans: list[tuple[str, str | None, str | None]] = []
        for host in wanted:
            for rel, kind in _files_for(host):
                path = _confined(root, rel)
                current = _read_raw(path) if path.is_file() else None
                form = _Form(current)
                has_original = rel in originals
                original = originals.get(rel)
                planned = _plan_file(memory, rel, kind, host, remove, form.text, _Form(original).text, has_original)
                new = original if planned is RESTORE else form.encode(planned)
                plans.append((rel, current, new))
                if not remove and not has_original and new != current and not _contains_ours(path, kind, form.text):
                    originals[rel] = current  # the file as it was before we first touched it
        changed, unchanged, removed = [], [], []
        for rel, current, new in plans:
            path = root / rel
            if new == current:
                unchanged.append(rel)
            elif new is None:
                path.unlink()
                removed.append(rel)
                parent = path.parent
                if parent != root and parent.is_dir() and not any(parent.iterdir()):
                    parent.rmdir()
            else:
                atomic_write(path, new)
                changed.append(rel)
        if remove:
            for rel, _, _ in plans:
                originals.pop(rel, None)
        if originals:
            atomic_write(store_path, json.dumps(originals, sort_keys=True, ensure_ascii=False, indent=1) + "\n")
        elif store_path.exists():
            store_path.unlink()
    return InstallReport(action="remove" if remove else "install", agents=wanted, changed=sorted(changed),
                         removed=sorted(removed), unchanged=sorted(unchanged))


HOST_HINTS = {
    "claude": "claude: approve the project MCP server when Claude Code asks (it reads .mcp.json)",
    "codex": ("codex: hooks need a recent Codex with hooks enabled ([features] hooks = true in "
              "~/.codex/config.toml on older versions); AGENTS.md tells the agent to run `read` otherwise"),
    "gemini": "gemini: hooks need a Gemini CLI with hooks support; see docs/hosts/gemini.md",
}


class InstallReport(dict):
    """The install/remove report: a plain dict (for JSON) that can also print itself."""

    def to_dict(self) -> dict:
        return dict(self)

    def lines(self) -> list[str]:
        verb = {"changed": "updated" if self["action"] == "install" else "cleaned",
                "removed": "removed", "unchanged": "unchanged"}
        out = [f"{verb[key]:9} {path}" for key in ("changed", "removed", "unchanged") for path in self[key]]
        if self["action"] == "install":
            out += [f"note: {HOST_HINTS[a]}" for a in self["agents"]]
        return out
