"""The pages of the pack and the ledger: the context pack with its explain section drawn, the ledger
table (browsed a page at a time, or searched through recall), and one note's history."""

from __future__ import annotations

from ..base.errors import InvalidInput
from ..curated.manifest.routing import CANONICAL_TASKS
from ..ledger.storage.model import KINDS, PROVENANCES, STATES
from .history_pages import chain_diffs
from .html import (
    WEB_TERMS,
    badge,
    budget_bar,
    checkbox,
    esc,
    field_list,
    field_value,
    href,
    layout,
    outcome,
    select,
    table,
    text_input,
)

PAGE_SIZE = 50
PAGE_MAX = 20_000  # 50 a page: a million notes, recall's own ceiling
BROWSE_STATES = tuple(s for s in STATES if s != "forgotten")


def pack_page(memory, params: dict, base: str) -> str:
    task = field_value(params, "task") or "implementation"
    areas, paths = field_list(params, "area"), field_list(params, "path")
    query = field_value(params, "q") or None
    form = (f'<form class=filters method=get action="{href(base, "/pack")}">'
            + select("task", "task", CANONICAL_TASKS, task)
            + text_input("area", "areas (comma-separated)", ", ".join(areas))
            + text_input("path", "touched paths (comma-separated)", ", ".join(paths), "src/app.py")
            + text_input("q", "what the task is about", query or "", "ranks the ledger lines")
            + "<button>Build the pack</button></form>")
    result = memory.read(task, areas=areas, paths=paths, query=query, terms=WEB_TERMS)
    return layout(base, "pack", f"Context pack for {result.task}", form + _explain(result)
                  + "<h2>The pack as the agent reads it</h2>" + f"<pre>{esc(result.rendered)}</pre>")


def _explain(result) -> str:
    head = (f"<p>Task <b>{esc(result.task)}</b> \u2192 <b>{esc(result.canonical_task)}</b> "
            + (f"(manifest heading: {esc(result.task_heading)})" if result.task_heading else "(always-load only)")
            + "</p>")
    rows = []
    for m in result.modules:
        loaded = m.disposition == "loaded"
        what = outcome(m.disposition)
        if m.reason != m.disposition:
            what += f' <span class=muted>({esc(m.reason)})</span>'
        size = budget_bar(m.tokens, m.budget) if loaded else ""
        if m.omitted:
            size += f" <span class=warn>{len(m.omitted)} left out by budget</span>"
        if m.oversized:
            size += " <span class=warn>oversized first entry kept whole</span>"
        rows.append((esc(m.module), what, size, esc(m.detail)))
    for s in result.sections:
        count = len(s.note_ids)
        rows.append((esc(s.name), outcome("loaded") + " <span class=muted>(ledger)</span>",
                     budget_bar(s.tokens, s.budget), f"{count} note{'' if count == 1 else 's'}"))
    out = head + "<h2>What loaded and what did not</h2>" + table(("module", "outcome", "tokens against budget",
                                                                   "why"), rows)
    budgeted = [o for o in result.omissions if o.reason == "omitted-by-budget"]
    others = [o for o in result.omissions if o.reason != "omitted-by-budget"]
    out += "<h2>Left out by budget</h2>" + (
        table(("module", "entry", "reason"), [(esc(o.module), esc(o.ref), esc(o.reason)) for o in budgeted])
        if budgeted else "<p class=muted>nothing: every routed entry fit its budget</p>")
    if others:
        out += "<h2>Not loaded for another reason</h2>" + table(
            ("module", "entry", "reason"), [(esc(o.module), esc(o.ref), esc(o.reason)) for o in others])
    if result.warnings:
        out += "<h2>Warnings</h2><ul>" + "".join(f"<li class=warn>{esc(w)}</li>" for w in result.warnings) + "</ul>"
    return out


