"""`init --agent HOST|all` and `--remove`: wire the memory into each host, as its module declares.

Everything we add is findable again: text snippets sit between our markers, JSON entries carry a `… memory- custodian
hook` command (`launcher.is_our_command`), the TOML block sits between marker comments. The commands name no
installation (`launcher.portable_argv`): the same bytes on every machine, each clone finding its own through the
per-clone setting this writes to `.git/config`. A command an older version wrote with an absolute path is replaced. So
a second run (on any machine) changes nothing and `--remove` takes out exactly what we added. The file as it was
before our first install is kept in `.cache/agents-originals.json`, and when removing leaves the rest of it as it was,
those exact bytes come back (formatting, key order, trailing newline and all). Which files a host gets, and of what
kind, is the host module's `files` (see `hosts.adapter.Host`).
"""

from __future__ import annotations

import json
import os

from ..base.errors import InvalidInput
from ..base.fsutil import atomic_write, cache_dir, project_lock, read_utf8
from ..base.launcher import (
    Launcher,
    current_launcher,
    is_our_command,
    not_installed_text,
    portable_argv,
    portable_command,
)
from ..base.project import DEFAULT_MEMORY_DIR
from ..setup.installation import outside_git_warning, write_setting
from . import hosts, managed_block
from .file_form import Form, read_raw

SERVER_NAME = "memory-custodian"

MD_BEGIN = "<!-- memory-custodian:begin (managed by `memory-custodian init --agent`; --remove takes it out) -->"
MD_END = "<!-- memory-custodian:end -->"
TOML_BEGIN = "# >>> memory-custodian (managed by `memory-custodian init --agent`; --remove takes it out) >>>"
TOML_END = "# <<< memory-custodian <<<"

ORIGINALS = "agents-originals.json"

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


def _rel_memory_dir(memory) -> str:
    return os.path.relpath(os.path.realpath(memory.memory_dir_str), os.path.realpath(memory.root_str))


def _dir_args(memory) -> list[str]:
    if memory is None:  # the default folder
        return []
    rel = _rel_memory_dir(memory)
    return [] if rel == DEFAULT_MEMORY_DIR else ["--memory-dir", rel]


def hook_command(memory, host: str, event: str, shell: str = "sh") -> str:
    """The committed hook command: no machine's path; where no installation is found, the agent is told so
    at session start (the host's own JSON shape) and every other event answers as an empty hook does.
    `shell` "cmd" gives the same command quoted for cmd.exe (`Host.windows_command_key`)."""
    spec = hosts.load(host)
    told = spec.render_output(event, not_installed_text(host)) if spec.events.get(event) == "start" else ""
    answer = (told or spec.empty_output) + ("\n" if told or spec.empty_output else "")
    return portable_command(["hook", "--host", host, *_dir_args(memory), event], answer, shell=shell)


def server_entry(memory, host: str) -> dict:
    """The committed MCP server entry: `git` and the same lookup; with none installed, one line on stderr."""
    argv = portable_argv(["mcp", *_dir_args(memory)], not_installed_text(host) + "\n", to_stderr=True)
    return {"args": argv[1:], "command": argv[0]}


def snippet(memory, host: str) -> str:
    body = _SNIPPET.format(mem=_rel_memory_dir(memory), first=hosts.load(host).entry_advice)
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
    if before.endswith("\n\n") and (not after or after.startswith("\n")):
        before = before[:-1]  # the blank line we put before the block
    return before + after


# ---- JSON entries ----------------------------------------------------------------------------

def _load_json(path: str, text: str | None) -> dict:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not valid JSON ({exc.msg} at line {exc.lineno}); fix it, then rerun "
                           "`memory-custodian init --agent`", path=path) from exc
    if not isinstance(data, dict):
        raise InvalidInput("expected a JSON object at the top level", path=path)
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
    return isinstance(entry, dict) and is_our_command(str(entry.get("command", "")))


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
    spec = hosts.load(host)
    for event in spec.events:
        matcher = spec.matcher(event)
        entry = {"command": hook_command(memory, host, event), "type": "command"}
        if spec.windows_command_key:
            entry[spec.windows_command_key] = hook_command(memory, host, event, shell="cmd")
        group: dict = {"hooks": [entry]}
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


