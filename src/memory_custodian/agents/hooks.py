"""`memory-custodian hook EVENT`: push memory into an agent's context at the moments that matter.

Agents rarely ask for memory on their own, so the host's hooks bring it: the context pack at
session start, the top matching notes on each prompt, the gotchas of a file about to be touched.
A hook must never break the agent's session: any error is one line on stderr and exit 0. It
must be cheap: this module imports no argument parser and no mcp; `memory-custodian hook` (in
`cli/agents.py`) reads stdin and calls `run_hook`.
"""

from __future__ import annotations

import os

from .fence import DATA_NOTICE, fence
from .hosts import parse_event, project_relative, render_output

TURN_BUDGET_TOKENS = 1_200  # shared by the prompt hook and the file hooks of one turn
MAX_CONTEXT_CHARS = 8_000  # per prompt/file hook output
START_MAX_CHARS = 9_500  # the session-start pack (Claude Code truncates hook output at 10,000)
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
    """Handle one hook call; returns what to print on stdout (possibly nothing)."""
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
    hook = parse_event(host, event, payload)
    memory = _open_memory(project_root, memory_dir, hook.cwd)
    if memory is None:
        return render_output(host, hook.event, "")  # no memory folder here: nothing to add
    from .sessions import open_session

    with open_session(memory.memory_dir_str, hook.session_id) as state:
        if hook.action == "start":
            context = _on_start(memory, state, task or DEFAULT_TASK)
        elif hook.action == "prompt":
            context = _on_prompt(memory, state, hook.prompt or "", task or DEFAULT_TASK, now)
        elif hook.action == "file":
            paths = project_relative(hook.paths, memory.root_str, hook.cwd)
            if host == "codex":  # words of a shell command: only real files count
                paths = [p for p in paths if os.path.isfile(os.path.join(memory.root_str, p))]
            context = _on_file(memory, state, paths)
        else:
            # After compaction the host's context no longer holds what we sent: send it again.
            state.forget_injected()
            state.data["repack"] = True
            context = ""
    return render_output(host, hook.event, context)


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

def _on_start(memory, state, task: str) -> str:
    from .sessions import prune_sessions_now_and_then

    prune_sessions_now_and_then(memory.memory_dir_str)
    state.forget_injected()
    state.new_turn()
    state.data["repack"] = False
    return _pack_block(memory, state, task)


def _pack_block(memory, state, task: str, limit: int = START_MAX_CHARS) -> str:
    at = _now_iso()  # before reading: a note changed while we read counts as changed
    result = memory.read(task)
    tasks = _high_tasks(memory)
    text = result.rendered
    if tasks:
        text = text.rstrip("\n") + "\n\n" + TASKS_HEADING + "\n\n" + "\n".join(line for line, _ in tasks) + "\n"
    out = _framed(task, text) if len(text) <= limit else ""  # framing a long pack only to measure it is slow
    shown = _shown(result) + [(note_id, False) for _, note_id in tasks if note_id]
    if not out or len(out) > limit:
        out, kept = _cut_pack(result, tasks, task, limit)
        shown = [(note_id, full) for note_id, full in shown if note_id in kept]
    for note_id, full in shown:
        state.mark_shown_at(note_id, at, full=full)
    return out


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


TASKS_HEADING = "## Open high-priority tasks"


def _high_tasks(memory) -> list[tuple[str, str | None]]:
    """Open high-priority task checkpoints (where the last session left off), as (line, note id)."""
    from .recall_view import index_line

    # Without a query recall orders by priority first: if the one past the shown ones is high
    # too, there are more.
    # Only the hits are used: no counting of what fell below the cutoff.
    result = memory.recall(None, kinds=("task",), limit=HIGH_TASKS + 1, counts=False, ids=False)
    high = [h for h in result.hits if h.note.priority == "high"]
    lines: list[tuple[str, str | None]] = [(index_line(h.note, h.state), h.note.id) for h in high[:HIGH_TASKS]]
    if len(high) > HIGH_TASKS:
        lines.append(("more high-priority tasks are open — `memory_recall` with kinds [task] to list them all", None))
    return lines


# ---- the pack cut to the host's cap ----------------------------------------------------------
# Claude Code truncates a hook's output at 10,000 characters, tail first, without a word. So when
# the pack is longer we cut it ourselves: on whole entries, in order of value (what was not
# loaded and the warnings, then directives, then constraints, tombstones and rules, then the
# rest), and name everything left out by note id or entry heading, so nothing is missed silently.