def ledger_page(memory, params: dict, base: str) -> str:
    want = {name: field_value(params, name) for name in ("q", "kind", "state", "provenance")}
    tags, paths = field_list(params, "tag"), field_list(params, "path")
    page = _page_number(field_value(params, "page"))
    form = (f'<form class=filters method=get action="{href(base, "/ledger")}">'
            + text_input("q", "text search (recall)", want["q"], "lock daemon")
            + select("kind", "kind", KINDS, want["kind"]) + select("state", "state", BROWSE_STATES, want["state"])
            + select("provenance", "provenance (browsing only)", PROVENANCES, want["provenance"])
            + text_input("tag", "tags", ", ".join(tags)) + text_input("path", "paths", ", ".join(paths))
            + checkbox("all", "search every state", bool(field_value(params, "all")))
            + "<button>Filter</button></form>")
    one = lambda name: [want[name]] if want[name] else []  # noqa: E731
    if want["q"]:
        body = _recall_table(memory, want, one, tags, paths, page, base, params)
    else:
        notes = memory.browse(kinds=one("kind"), states=one("state"), provenances=one("provenance"), tags=tags,
                              paths=paths, offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE)
        rows = [_note_row(n, s, base) for n, s in notes.notes]
        last = max(1, -(-notes.total // PAGE_SIZE))
        matches = "1 note matches" if notes.total == 1 else f"{notes.total} notes match"
        unread = f"<p class=warn>Not all of the ledger is listed: {esc(notes.unread)}.</p>" if notes.unread else ""
        body = (unread + f"<p>{matches}, newest first; page {page} of {last}.</p>"
                + _pager(base, params, page, page < last) + table(_HEAD, rows)
                + _pager(base, params, page, page < last))
    return layout(base, "ledger", "Ledger", form + body)


def _page_number(text: str) -> int:
    if not text:
        return 1
    if not text.isdigit() or not 1 <= int(text) <= PAGE_MAX:
        raise InvalidInput(f"{{field}} must be a whole number from 1 to {PAGE_MAX}", field="page")
    return int(text)


_HEAD = ("note", "kind/priority", "title", "state", "provenance", "tags", "paths", "created")


def _note_row(note, state, base) -> tuple:
    return (f'<a href="{href(base, "/note/" + note.id)}">#{esc(note.id)}</a>', esc(f"{note.kind}/{note.priority}"),
            esc(note.title), badge(state), esc(note.provenance), esc(", ".join(note.tags)),
            esc(", ".join(note.paths)), f"<span class=nowrap>{esc(note.created_at[:10])}</span>")


def _recall_table(memory, want, one, tags, paths, page, base, params) -> str:
    """A text search is recall as an agent gets it: ranked, cut, and its footer saying what was not shown."""
    if want["provenance"]:
        return ("<p class=warn>Recall never filters by provenance (trust changes a note's frame, not whether "
                "it is found): clear the provenance field to search, or clear the search to browse by it.</p>")
    states = one("state")
    every = bool(field_value(params, "all"))
    result = memory.recall(want["q"], kinds=one("kind"), tags=tags, paths=paths, states=states,
                           include_all=every, limit=PAGE_SIZE * page, ids=False, caller="viewer")
    hits = result.hits[(page - 1) * PAGE_SIZE:]
    rows = [(str(h.rank), *_note_row(h.note, h.state, base)) for h in hits]
    more = len(result.hits) == PAGE_SIZE * page and result.below_cutoff > 0
    return (f"<p>Recall for \u201c{esc(want['q'])}\u201d, ranked; page {page}.</p>" + _pager(base, params, page, more)
            + table(("rank", *_HEAD), rows, num=(0,))
            + f"<p class=footer-line>Not shown: {esc(result.footer(WEB_TERMS))}</p>")


def _pager(base, params, page, more) -> str:
    keep = [(k, v) for k, vs in sorted(params.items()) if k != "page" for v in vs]
    prev = (f'<a href="{href(base, "/ledger", keep + [("page", str(page - 1))])}">\u2190 previous</a>'
            if page > 1 else "<span class=muted>\u2190 previous</span>")
    nxt = (f'<a href="{href(base, "/ledger", keep + [("page", str(page + 1))])}">next \u2192</a>'
           if more else "<span class=muted>next \u2192</span>")
    return f"<div class=pager>{prev}{nxt}</div>"


def note_page(memory, note_id: str, base: str) -> str:
    note = memory.note(note_id)
    shown = memory.expand([note.id], caller="viewer").notes[0]
    state = shown["state"]
    events = memory.history(note.id).events
    frame = (f'<div class="frame{" alert" if shown["warning"] else ""}">'
             + (f"<p class=warn>{esc(shown['warning'])}</p>" if shown["warning"] else "")
             + f"<p>{badge(state)} <b>{esc(note.kind)}/{esc(note.priority)}</b> · provenance "
             f"<b>{esc(note.provenance)}</b>: {esc(shown['provenance_frame'])}</p>"
             + (f"<p>user's words: \u201c{esc(note.quote)}\u201d</p>" if note.quote else "")
             + f"<pre>{esc(note.body)}</pre></div>")
    facts = table(("field", "value"), [(esc(k), esc(v)) for k, v in (
        ("created", f"{note.created_at} by {note.created_by}"), ("last change", note.updated_at),
        ("scope", note.scope + (f" ({note.branch})" if note.branch else "")), ("expires", note.expires or "never"),
        ("tags", ", ".join(note.tags) or "none"), ("paths", ", ".join(note.paths) or "none"))])
    links = []
    for i in shown["chain"]:
        cls = "link this" if i == note.id else "link"
        links.append(f'<span class="{cls}">#{esc(i)}</span>' if i == note.id
                     else f'<a class="{cls}" href="{href(base, "/note/" + i)}">#{esc(i)}</a>')
    chain = ('<div class=chain aria-label="supersession chain, oldest first">' + " \u2192 ".join(links) + "</div>"
             if len(links) > 1 else "<p class=muted>not part of a supersession chain</p>")
    timeline = "<ol class=timeline>" + "".join(_event_item(e, base) for e in events) + "</ol>"
    return layout(base, "ledger", f"#{note.id} · {note.title}",
                  frame + facts + "<h2>Supersession chain (oldest first)</h2>" + chain
                  + (chain_diffs(memory, shown["chain"], base) if len(links) > 1 else "")
                  + f"<h2>Events ({len(events)})</h2>" + timeline)


def _event_item(event: dict, base: str) -> str:
    extra = []
    for key in ("reason", "to"):
        if event.get(key):
            extra.append(f"{key}: {esc(event[key])}")
    if event.get("by"):
        extra.append(f'replaced by <a href="{href(base, "/note/" + event["by"])}">#{esc(event["by"])}</a>')
    if event.get("supersedes"):
        extra.append(f'replaces <a href="{href(base, "/note/" + event["supersedes"])}">#{esc(event["supersedes"])}</a>')
    return (f"<li><b>{esc(event['op'])}</b> <span class=muted>{esc(event['at'])} · {esc(event['actor'])}</span>"
            + ("<br>" + " · ".join(extra) if extra else "") + "</li>")
