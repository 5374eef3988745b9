"""`memory-custodian hook EVENT`: push memory into an agent's context at the moments that matter.

Agents rarely ask for memory on their own, so the host's hooks bring it: the context pack at
session start, the top matching notes on each prompt, the gotchas of a file about to be touched.
A hook must never break the agent's session: any error is one line on stderr and exit 0. It
must be cheap: this module imports no argument parser and no mcp; `memory-custodian hook` (in
`cli/agents.py`) reads stdin and calls `run_hook`.
"""

from __future__ import annotations

import os

from . import hosts
from .fence import DATA_NOTICE, fence
from .hosts.adapter import START_MAX_CHARS  # the pack's default cap; each host declares its own

TURN_BUDGET_TOKENS = 1_200  # shared by the prompt hook and the file hooks of one turn
PROMPT_LINES = 5
PROMPT_BLOCK_CHARS = 2_000  # room kept for the prompt's lines when the pack is re-sent with them
FILE_NOTES = 5
HIGH_TASKS = 5  # task checkpoints listed at session start
FILE_SCAN = 50  # gotchas fetched per file hook, before dedup
DEFAULT_TASK = "implementation"
EXPAND_POINTER = "full text: `memory_expand` or `memory-custodian expand ID`."
RECALL_POINTER = f"More memory: `memory_recall` (MCP) or `memory-custodian recall QUERY`; {EXPAND_POINTER}"

# Agents rarely write notes unprompted: the pack ends by saying how.
REMEMBER_POINTER = ("Record what the next session must know (a trap tied to files, a finding, a task checkpoint): "
                    "`memory_remember` (MCP) or `memory-custodian remember --actor agent TEXT`.")


def run_hook(host: str, event: str, raw: str, *, project_root=None, memory_dir=None, task=None,
             now: float | None = None) -> str:
    """Handle one hook call from `host` (a name in `hosts.HOSTS`); returns what to print on stdout
    (possibly nothing)."""
    import json

    from ..errors import InvalidInput

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
    from .sessions import open_session

    with open_session(memory.memory_dir_str, hook.session_id) as state:
        if hook.action == "start":
            context = _on_start(memory, state, task or DEFAULT_TASK, spec.start_max_chars, spec.measure)
        elif hook.action == "prompt":
            context = _on_prompt(memory, state, hook.prompt or "", task or DEFAULT_TASK, now, spec.start_max_chars)
        elif hook.action == "file":
            context = _on_file(memory, state, _touched(spec, hook, memory.root_str), spec.max_context_chars)
        else:
            # After compaction the host's context no longer holds what we sent: send it again.
            state.forget_injected()
            state.data["repack"] = True
            context = ""
    return spec.render_output(hook.event, context)


def _touched(spec, hook, root: str) -> list[str]:
    """The project files the tool call touches."""
    from .touched import existing_files, project_relative

    paths = project_relative(hook.paths, root, hook.cwd)
    return existing_files(paths, root) if spec.existing_files_only else paths


def _open_memory(project_root, memory_dir, cwd):
    from ..memory import Memory
    from ..project import DEFAULT_MEMORY_DIR, find_project_root

    if project_root is None:
        start = cwd or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
        project_root = find_project_root(start, memory_dir or DEFAULT_MEMORY_DIR)
    memory = Memory.open(project_root, memory_dir)
    if not os.path.isfile(os.path.join(memory.memory_dir_str, "manifest.md")):
        return None
    return memory


# ---- session start: the context pack ---------------------------------------------------------

def _on_start(memory, state, task: str, limit: int, measure: str = "chars") -> str:
    from .sessions import prune_sessions_now_and_then

    prune_sessions_now_and_then(memory.memory_dir_str)
    state.forget_injected()
    state.new_turn()
    state.data["repack"] = False
    return _pack_block(memory, state, task, limit, measure)


