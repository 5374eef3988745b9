"""`memory-custodian hook EVENT`: push memory into an agent's context at the moments that matter.

Agents rarely ask for memory on their own, so the host's hooks bring it: the context pack at
session start, the top matching notes on each prompt, the gotchas of a file about to be touched.
A hook must never break the agent's session, and never fail silently: each part of what it sends
(the curated files, the directives, gotchas, recall lines, the session state) degrades on its own,
and whatever could not load is named in one line of the agent's context that points at
`memory-custodian doctor` (and on stderr); exit 0 always. It must be cheap: this module imports no
argument parser and no mcp; `memory-custodian hook` (in `cli/agents.py`) reads stdin and calls `run_hook`.
"""

from __future__ import annotations

import json
import os
import sys
import time

from ..base.errors import LIBRARY_TERMS, InvalidInput, Terms, short_line
from ..base.fence import DATA_NOTICE, fence
from ..base.limits import PROMPT_QUERY_CHARS
from ..base.project import DEFAULT_MEMORY_DIR, find_project_root
from ..base.textsafe import host_length
from ..memory import Memory
from ..session.sessions import SessionState, open_session, prune_sessions_now_and_then
from ..session.usage_log import iso_at
from . import hosts, writeback
from .hosts.adapter import START_MAX_CHARS  # the pack's default cap; each host declares its own


class HookTerms(Terms):
    """What a hook's context points to, for an agent that may have either door: the MCP tool where the
    server has one, then the command line in `cli` (the terms of the CLI running the hook)."""

    def __init__(self, cli: Terms | None = None):
        self.cli = cli or LIBRARY_TERMS

    def name(self, field: str) -> str:
        return self.cli.name(field)

    def with_value(self, field: str) -> str:
        return self.cli.with_value(field)

    def setting(self, field: str, value: str | None) -> str:
        return self.cli.setting(field, value)

    def verb(self, name: str) -> str:
        return self._both(name, self.cli.verb(name))

    def call(self, name: str, settings: list[tuple[str, str | None]]) -> str:
        return self._both(name, self.cli.call(name, settings))

    @staticmethod
    def _both(name: str, cli: str) -> str:
        from .recall_view import TOOL_VERBS

        return f"`{TOOL_VERBS[name]}` (MCP) or {cli}" if name in TOOL_VERBS else cli


TURN_BUDGET_TOKENS = 1_200  # shared by the prompt hook and the file hooks of one turn
PROMPT_LINES = 5
PROMPT_BLOCK_CHARS = 2_000  # room kept for the prompt's lines when the pack is re-sent with them
FILE_NOTES = 5
HIGH_TASKS = 5  # task checkpoints listed at session start, most recent first
FILE_SCAN = 50  # gotchas fetched per file hook, before dedup
DEFAULT_TASK = "implementation"
EXPAND_POINTER = "full text: `memory_expand` or `memory-custodian expand ID`."
RECALL_POINTER = f"More memory: `memory_recall` (MCP) or `memory-custodian recall QUERY`; {EXPAND_POINTER}"

# Agents rarely write notes unprompted: the pack ends by saying how.
REMEMBER_POINTER = ("Record what the next session must know (a trap tied to files, a finding, a task checkpoint): "
                    "`memory_remember` (MCP) or `memory-custodian remember --actor agent TEXT`.")


