"""The viewer's history pages: the curated files and each one through its commits, the activity timeline, one
search over both tiers, a session `stats` lists, and the text diff along a note's supersession chain.

Everything comes from `Memory` (git read-only, the index, the usage log); what is forgotten is never shown.
"""

from __future__ import annotations

from itertools import pairwise

from ..base.errors import InvalidInput, NotFound
from ..history.activity import ACTORS, COMMIT, CURATED, curated_commits
from ..history.curated_diff import text_diff
from ..ledger.storage.model import KINDS, OPS
from .html import WEB_TERMS, badge, budget_bar, esc, field_value, href, layout, select, table, text_input

FORGOTTEN = "<span class=muted>an entry forgotten since (its text is not shown)</span>"


def diff_block(lines: list[str]) -> str:
    if not lines:
        return ""
    out = []
    for line in lines:
        cls = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else "del" if line.startswith(
            "-") else "ctx"
        out.append(f'<span class="{cls}">{esc(line) or " "}</span>')
    return "<pre class=diff>" + "".join(out) + "</pre>"  # each line a block: no newline between them


def _change(change: str) -> str:
    return f'<span class="badge change-{esc(change)}">{esc(change)}</span>'


def _short(commit: str | None) -> str:
    return esc(commit[:10]) if commit else "working tree"


def files_page(memory, base: str) -> str:
    status = memory.status()
    last: dict = {}  # file -> its newest curated commit (an `Activity`)
    for c in curated_commits(memory) or ():
        for name in c.files:
            last.setdefault(name, c)
    rows = []
    for f in status.files:
        newest = last.get(f.name)
        rows.append((f'<a href="{href(base, "/file/" + f.name)}">{esc(f.name)}</a>', budget_bar(f.tokens, f.budget),
                     str(f.entries), (f'<span class=nowrap>{esc(newest.at[:10])}</span> {esc(newest.title)}' if newest
                                      else "<span class=muted>not committed</span>")))
    return layout(base, "files", "Curated files", "<p>Each file's page lists the commits that changed it, entry by "
                  "entry, and each entry's history.</p>" + table(("file", "tokens against budget", "entries",
                                                                   "last commit"), rows, num=(2,)))


def file_page(memory, name: str, params: dict, base: str) -> str:
    skip_text = field_value(params, "skip") or "0"
    if not skip_text.isdigit() or len(skip_text) > 7:
        raise InvalidInput("{field} must be a whole number of commits", field="skip")
    hist = memory.file_history(name, skip=int(skip_text))
    entries = []
    for heading, seen in hist.entries:
        where = ", ".join(f'<a href="#c-{esc(c or "work")}">{esc(change)} {esc(at[:10]) if at else "now"}</a>'
                          for c, at, change in seen) or "<span class=muted>not in the commits shown</span>"
        entries.append((esc(heading), where))
    commits = []
    for c in hist.commits:
        items = "".join(_entry_item(ch) for ch in c.changes) or "<li class=muted>no entry changed (layout only)</li>"
        commits.append(f'<li id="c-{esc(c.commit or "work")}"><b>{esc(c.at[:16].replace("T", " ")) or "now"}</b> '
                       f'<span class=muted>{_short(c.commit)} · {esc(c.author)}</span> {esc(c.subject)}'
                       f"<ul>{items}</ul></li>")
    shown = sum(1 for c in hist.commits if c.commit)
    older = (f'<a href="{href(base, "/file/" + name, [("skip", str(hist.skip + shown))])}">older commits →</a>'
             if hist.more else "<span class=muted>no older commit</span>")
    newer = (f'<a href="{href(base, "/file/" + name, [("skip", str(max(0, hist.skip - 50)))])}">← newer</a>'
             if hist.skip else "")
    more = f"<div class=pager>{newer}{older}</div>"
    scope = (f"<p class=muted>Commits {hist.skip + 1}–{hist.skip + shown}, newest first; each entry's history "
             "below is what these commits did to it.</p>")
    body = (f"<h2>Entries now ({len(entries)})</h2>"
            + (table(("entry", "added and changed in"), entries) if entries else "<p class=muted>no entries</p>")
            + f"<h2>Commits ({len(hist.commits)}{'+' if hist.more else ''}), newest first</h2>" + scope
            + ("<ol class=timeline>" + "".join(commits) + "</ol>" if commits
               else "<p class=muted>no commit has changed this file</p>") + more)
    return layout(base, "files", f"{name} through its commits", body)