def _add_server(data: dict, memory, host: str) -> dict:
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise InvalidInput('"mcpServers" is not a JSON object; fix it by hand, then rerun')
    servers = dict(servers or {})
    servers[SERVER_NAME] = server_entry(memory, host)
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

def _toml_block(memory, host: str) -> str:
    entry = server_entry(memory, host)
    args = ", ".join(json.dumps(a) for a in entry["args"])
    return (f"{TOML_BEGIN}\n[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(entry['command'])}\n"
            f"args = [{args}]\n{TOML_END}\n")


def _user_defines_server(text: str) -> bool:
    outside = _without_block(text, TOML_BEGIN, TOML_END)
    return any(line.strip().replace(" ", "") in (f"[mcp_servers.{SERVER_NAME}]", f'[mcp_servers."{SERVER_NAME}"]')
               for line in outside.splitlines())


# ---- planning ------------------------------------------------------------------------------------

RESTORE = object()  # _plan_file's answer when the file's pre-install bytes should come back


def _without_ours(current: str | None, begin: str, end: str, original: str | None, has_original: bool):
    """A text file's plan on removal: our block taken out (RESTORE when that is the original)."""
    if current is None:
        return None
    new = _without_block(current, begin, end)
    if has_original and (original or "").rstrip() == new.rstrip():
        return RESTORE
    return new if new.strip() else None


def _plan_file(memory, rel: str, kind: str, host: str, remove: bool, current: str | None,
               original: str | None, has_original: bool, force: bool = False):
    """The new text of one file (None: the file should not exist; RESTORE: its original bytes)."""
    path = os.path.join(memory.root_str, rel)
    if kind == "md" and current is not None:
        old_block = managed_block.find(current, rel, MD_BEGIN)  # MemoryCustodian 0.9's own block
        if old_block is not None:
            if remove:
                current = managed_block.remove(current, old_block)
                if MD_BEGIN not in current:
                    return current if current.strip() else None
                return _without_ours(current, MD_BEGIN, MD_END, original, has_original)
            return managed_block.replace(current, old_block, snippet(memory, host)) if force else current
    if remove and not _contains_ours(path, kind, current):
        return current
    if kind == "md":
        if remove:
            return _without_ours(current, MD_BEGIN, MD_END, original, has_original)
        return _with_block(current, snippet(memory, host), MD_BEGIN, MD_END)
    if kind == "toml":
        if remove:
            return _without_ours(current, TOML_BEGIN, TOML_END, original, has_original)
        if current is not None and _user_defines_server(current):
            return current
        return _with_block(current, _toml_block(memory, host), TOML_BEGIN, TOML_END)
    # JSON: "hooks", "server" or "hooks+server"
    data = _load_json(path, current)
    stripped = _strip_kind(data, kind)
    if remove:
        if current is None:
            return None
        if has_original and _prune(_load_json(path, original)) == _prune(stripped):
            return RESTORE
        if not stripped and not has_original:
            return None
        return _dump_json(stripped, current)
    new = data
    if "hooks" in kind:
        new = _add_hooks(new, memory, host)
    if "server" in kind:
        new = _add_server(new, memory, host)
    if new == data:  # our entries are there already: keys re-added in another order are no change
        return current
    return _dump_json(new, current)


def _contains_ours(path: str, kind: str, current: str | None) -> bool:
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


def _load_originals(store_path: str) -> dict:
    """The pre-install bytes we kept. A cache: unreadable, removal still takes out only ours, minus exact formatting."""
    if not os.path.isfile(store_path):
        return {}
    try:
        data = json.loads(read_utf8(store_path))
    except (ValueError, InvalidInput):
        return {}
    return data if isinstance(data, dict) else {}


def _confined(root: str, rel: str) -> str:
    """`root/rel`, refusing when it or a folder on the way is a symlink.

    A cloned repository can ship `CLAUDE.md -> ~/.ssh/config` or `.claude -> ~/.claude`: reading
    through the link would copy an outside file into the repo, writing through it would change
    files outside the project (the user's global agent settings). We never follow such links,
    not even ones that point inside the project: atomic writes would silently replace the link.
    """
    path = root
    parts = rel.split("/")
    for i, part in enumerate(parts):
        path = os.path.join(path, part)
        if os.path.islink(path):
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            what = "file" if i == len(parts) - 1 else "folder"
            raise InvalidInput(f"is a symlink (to {target}); `init --agent` does not write through links — "
                               f"replace it with a real {what}, then rerun", path=path)
    return path