def _pack_block(memory, state, task: str, limit: int = START_MAX_CHARS, measure: str = "chars") -> str:
    from ..curated.cutting import lines_part
    from ..textsafe import host_length

    at = _now_iso()  # before reading: a note changed while we read counts as changed
    result = memory.read(task)
    tasks = _high_tasks(memory)
    room = limit
    while True:  # the cut counts code points; a host counting otherwise gets it cut again, shorter
        pack = result.cut_to(room, frame=lambda body: _framed(task, body),
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


def _framed(task: str, body: str) -> str:
    return (f"memory-custodian · context pack (task: {task}) · {DATA_NOTICE}\n{fence(body)}\n{RECALL_POINTER}\n"
            f"{REMEMBER_POINTER}")


def _shown(result) -> list[tuple[str, bool]]:
    """(note id, shown in full) for every ledger note in the pack."""
    shown: dict[str, bool] = {}
    for section in getattr(result, "sections", ()):
        full = "recall" not in section.name.lower()  # the recall section shows index lines only
        for note_id in section.note_ids:
            shown[note_id] = shown.get(note_id, False) or full
    return list(shown.items())


def _now_iso() -> str:
    import time

    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


TASKS_TITLE = "Open high-priority tasks"  # the session-start pack lists them last, under this heading


def _high_tasks(memory) -> list[tuple[str, str | None]]:
    """Open high-priority task checkpoints (where the last session left off), as (line, note id)."""
    from ..ledger.frames import index_line

    # Without a query recall orders by priority first: if the one past the shown ones is high
    # too, there are more.
    # Only the hits are used: no counting of what fell below the cutoff.
    result = memory.recall(None, kinds=("task",), limit=HIGH_TASKS + 1, counts=False, ids=False)
    high = [h for h in result.hits if h.note.priority == "high"]
    lines: list[tuple[str, str | None]] = [(index_line(h.note, h.state, framed=True), h.note.id)
                                               for h in high[:HIGH_TASKS]]
    if len(high) > HIGH_TASKS:
        lines.append(("more high-priority tasks are open — `memory_recall` with kinds [task] to list them all", None))
    return lines


# ---- prompt: the top index lines above the relevance floor -------------------------------------

def _on_prompt(memory, state, prompt: str, task: str, now, limit: int) -> str:
    state.keep_message(prompt, now)
    state.new_turn()
    blocks: list[str] = []
    if state.data.get("repack"):
        state.data["repack"] = False
        # the prompt's own lines follow in the same output: leave them room under the host's cap
        blocks.append(_pack_block(memory, state, task, limit - PROMPT_BLOCK_CHARS))
    if prompt.strip():
        lines_block = _prompt_lines(memory, state, prompt)
        if lines_block:
            blocks.append(lines_block)
    return "\n\n".join(blocks)


def _prompt_lines(memory, state, prompt: str) -> str:
    from ..ledger.frames import index_line
    from .recall_view import relevant_hits

    hits, below = relevant_hits(memory, prompt, limit=PROMPT_LINES)
    fresh = [h for h in hits if not state.seen(h.note)]
    repeated = len(hits) - len(fresh)
    lines, over = _fit_turn_budget(state, [hit.note for hit in fresh], lambda note: index_line(note, framed=True),
                                   full=False)
    if not lines:
        return ""
    tail = []
    if repeated:
        tail.append(f"{repeated} already shown this session")
    if over:
        tail.append(f"{over} left out by this turn's memory budget")
    if below:
        tail.append(f"{below} more share words with this prompt but rank lower")
    footer = ("; ".join(tail) + " — `memory_recall` to see them.") if tail else ""
    head = f"memory-custodian · notes that match this prompt (titles only) · {DATA_NOTICE}"
    return "\n".join(x for x in (head, fence("\n".join(lines)), footer, EXPAND_POINTER) if x)


def _fit_turn_budget(state, notes, render, *, full: bool) -> tuple[list[str], int]:
    """Render notes in order while this turn's token budget lasts; (texts, how many did not fit)."""
    from ..tokens import estimate_tokens

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

def _on_file(memory, state, paths: list[str], limit: int) -> str:
    if not paths:
        return ""
    # An agent reads a file, then edits it, then edits it again: when nothing changed in the
    # ledger since everything for these paths was shown, skip the query altogether.
    signature = _ledger_signature(memory)
    quiet = state.data.setdefault("quiet_paths", {})
    if all(quiet.get(p) == signature for p in paths):
        return ""
    from .recall_view import note_text, path_notes

    notes, below = path_notes(memory, paths, limit=FILE_SCAN)
    fresh = [n for n in notes if not state.seen(n, full=True)]
    blocks, over = _fit_turn_budget(state, fresh[:FILE_NOTES], note_text, full=True)
    over += max(0, len(fresh) - FILE_NOTES) + below
    if not over:
        quiet.update({p: signature for p in paths})
    if not blocks:
        return ""
    head = (f"memory-custodian · gotchas recorded for {', '.join(paths[:3])}"
            f"{' and more' if len(paths) > 3 else ''} · {DATA_NOTICE}")
    body = _cap("\n\n".join(blocks), limit - 600)
    footer = (f"{over} more left out by this turn's memory budget — `memory_recall` with --path to see them."
              if over else "")
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


def _cap(text: str, limit: int) -> str:
    from ..curated.cutting import cap_text

    return cap_text(text, limit)