def run_hook(host: str, event: str, raw: str, *, project_root=None, memory_dir=None, task=None,
             now: float | None = None, terms=None) -> str:
    """Handle one hook call from `host` (a name in `hosts.HOSTS`); returns what to print on stdout
    (possibly nothing). `terms`: how the command line that runs the hook words a verb (`errors.Terms`;
    the library's own words when None); what memory points to is said as its MCP tool and that."""
    # Half an emoji reaches us as a lone surrogate: a `\ud83d` escape in the JSON, or (from a caller
    # that decoded with surrogateescape) in `raw` itself. UTF-8 cannot encode one, so SQLite, the
    # session file and stdout would each refuse it and the output would be lost: replace it here.
    if not raw.isascii():
        raw = raw.encode("utf-8", "replace").decode("utf-8")
    try:
        payload = json.loads(raw) if raw.strip() else {}
        if "\\ud" in raw or "\\uD" in raw:
            payload = json.loads(json.dumps(payload, ensure_ascii=False).encode("utf-8", "replace").decode("utf-8"))
    except ValueError as exc:
        raise InvalidInput(f"hook input is not JSON ({exc})") from exc
    spec = hosts.load(host)
    hook = spec.parse_event(event, payload)
    memory = _open_memory(project_root, memory_dir, hook.cwd)
    if memory is None:
        return spec.render_output(hook.event, "")  # no memory folder here: nothing to add
    problems: list[str] = []
    said = HookTerms(terms)
    with _session(memory, hook.session_id, problems) as state:
        before = dict(state.data.get("injected") or {})
        if hook.action == "start":
            context = _on_start(memory, state, task or DEFAULT_TASK, spec.start_max_chars, problems, spec.measure,
                                said)
        elif hook.action == "prompt":
            context = _on_prompt(memory, state, hook.prompt or "", task or DEFAULT_TASK, now, spec.start_max_chars,
                                 problems, spec.measure, said)
        elif hook.action == "file":
            context = _guarded(problems, "gotchas", _on_file, memory, state,
                               _touched(spec, hook, memory.root_str), spec.max_context_chars, said) or ""
        elif hook.action == "compact":
            # After compaction the host's context no longer holds what we sent: send it again.
            state.forget_injected()
            state.data["repack"] = True
            context = ""
        else:
            context = ""
        guard = lambda part, fn, *args: _guarded(problems, part, fn, *args)  # noqa: E731
        extra, stop_reason, outcome, wrote = writeback.on_hook(memory, spec, hook, state, guard)
        context = "\n\n".join(x for x in (context, extra) if x)
        writeback.log(memory, hook, before, state, context, outcome, wrote, guard, now)
    if problems:
        line = problem_line(problems, memory.root_str)
        sys.stderr.write(line + "\n")
        if hook.event in spec.context_events:
            context = line + ("\n\n" + context if context else "")
    if hook.action == "stop":
        return spec.render_stop(hook.event, stop_reason or "")
    return spec.render_output(hook.event, context)


PROBLEM_CHARS = 700  # the problem line's cap: it names the faults, `doctor` gives the detail


def problem_line(problems: list[str], root: str = "") -> str:
    """The one line that tells the agent some memory could not be loaded, and where to look."""
    said = "; ".join(dict.fromkeys(p.replace(root + os.sep, "") if root else p for p in problems))
    if len(said) > PROBLEM_CHARS:
        said = said[: PROBLEM_CHARS - 1].rstrip() + "…"
    return (f"memory-custodian · some project memory could not be loaded (what is shown may be incomplete): "
            f"{said} — run `memory-custodian doctor`, which names each fix.")


def _guarded(problems: list, part: str, fn, *args):
    """`fn(*args)`, or None with the error named in `problems` (one part failing never costs the others)."""
    try:
        return fn(*args)
    except Exception as exc:  # fail open, never silent: the agent's context names it
        problems.append(f"{part}: {short_line(exc)}")
        return None


class _session:
    """`sessions.open_session`, or a blank state that is never saved when the session file cannot
    be opened or saved (a read-only checkout, a `.cache` that is a file): notes may then repeat."""

    def __init__(self, memory, session_id: str, problems: list):
        self.memory, self.session_id, self.problems, self.opened = memory, session_id, problems, None

    def __enter__(self):
        opened = open_session(self.memory.memory_dir_str, self.session_id)
        state = _guarded(self.problems, "session state", opened.__enter__)
        if state is None:
            return SessionState.blank()
        self.opened = opened
        return state

    def __exit__(self, *exc_info):
        if self.opened is None:
            return False
        if exc_info[0] is not None:
            return self.opened.__exit__(*exc_info)
        _guarded(self.problems, "session state", self.opened.__exit__, None, None, None)
        return False