def wanted_hosts(agents) -> list[str]:
    """The host names `agents` asks for ("all" is every host), each once, in order."""
    names: list[str] = []
    for agent in agents or ():
        value = str(agent).strip().casefold()
        if value == "all":
            names.extend(hosts.HOSTS)
        elif value in hosts.HOSTS:
            names.append(value)
        else:
            raise InvalidInput(f"unknown agent {agent!r}; use one of: {', '.join(hosts.HOSTS)}, all")
    return list(dict.fromkeys(names))


def install_agents(memory, agents: list[str], remove: bool = False, launcher: Launcher | None = None,
                   force: bool = False) -> InstallReport:
    """Write (or with `remove`, take out) the entry snippet, hooks and MCP server for each host.

    Returns {"action", "agents", "created", "changed", "unchanged", "removed": [paths], "command",
    "command_kind", "setting", "warnings"}. The files name no installation (`launcher.portable_argv`): this
    clone's, `launcher` (default: the running one), goes to its per-clone setting (`setting`: set, unchanged
    or why not), so two machines with different install paths write the same bytes.
    Nothing is written unless every file involved could be read and planned.
    """
    launcher = launcher or current_launcher()
    wanted = wanted_hosts(agents)
    if not wanted:
        raise InvalidInput(f"no agent given; use one of: {', '.join(hosts.HOSTS)}, all")
    root = memory.root_str
    with project_lock(memory.memory_dir_str):
        store_path = os.path.join(cache_dir(memory.memory_dir_str), ORIGINALS)
        originals = _load_originals(store_path)
        plans = [_plan(memory, host, rel, kind, remove, originals, force)
                 for host in wanted for rel, kind in hosts.load(host).files]
        created, changed, unchanged, removed = [], [], [], []
        for rel, current, new in plans:
            path = os.path.join(root, rel)
            if new == current:
                unchanged.append(rel)
            elif current is None:
                atomic_write(path, new)
                created.append(rel)
            elif new is None:
                os.unlink(path)
                removed.append(rel)
                parent = os.path.dirname(path)
                if parent != root and os.path.isdir(parent) and not os.listdir(parent):
                    os.rmdir(parent)
            else:
                atomic_write(path, new)
                changed.append(rel)
        if remove:
            for rel, _, _ in plans:
                originals.pop(rel, None)
        if originals:
            atomic_write(store_path, json.dumps(originals, sort_keys=True, ensure_ascii=False, indent=1) + "\n")
        elif os.path.exists(store_path):
            os.unlink(store_path)
    warnings = []
    setting = None
    if not remove:
        setting = write_setting(root, launcher)
        if setting == "not a git repository":
            warnings.extend(outside_git_warning(root, launcher))
    if not remove and launcher.temporary():
        warnings.append(f"this clone's installation is {launcher.command([])}, which looks temporary: once it is gone "
                        "the hooks find nothing — install memory-custodian for good (`pipx install` or `uv tool "
                        "install`), then rerun `memory-custodian init --agent`")
    report = InstallReport(action="remove" if remove else "install", agents=wanted, created=sorted(created),
                           changed=sorted(changed), removed=sorted(removed), unchanged=sorted(unchanged),
                           command=None if remove else launcher.command([]),
                           command_kind=None if remove else launcher.kind, setting=setting, warnings=warnings)
    report.update(managed_block.kept_report(plans, remove))
    return report


def _plan(memory, host: str, rel: str, kind: str, remove: bool, originals: dict, force: bool = False):
    """(rel, the file's text now, its text after) for one file; keeps its pre-install text in `originals`."""
    path = _confined(memory.root_str, rel)
    current = read_raw(path) if os.path.isfile(path) else None
    form = Form.of(current)
    has_original, original = rel in originals, originals.get(rel)
    planned = _plan_file(memory, rel, kind, host, remove, form.text, Form.of(original).text, has_original, force)
    new = original if planned is RESTORE else form.encode(planned)
    if not remove and not has_original and new != current and not _contains_ours(path, kind, form.text):
        originals[rel] = current  # the file as it was before we first touched it
    return rel, current, new


class InstallReport(dict):
    """The install/remove report: a plain dict, as `init --format json` prints it."""

    def to_dict(self) -> dict:
        return dict(self)
