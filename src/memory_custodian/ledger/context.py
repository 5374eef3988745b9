"""The ledger's sections of the context pack: directives in full, gotchas for the touched paths,
and the top recall index lines for the task (owned by the ledger tier; `read` calls this).

Directives are never ranked: every active one is loaded in full, highest priority first. Each
section packs whole notes (or whole index lines) under its budget from the manifest's
`## Context budget` (`- ledger directives: 800 tokens max`); whatever does not fit is named by id
as an Omission, so the explain section can say what was left out.

Default budgets (tokens): directives 800, gotchas 400, recall 300.
"""

from __future__ import annotations

DEFAULT_BUDGETS = {"directives": 800, "gotchas": 400, "recall": 300}
SECTION_NAMES = {"directives": "Ledger directives", "gotchas": "Ledger gotchas", "recall": "Ledger recall"}
RECALL_LINES = 15
OMITTED_BY_BUDGET = "omitted-by-budget"


def _full(note) -> str:
    from .frames import PROVENANCE_FRAME

    head = f"[#{note.id}] {note.kind}/{note.priority} · {note.title} · {note.created_at[:10]}"
    lines = [head]
    if note.provenance != "human":
        lines.append(f"({PROVENANCE_FRAME.get(note.provenance, note.provenance)})")
    if note.paths:
        lines.append("paths: " + ", ".join(note.paths))
    if note.body.strip() and note.body.strip() != note.title:
        lines.append(note.body)
    return "\n".join(lines)


def _pack(key: str, blocks: list[tuple[str, str]], budget: int | None, sep: str, tail: str | None = None):
    from ..context import Omission, Section
    from ..tokens import estimate_tokens

    shown, omitted, used, oversized = [], [], 0, False
    for note_id, text in blocks:
        cost = estimate_tokens(text)
        if budget is None or used + cost <= budget or not shown and not omitted and cost > budget:
            if budget is not None and cost > budget:
                oversized = True  # the first block is kept whole rather than cut
            shown.append((note_id, text))
            used += cost
        else:
            omitted.append(Omission(module=f"ledger:{key}", ref=f"#{note_id}", reason=OMITTED_BY_BUDGET))
    text = sep.join(t for _, t in shown)
    if tail:
        text = (text + "\n" if text else "") + tail
    return Section(name=SECTION_NAMES[key], text=text + "\n" if text else "", tokens=estimate_tokens(text),
                   budget=budget, omitted=omitted, oversized=oversized, note_ids=[i for i, _ in shown])


def ledger_sections(memory, *, task: str, paths: tuple[str, ...] = (), query: str | None = None,
                    budgets: dict | None = None) -> list:
    """Return a list of `memory_custodian.context.Section` for the pack (empty until the ledger exists)."""
    from .store import Ledger

    ledger = Ledger(memory.memory_dir)
    if not ledger.shards():
        return []
    from .recall import run_recall

    limits = {**DEFAULT_BUDGETS, **(budgets or {})}
    # A Memory keeps one index connection, caught up on each use: share it (a session-start hook
    # then opens one connection, not one for the pack and one for its recall).
    shared = getattr(memory, "_index", None)
    if shared is not None:
        index = shared()
    else:
        from .index import Index

        index = Index(ledger)
        index.catch_up()
    try:
        root = memory.root
        sections = []
        directives = run_recall(index, kinds=("directive",), limit=100000, root=root, ids=False)
        sections.append(_pack("directives", [(h.note.id, _full(h.note)) for h in directives.hits],
                              limits["directives"], "\n\n"))
        shown = [h.note.id for h in directives.hits]
        if paths:
            gotchas = run_recall(index, kinds=("gotcha",), paths=paths, limit=1000, root=root, ids=False)
            sections.append(_pack("gotchas", [(h.note.id, _full(h.note)) for h in gotchas.hits],
                                  limits["gotchas"], "\n\n"))
            shown += [h.note.id for h in gotchas.hits]
        if query or paths:
            if query:
                res = run_recall(index, query=query, limit=RECALL_LINES, root=root, near_paths=tuple(paths),
                                 exclude_ids=tuple(shown), ids=False)
            else:
                res = run_recall(index, paths=paths, limit=RECALL_LINES, root=root, exclude_ids=tuple(shown), ids=False)
            sections.append(_pack("recall", [(h.note.id, h.line()) for h in res.hits], limits["recall"], "\n",
                                  tail=res.footer() + " (`memory-custodian expand ID` for full notes)"))
        return sections
    finally:
        if shared is None:
            index.close()