def _touched(spec, hook, root: str) -> list[str]:
    """The project files the tool call touches."""
    from .touched import existing_files, project_relative

    paths = project_relative(hook.paths, root, hook.cwd)
    return existing_files(paths, root) if spec.existing_files_only else paths


def _open_memory(project_root, memory_dir, cwd):
    """The memory of the session's project: the one the host's `cwd` is in, else the host's project
    folder, else the hook process's own folder, else (past repository boundaries) the project around
    the `cwd`. A project root is looked for within one git repository (`find_project_root`), so an
    agent that went into a submodule (the host's `cwd` follows it) must still get the memory of the
    project whose hooks these are, not silence."""
    if project_root is None:
        name = memory_dir or DEFAULT_MEMORY_DIR
        starts = [start for start in (cwd, os.environ.get("CLAUDE_PROJECT_DIR"), os.getcwd()) if start]
        first = find_project_root(starts[0], name)

        def roots():  # looked for one after another, only as far as the first with a memory folder
            yield first
            yield from (find_project_root(start, name) for start in starts[1:])
            yield find_project_root(starts[0], name, within_repository=False)

        project_root = next((root for root in roots() if os.path.isfile(os.path.join(root, name, "manifest.md"))),
                            first)
    memory = Memory.open(project_root, memory_dir)
    if not os.path.isfile(os.path.join(memory.memory_dir_str, "manifest.md")):
        return None
    return memory


# ---- session start: the context pack ---------------------------------------------------------

def _on_start(memory, state, task: str, limit: int, problems: list, measure: str = "chars", terms=None) -> str:
    if state.path is not None:
        _guarded(problems, "session files", prune_sessions_now_and_then, memory.memory_dir_str)
    state.forget_injected()
    state.new_turn()
    state.data["repack"] = False
    return _pack_block(memory, state, task, problems, limit, measure, terms)


def _pack_block(memory, state, task: str, problems: list, limit: int = START_MAX_CHARS, measure: str = "chars",
                terms=None) -> str:
    from ..curated.pack.cutting import lines_part
    from .cold_index import cold, start_building

    at = iso_at(time.time())  # before reading: a note changed while we read counts as changed
    waiting = cold(memory)
    if waiting:  # a fresh clone: never make the session wait for the index (`cold_index.py`)
        _guarded(problems, "background indexing", start_building, memory)
    result = memory.read(task, fail_open=True, ledger="cold" if waiting else True, terms=terms)
    problems.extend(result.problems)
    state.data["problems"] = list(result.problems)  # the next prompt repeats them: they hold all session
    if not result.modules and not result.sections:
        return ""  # nothing could load: the problem line says why
    from ..curated.pack.reading import LEDGER_PARTS

    ledger_broken = any(p.startswith(LEDGER_PARTS) for p in result.problems)
    tasks = [] if ledger_broken or waiting else (_guarded(problems, "open tasks", _open_tasks, memory) or [])
    if problems:  # room for the problem line, which goes first
        limit -= host_length(problem_line(problems, memory.root_str), measure) + 2
    room = limit
    while True:  # the cut counts code points; a host counting otherwise gets it cut again, shorter
        pack = result.cut_to(room, frame=lambda body: _framed(task, body, result.tokens), terms=terms,
                             extra=[lines_part(TASKS_TITLE, tasks)] if tasks else ())
        over = host_length(pack.text, measure) - limit
        if over <= 0 or room <= 0:
            break
        room -= over
    kept = set(pack.note_ids)
    for note_id, full in _shown(result) + [(note_id, False) for _, note_id in tasks if note_id]:
        if note_id in kept:
            state.mark_shown_at(note_id, at, full=full)
    return pack.text