RANKS = {"Ledger directives": 1, "Ledger gotchas": 2, "constraints.md": 2, "do-not-use.md": 2}


class _Part:
    """One block of the pack as whole entries: `lead` (heading and preamble) then `entries`, exact
    slices of the pack's text, so a cut block reads as the same block with its tail removed."""

    __slots__ = ("title", "lead", "entries", "rank")

    def __init__(self, title: str, lead: str, entries: list):
        self.title = title
        self.lead = lead
        self.entries = entries  # (text, ref, note id or None)
        self.rank = RANKS.get(title, 2 if title.startswith("rules/") else 3)


def _cut_pack(result, tasks, task: str, limit: int) -> tuple[str, set[str]]:
    """The framed pack under `limit` characters, cut on whole entries; and the note ids it still shows."""
    parts = sorted(_parts(result, tasks), key=lambda part: part.rank)  # stable: pack order within a rank
    order = [(part, entry) for part in parts for entry in part.entries]
    head, tail = _head_and_notes(result)
    room = limit
    while True:
        kept = _fit(order, head, tail, task, limit, room)
        body = _render_cut(head, _cut_notice(order[kept:], task, limit), tail, order[:kept])
        out = _framed(task, body)
        if len(out) <= limit or kept == 0:
            break
        room -= len(out) - limit  # the estimate was short (fence escapes, joins): try again
    if len(out) > limit:  # notices alone over the cap (thousands of warnings): a plain cut, still named
        out = _framed(task, _cap(body, max(0, limit - len(_framed(task, "")) - 200)))
    return out, {entry[2] for _, entry in order[:kept] if entry[2]}


def _parts(result, tasks) -> list[_Part]:
    from ..curated.units import split_units

    parts = []
    for module in result.modules:
        if module.disposition != "loaded" or not (module.text or "").strip():
            continue
        doc = split_units(module.text)
        entries = [(unit.text, unit.ref, None) for unit in doc.units]
        parts.append(_Part(module.module, f"## {module.module}\n\n{doc.preamble}", entries))
    for section in result.sections:
        if section.text.strip():
            parts.append(_Part(section.name, f"## {section.name}\n\n",
                               _note_entries(section.text.strip(), section.note_ids)))
    if tasks:
        entries = [(line + "\n", f"#{note_id}", note_id) for line, note_id in tasks if note_id]
        if tasks[-1][1] is None:  # the "more are open" line goes with the last task
            text, ref, note_id = entries[-1]
            entries[-1] = (text + tasks[-1][0], ref, note_id)
        parts.append(_Part(TASKS_HEADING[3:], TASKS_HEADING + "\n\n", entries))
    return parts


def _note_entries(text: str, note_ids: list[str]) -> list[tuple[str, str, str | None]]:
    """A ledger section's text split at each note's `[#id]` line; one entry if a note cannot be found."""
    whole = [(text, ", ".join(f"#{i}" for i in note_ids) or text.split("\n", 1)[0], None)]
    starts, at = [], 0
    for note_id in note_ids:
        found = text.find(f"[#{note_id}]", at)
        while found > 0 and text[found - 1] != "\n":
            found = text.find(f"[#{note_id}]", found + 1)
        if found < 0 or (not starts and found != 0):
            return whole
        starts.append(found)
        at = found + 1
    if not starts:
        return whole
    ends = starts[1:] + [len(text)]
    return [(text[a:b], f"#{i}", i) for a, b, i in zip(starts, ends, note_ids)]


def _head_and_notes(result) -> tuple[str, str]:
    """The pack's header, and its `## Not loaded` and `## Warnings` blocks, as `read` renders them."""
    from ..curated.reading import render_pack

    # names_only gives the header, a "Loaded:" list of file names (no blank line in it), the blocks
    names = render_pack(result.task, result.canonical_task, result.modules, result.sections, result.omissions,
                        names_only=True, warnings=result.warnings)
    loaded = names.find("\n\nLoaded:\n")
    if loaded < 0:  # a format this hook does not know: keep it all rather than lose a warning
        return names.strip(), ""
    at = names.find("\n\n## ", loaded + 1)
    return names[:loaded], (names[at + 2:].strip() if at >= 0 else "")