def _entry_item(ch) -> str:
    if ch.change == "forgotten":
        return f"<li>{_change('forgotten')} {FORGOTTEN}</li>"
    to = f" \u2192 {esc(ch.to)}" if ch.to else ""
    diff = f"<details><summary>diff</summary>{diff_block(ch.diff)}</details>" if ch.diff else ""
    return f"<li>{_change(ch.change)} {esc(ch.heading)}{to}{diff}</li>"


def activity_page(memory, params: dict, base: str) -> str:
    want = {k: field_value(params, k) or None for k in ("since", "until", "kind", "op", "actor", "before")}
    form = (f'<form class=filters method=get action="{href(base, "/activity")}">'
            + text_input("since", "from (UTC date)", want["since"] or "", "2026-11-01")
            + text_input("until", "to (UTC date)", want["until"] or "", "2026-12-31")
            + select("kind", "kind", (*KINDS, CURATED), want["kind"] or "")
            + select("op", "what happened", (*OPS, COMMIT), want["op"] or "")
            + select("actor", "actor", ACTORS, want["actor"] or "") + "<button>Filter</button></form>")
    page = memory.activity(since=want["since"], until=want["until"], kind=want["kind"], op=want["op"],
                           actor=want["actor"], before=want["before"])
    days: dict[str, list[str]] = {}
    for a in page.items:
        days.setdefault(a.at[:10], []).append(_activity_item(a, base))
    body = "".join(f"<h3 class=day>{esc(day)}</h3><ul class=activity>{''.join(items)}</ul>"
                   for day, items in days.items()) or "<p class=muted>nothing happened in this range</p>"
    if page.more:
        keep = [(k, v) for k, v in want.items() if v and k != "before"] + [("before", page.items[-1].at)]
        body += f'<div class=pager><a href="{href(base, "/activity", keep)}">older \u2192</a></div>'
    note = "" if page.git else "<p class=muted>not a git repository: curated commits are not listed</p>"
    return layout(base, "activity", "Activity", form + note + body)


def _activity_item(a, base: str) -> str:
    when = f"<span class=muted>{esc(a.at[11:16])}</span>"
    if a.commit:
        files = ", ".join(f'<a href="{href(base, "/file/" + f)}">{esc(f)}</a>' for f in a.files)
        return (f"<li>{when} <b>commit</b> <span class=muted>{esc(a.commit[:10])} · {esc(a.actor)}</span> "
                f"{esc(a.title)} \u2014 {files}</li>")
    link = f'<a href="{href(base, "/note/" + a.note)}">#{esc(a.note)}</a>' if a.kind else f"#{esc(a.note)}"
    what = esc(a.title) if a.kind else "<span class=muted>(forgotten: its text is not shown)</span>"
    reason = f" <span class=muted>\u2014 {esc(a.reason)}</span>" if a.reason else ""
    return (f"<li>{when} <b>{esc(a.op)}</b> {esc(a.kind or '')} {link} {what} "
            f"<span class=muted>· {esc(a.actor)}</span>{reason}</li>")