def _framed(task: str, body: str, tokens: int) -> str:
    return (f"memory-custodian · context pack (task: {task}; {tokens} tokens before any cut) · {DATA_NOTICE}\n"
            f"{fence(body)}\n{RECALL_POINTER}\n{REMEMBER_POINTER}")


def _shown(result) -> list[tuple[str, bool]]:
    """(note id, shown in full) for every ledger note in the pack."""
    shown: dict[str, bool] = {}
    for section in getattr(result, "sections", ()):
        full = "recall" not in section.name.lower()  # the recall section shows index lines only
        for note_id in section.note_ids:
            shown[note_id] = shown.get(note_id, False) or full
    return list(shown.items())


TASKS_TITLE = "Open tasks (most recent first)"  # the session-start pack lists them last, under this heading
TASK_SCAN = 50  # task checkpoints read to pick the most recent from (recall orders them by priority first)


def _open_tasks(memory) -> list[tuple[str, str | None]]:
    """Open task checkpoints of every priority (where the last sessions left off), most recent first,
    as (line, note id), with a closing line counting the rest. An idle automatic checkpoint (no file
    changed, nothing written) never takes a real task's place: it is only counted."""
    from ..ledger.frames import index_line
    from ..session.auto_checkpoint import is_idle_checkpoint

    result = memory.recall(None, kinds=("task",), limit=TASK_SCAN, counts="matched", ids=False)
    # the create event's id orders notes made in one millisecond (a note id is random)
    hits = sorted(result.hits, key=lambda h: (h.note.created_at, h.note.created_event), reverse=True)
    idle = sum(1 for h in hits if is_idle_checkpoint(h.note))
    real = [h for h in hits if not is_idle_checkpoint(h.note)]
    lines: list[tuple[str, str | None]] = [(index_line(h.note, h.state, framed=True), h.note.id)
                                           for h in real[:HIGH_TASKS]]
    rest = len(real) - len(lines) + (result.below_cutoff or 0)
    if rest:
        lines.append((f"{rest} more open task{'s' if rest != 1 else ''} — `memory_recall` with kinds [task] "
                      "(or `memory-custodian recall --kind task`) lists them", None))
    if idle:
        lines.append((f"{idle} idle automatic checkpoint{'s' if idle != 1 else ''} not listed (no file changed, "
                      "nothing recorded)", None))
    return lines


# ---- prompt: the top index lines above the relevance floor -------------------------------------

def _on_prompt(memory, state, prompt: str, task: str, now, limit: int, problems: list, measure: str = "chars",
               terms=None) -> str:
    state.keep_message(prompt, now)
    state.new_turn()
    told = state.data.pop("problems", None)
    if isinstance(told, list):  # what the pack could not load, said again where the agent acts on it
        problems.extend(str(p) for p in told)
    blocks: list[str] = []
    if state.data.get("repack"):
        state.data["repack"] = False
        # the prompt's own lines follow in the same output: leave them room under the host's cap
        blocks.append(_pack_block(memory, state, task, problems, limit - PROMPT_BLOCK_CHARS, measure, terms))
    from .cold_index import WAITING, unbuilt

    if prompt.strip() and _guarded(problems, "background indexing", unbuilt, memory):
        blocks.append(f"memory-custodian · {WAITING}.")
    elif prompt.strip():
        lines_block = _guarded(problems, "ledger notes", _prompt_lines, memory, state, prompt)
        if lines_block:
            blocks.append(lines_block)
    return "\n\n".join(b for b in blocks if b)