def _fit(order, head: str, tail: str, task: str, limit: int, room: int) -> int:
    """How many entries (in order of value) fit with the notice naming the rest."""
    frame = len(_framed(task, "")) + len(head) + len(tail) + 4
    sizes, total, started = [0], 0, set()
    for part, (text, _, _) in order:
        total += len(text)
        if id(part) not in started:
            started.add(id(part))
            total += len(part.lead) + 2
        sizes.append(total)
    def fits(kept: int) -> bool:
        return frame + sizes[kept] + len(_cut_notice(order[kept:], task, limit)) + 2 <= room

    # Keeping one more entry adds its text and takes at most its name (capped, see CUT_NAMES) off
    # the notice, so what is sent grows with `kept`: the most that fits is found by halving, with
    # a notice built a dozen times rather than once per entry (quadratic on a big file).
    lo, hi = 0, len(order)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _cut_notice(dropped, task: str, limit: int) -> str:
    from ..curated.reading import short_ref  # loaded already: the pack was read with it

    if not dropped:
        return ""
    lines = [f"## Cut to fit the host's limit\n\nThe pack is longer than the {limit} characters this hook may "
             "send, so whole entries were left out (none was cut in half). "
             f"Run `memory-custodian read --task {task}` or the `memory_context` MCP tool for the whole pack, "
             "and `memory-custodian expand ID` or `memory_expand` for one note. Not shown here:"]
    by_part: dict[int, tuple] = {}
    for part, entry in dropped:
        by_part.setdefault(id(part), (part, []))[1].append(entry)
    for part, entries in by_part.values():
        refs = [ref for _, ref, _ in entries]
        if any(note_id for _, _, note_id in entries) or part.title.startswith("Ledger"):
            # notes by id, as `expand` takes them
            lines.append(f"- {part.title}: {', '.join(refs[:CUT_IDS])}{_more(len(refs) - CUT_IDS, task)}")
        elif len(entries) == len(part.entries):
            lines.append(f"- {part.title}: the whole file ({len(entries)} entr{'y' if len(entries) == 1 else 'ies'})")
        else:
            lines.append(f"- {part.title}: {len(entries)} of {len(part.entries)} entries: "
                         + "; ".join(short_ref(ref) for ref in refs[:CUT_NAMES]) + _more(len(refs) - CUT_NAMES, task))
    return "\n".join(lines)


# Names listed per block of the notice: past these, a count and where every name is (listing
# hundreds of headings would cost more room than the entries they stand for).
CUT_IDS, CUT_NAMES = 60, 20


def _more(count: int, task: str) -> str:
    return f"; and {count} more (`memory-custodian read --task {task} --explain` names every one)" if count > 0 else ""


def _render_cut(head: str, notice: str, tail: str, kept) -> str:
    blocks = [head, notice, tail]
    by_part: dict[int, tuple] = {}
    for part, (text, _, _) in kept:
        by_part.setdefault(id(part), (part, []))[1].append(text)
    blocks.extend((part.lead + "".join(texts)).strip() for part, texts in by_part.values())
    return "\n\n".join(block for block in blocks if block) + "\n"


# ---- prompt: the top index lines above the relevance floor -------------------------------------

def _on_prompt(memory, state, prompt: str, task: str, now) -> str:
    state.keep_message(prompt, now)
    state.new_turn()
    blocks: list[str] = []
    if state.data.get("repack"):
        state.data["repack"] = False
        # the prompt's own lines follow in the same output: leave them room under the host's cap
        blocks.append(_pack_block(memory, state, task, START_MAX_CHARS - PROMPT_BLOCK_CHARS))
    if prompt.strip():
        lines_block = _prompt_lines(memory, state, prompt)
        if lines_block:
            blocks.append(lines_block)
    return "\n\n".join(blocks)


def _prompt_lines(memory, state, prompt: str) -> str:
    from .recall_view import index_line, relevant_hits

    hits, below = relevant_hits(memory, prompt, limit=PROMPT_LINES)
    fresh = [h for h in hits if not state.seen(h.note)]
    repeated = len(hits) - len(fresh)
    lines, over = _fit_turn_budget(state, [hit.note for hit in fresh], index_line, full=False)
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

def _on_file(memory, state, paths: list[str]) -> str:
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
    body = _cap("\n\n".join(blocks), MAX_CONTEXT_CHARS - 600)
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
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > limit // 2 else limit
    return text[:cut] + f"\n… cut at {limit} characters: run `memory-custodian read` for the whole pack"