def search_page(memory, params: dict, base: str) -> str:
    q = field_value(params, "q")
    form = (f'<form class=filters method=get action="{href(base, "/search")}">'
            + text_input("q", "words to find in curated entries and ledger notes", q, "retry backoff")
            + "<button>Search</button></form>")
    if not q.strip():
        return layout(base, "search", "Search", form + "<p class=muted>One search over both tiers: every curated "
                      "entry holding all the words, and the ledger's notes as recall ranks them.</p>")
    result = memory.search(q, caller="viewer")
    rows = [(f'<a href="{href(base, "/file/" + h.file)}">{esc(h.file)}</a>:{h.line}', esc(h.heading), esc(h.snippet))
            for h in result.entries]
    curated = (f"<h2>Curated entries ({len(rows) + result.more_entries})</h2>"
               + (table(("where", "entry", "text"), rows) if rows else "<p class=muted>no entry holds every word</p>")
               + (f"<p class=muted>{result.more_entries} more not shown</p>" if result.more_entries else ""))
    hits = result.recall.hits if result.recall else []
    notes = [(str(h.rank), f'<a href="{href(base, "/note/" + h.note.id)}">#{esc(h.note.id)}</a>',
              esc(f"{h.note.kind}/{h.note.priority}"), esc(h.note.title), badge(h.state)) for h in hits]
    ledger = (f"<h2>Ledger notes ({len(notes)} shown)</h2>"
              + (table(("rank", "note", "kind", "title", "state"), notes, num=(0,)) if notes
                 else "<p class=muted>no note matched</p>")
              + (f"<p class=footer-line>Not shown: {esc(result.recall.footer(WEB_TERMS))}</p>" if result.recall
                 else ""))
    return layout(base, "search", f"Search: {q}", form + curated + ledger)


def session_page(memory, session: str, base: str) -> str:
    view = memory.session(session)
    s = view.stats

    def note(i: str) -> str:
        title, kind = view.titles.get(i, ("", ""))
        return (f'<a href="{href(base, "/note/" + i)}">#{esc(i)}</a> {esc(kind)} {esc(title)}' if title
                else f"#{esc(i)} <span class=muted>(gone)</span>")

    head = table(("host", "first seen", "last seen", "hooks", "injected", "edited files"), [(
        esc(s.host), esc(s.first), esc(s.last), str(sum(s.hooks.values())),
        f"{s.injected_notes} notes ({s.injected_tokens} tokens)", "yes" if s.files_edited else "no")])
    calls = [(f"<span class=nowrap>{esc(e['at'][11:19])}</span>", esc(e.get("event")),
              ", ".join(note(i) for i in e.get("injected") or ()) or "<span class=muted>nothing</span>",
              str(e.get("tokens") or 0), esc(e.get("checkpoint") or "")) for e in view.calls]
    injected = [(note(i), str(n)) for i, n in view.injected]
    written = [(note(n.id), esc(n.created_by), esc(n.created_at)) for n in view.written]
    body = (head + f"<h2>What it injected ({len(injected)} notes)</h2>"
            + (table(("note", "times"), injected, num=(1,)) if injected else "<p class=muted>nothing</p>")
            + f"<h2>What was written while it ran ({len(written)})</h2>"
            + (table(("note", "by", "created"), written) if written else "<p class=muted>nothing</p>")
            + f"<h2>Hook calls ({len(calls)})</h2>"
            + table(("time", "event", "injected", "tokens", "checkpoint"), calls, num=(3,)))
    return layout(base, "stats", f"Session {session}", body)


def chain_diffs(memory, chain: list[str], base: str) -> str:
    """The text diff of each step along a supersession chain, oldest first (a forgotten step is skipped)."""
    notes = []
    for i in chain:
        try:
            n = memory.note(i)
        except NotFound:
            continue
        if n.state != "forgotten":
            notes.append(n)
    steps = []
    for old, new in pairwise(notes):
        lines = text_diff(f"# {old.title}\n{old.body}", f"# {new.title}\n{new.body}")
        steps.append(f'<h3>#{esc(old.id)} \u2192 <a href="{href(base, "/note/" + new.id)}">#{esc(new.id)}</a></h3>'
                     + (diff_block(lines) or "<p class=muted>same text</p>"))
    return ("<h2>Text along the chain</h2>" + "".join(steps)) if steps else ""


def check_name(path: str, prefix: str) -> str:
    name = path[len(prefix):]
    if not name or len(name) > 300:
        raise InvalidInput("{field} is missing or too long", field="file")
    return name