def _prompt_lines(memory, state, prompt: str) -> str:
    from ..ledger.frames import index_line
    from .recall_view import relevant_hits

    hits, below, missed = relevant_hits(memory, prompt, limit=PROMPT_LINES)
    fresh = [h for h in hits if not state.seen(h.note)]
    repeated = len(hits) - len(fresh)
    lines, over = _fit_turn_budget(state, [hit.note for hit in fresh], lambda note: index_line(note, framed=True),
                                   full=False)
    if not lines:
        return f"memory-custodian · recall for this prompt: {missed}." if missed else ""
    tail = []
    if repeated:
        tail.append(f"{repeated} already shown this session")
    if over:
        tail.append(f"{over} left out by this turn's memory budget")
    if below:
        tail.append(f"{below} more share words with this prompt but rank lower")
    if len(prompt) > PROMPT_QUERY_CHARS:
        tail.append(f"only the prompt's first {PROMPT_QUERY_CHARS:,} characters were searched")
    footer = ("; ".join(tail) + " — `memory_recall` to see them.") if tail else ""
    if missed:
        footer = (footer + " " if footer else "") + f"Not searched: {missed}."
    head = f"memory-custodian · notes that match this prompt (titles only) · {DATA_NOTICE}"
    return "\n".join(x for x in (head, fence("\n".join(lines)), footer, EXPAND_POINTER) if x)


def _fit_turn_budget(state, notes, render, *, full: bool) -> tuple[list[str], int]:
    """Render notes in order while this turn's token budget lasts; (texts, how many did not fit)."""
    from ..base.tokens import estimate_tokens

    texts: list[str] = []
    left = state.budget_left(TURN_BUDGET_TOKENS)
    over = 0
    for note in notes:
        text = render(note)
        cost = estimate_tokens(text)
        if cost > left:
            over += 1
            continue
        left -= cost
        texts.append(text)
        state.mark(note, full=full)
        state.spend(cost)
    return texts, over


# ---- file about to be touched: its gotchas in full ---------------------------------------------

def _on_file(memory, state, paths: list[str], limit: int, terms=None) -> str:
    from .cold_index import WAITING, unbuilt

    if not paths:
        return ""
    if unbuilt(memory):
        return f"memory-custodian · gotchas for these files: {WAITING}."
    # An agent reads a file, then edits it, then edits it again: when nothing changed in the
    # ledger since everything for these paths was shown, skip the query altogether.
    signature = _ledger_signature(memory)
    quiet = state.data.setdefault("quiet_paths", {})
    if all(quiet.get(p) == signature for p in paths):
        return ""
    from .recall_view import note_text, path_notes

    notes, below, missed = path_notes(memory, paths, limit=FILE_SCAN)
    fresh = [n for n in notes if not state.seen(n, full=True)]
    blocks, over = _fit_turn_budget(state, fresh[:FILE_NOTES], note_text, full=True)
    over += max(0, len(fresh) - FILE_NOTES) + below
    if not over and not missed:
        quiet.update(dict.fromkeys(paths, signature))
    if not blocks:
        return f"memory-custodian · gotchas for these files: {missed}." if missed else ""
    head = (f"memory-custodian · gotchas recorded for {', '.join(paths[:3])}"
            f"{' and more' if len(paths) > 3 else ''} · {DATA_NOTICE}")
    body = _cap("\n\n".join(blocks), limit - 600, terms)
    footer = (f"{over} more left out by this turn's memory budget — `memory_recall` with --path to see them."
              if over else "")
    if missed:
        footer = (footer + " " if footer else "") + f"Not searched: {missed}."
    return "\n".join(x for x in (head, fence(body), footer) if x)


def _ledger_signature(memory) -> str:
    """Names, sizes and mtimes of the ledger shards: any write changes it."""
    try:
        with os.scandir(os.path.join(memory.memory_dir_str, "ledger")) as entries:
            shards = sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in entries
                            if e.name.endswith(".jsonl"))
    except FileNotFoundError:
        return "no-ledger"
    return ";".join(f"{name}:{size}:{mtime}" for name, size, mtime in shards)


def _cap(text: str, limit: int, terms=None) -> str:
    from ..curated.pack.cutting import cap_text

    return cap_text(text, limit, *(() if terms is None else (terms,)))
