"""The HTML every page shares: escaping, the layout and its style sheet, links, tables and bars.

Memory text is data: everything that reaches a page goes through `esc`, which also shows control
and bidi characters as visible escapes, so a note cannot reorder or hide the text around it. No
page carries a script or an inline style (the Content-Security-Policy forbids both); bars are
`<meter>` elements and SVG shapes sized by attributes.
"""

from __future__ import annotations

import html
import threading
from urllib.parse import quote, urlencode

from ..base.errors import Terms
from ..base.textsafe import printable

NAV = (("pack", "/pack", "Context pack"), ("ledger", "/ledger", "Ledger"), ("files", "/files", "Files"),
       ("activity", "/activity", "Activity"), ("search", "/search", "Search"), ("eval", "/eval", "Recall misses"),
       ("doctor", "/doctor", "Doctor"), ("stats", "/stats", "Adoption"))


class PageContext(threading.local):
    """What the viewer knows of the page being built on its worker thread: the tabs that have content
    (None: all) and the memory's change stamp the page's refresh script watches (None: no script)."""

    tabs: frozenset | None = None
    stamp: str | None = None


CONTEXT = PageContext()

STYLE = """
:root { --ink: #1d232b; --muted: #5c6773; --line: #d8dee4; --bg: #f6f8fa; --accent: #0b5fbf; --warn: #a4330f; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); }
header { background: #17324d; color: #fff; padding: 10px 24px; display: flex; gap: 24px; align-items: baseline; }
header strong { font-size: 16px; }
header nav a { color: #cfe3ff; margin-right: 16px; text-decoration: none; }
header nav a.on { color: #fff; font-weight: 600; border-bottom: 2px solid #fff; }
main { padding: 16px 24px 40px; max-width: 1240px; }
h1 { font-size: 20px; margin: 4px 0 12px; } h2 { font-size: 16px; margin: 22px 0 8px; }
a { color: var(--accent); }
table { border-collapse: collapse; width: 100%; margin: 6px 0 12px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg); font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
pre { background: var(--bg); border: 1px solid var(--line); padding: 10px; overflow-x: auto; white-space: pre-wrap;
      word-break: break-word; max-height: 520px; overflow-y: auto; }
form.filters { display: flex; flex-wrap: wrap; gap: 10px 16px; align-items: end; background: var(--bg);
               border: 1px solid var(--line); padding: 10px; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
form.filters input, form.filters select { font: inherit; padding: 3px 6px; min-width: 120px; }
button { font: inherit; padding: 4px 14px; }
meter { width: 180px; height: 14px; vertical-align: middle; }
.nowrap { white-space: nowrap; }
.badge.outcome-loaded { background: #dcf3e3; }
.badge.outcome-skipped, .badge.outcome-missing-optional { background: #ececec; }
.badge.outcome-missing-required { background: #fbd9d3; }
.muted { color: var(--muted); } .warn { color: var(--warn); font-weight: 600; }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px; background: #e6edf5; }
.state-active { background: #dcf3e3; } .state-stale { background: #fff1c2; } .state-revoked { background: #fbd9d3; }
.state-superseded { background: #e5e1f5; } .state-expired { background: #e9e9e9; }
.footer-line { margin-top: 6px; padding: 6px 10px; border-left: 3px solid var(--accent); background: var(--bg); }
ol.timeline { list-style: none; padding-left: 0; border-left: 3px solid var(--line); margin-left: 8px; }
ol.timeline > li { position: relative; padding: 2px 0 12px 18px; }
ol.timeline > li::before { content: ""; position: absolute; left: -8px; top: 6px; width: 12px; height: 12px;
                         border-radius: 50%; background: var(--accent); }
.chain { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; }
.chain .link { border: 1px solid var(--line); border-radius: 6px; padding: 4px 8px; background: #fff; }
.chain .this { border: 2px solid var(--accent); font-weight: 600; }
.frame { border: 1px solid var(--line); border-left: 4px solid var(--accent); padding: 8px 12px; margin: 8px 0; }
.frame.alert { border-left-color: var(--warn); }
.pager { margin: 8px 0; display: flex; gap: 16px; align-items: center; }
svg text { font: 12px system-ui, sans-serif; fill: var(--ink); }
details summary { cursor: pointer; color: var(--accent); }
pre.diff .add { background: #dcf3e3; display: block; } pre.diff .del { background: #fbd9d3; display: block; }
pre.diff .hunk { color: var(--muted); display: block; } pre.diff .ctx { display: block; }
.change-added { background: #dcf3e3; } .change-changed { background: #fff1c2; } .change-removed { background: #fbd9d3; }
.change-archived { background: #e5e1f5; } .change-forgotten { background: #e9e9e9; }
h3.day { font-size: 14px; margin: 18px 0 4px; border-bottom: 1px solid var(--line); }
ul.activity { list-style: none; padding-left: 0; margin: 0; } ul.activity li { padding: 3px 0; }
"""


# What the viewer has for an argument or a verb of the library (the rest is the command line's).
_SAID = {"include_all": "the \u201csearch every state\u201d box", "limit": "the page (\u201cnext \u2192\u201d)"}
_PAGES = {"recall": "the Ledger page", "expand": "each note's own page", "read": "the Context pack page"}
_FIELDS = {"paths": "path", "tags": "tag", "kinds": "kind", "states": "state", "areas": "area",
           "provenances": "provenance", "task": "task", "query": "q", "page": "page"}


class WebTerms(Terms):
    """A library error or hint as a page says it: each Memory argument by the form field that sets it,
    a verb by the page that shows it (the rest is the command line's: the viewer changes nothing)."""

    def name(self, field: str) -> str:
        return _SAID.get(field) or f"the \u201c{_FIELDS.get(field, field)}\u201d field"

    def with_value(self, field: str) -> str:
        return self.name(field)

    def setting(self, field: str, value: str | None) -> str:
        return f"tick {self.name(field)}" if value is None else f"{self.name(field)} set to {value}"

    def verb(self, name: str) -> str:
        return _PAGES.get(name) or f"`memory-custodian {name.replace('_', '-')}`"

    def call(self, name: str, settings: list[tuple[str, str | None]]) -> str:
        # a placeholder (ID, PATH) is what the page asks for itself
        given = ", ".join(self.setting(field, value) for field, value in settings
                          if value is None or not value.isupper())
        return self.verb(name) + (f" ({given})" if given else "")


WEB_TERMS = WebTerms()


def esc(value) -> str:
    """Text as HTML data (safe in element content and in quoted attributes), controls made visible."""
    return html.escape(printable(str(value)), quote=True)


def href(base: str, path: str, params=None) -> str:
    """A link inside the viewer (under `base`, the token prefix when there is one), escaped for an attribute."""
    query = urlencode([(k, v) for k, v in (params or []) if v not in (None, "")])
    return esc(base + quote(path) + ("?" + query if query else ""))


def layout(base: str, active: str, title: str, body: str) -> str:
    nav = "".join(f'<a href="{href(base, path)}"{" class=on" if key == active else ""}>{esc(label)}</a>'
                  for key, path, label in NAV if CONTEXT.tabs is None or key in CONTEXT.tabs or key == active)
    live = (f'<script src="{href(base, "/live.js")}" data-events="{href(base, "/events")}" '
            f'data-stamp="{esc(CONTEXT.stamp)}" defer></script>' if CONTEXT.stamp else "")
    return ("<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
            '<meta name=viewport content="width=device-width, initial-scale=1">'
            f'<title>{esc(title)} · memory-custodian</title><link rel=icon href="data:,">'
            f'<link rel=stylesheet href="{href(base, "/style.css")}">{live}</head>'
            f"<body><header><strong>memory-custodian</strong><nav>{nav}</nav>"
            f'<span class=muted>read-only</span></header><main><h1>{esc(title)}</h1>\n{body}\n</main></body></html>\n')


def table(head, rows, num=()) -> str:
    """A table of already-escaped cells; `num` names the columns (by index) aligned right."""
    ths = "".join(f'<th{" class=num" if i in num else ""}>{h}</th>' for i, h in enumerate(head))
    trs = "".join("<tr>" + "".join(f'<td{" class=num" if i in num else ""}>{c}</td>' for i, c in enumerate(row))
                  + "</tr>" for row in rows)
    return f"<table><thead><tr>{ths}</tr></thead><tbody>{trs}</tbody></table>"


def budget_bar(tokens, budget) -> str:
    """Tokens against a budget as a bar (none without a budget), with the figures beside it."""
    if tokens is None:
        return ""
    if budget is None:
        return f"{tokens} tokens <span class=muted>(unbudgeted)</span>"
    high = max(budget * 0.9, 1)
    return (f'<meter min=0 max="{max(budget, tokens, 1)}" low="{high}" high="{max(budget, 1)}" optimum=0 '
            f'value="{tokens}" title="{tokens} of {budget} tokens"></meter> {tokens} / {budget} tokens'
            + (' <span class=warn>over budget</span>' if tokens > budget else ""))


def bar_chart(items, width=560) -> str:
    """(label, count) pairs as horizontal SVG bars, longest first as given."""
    items = list(items)
    if not items:
        return "<p class=muted>nothing to chart</p>"
    top = max(n for _, n in items) or 1
    row, label_w = 24, 200
    parts = [f'<svg role=img aria-label="chart" width="{width}" height="{row * len(items) + 4}" '
             f'viewBox="0 0 {width} {row * len(items) + 4}" xmlns="http://www.w3.org/2000/svg">']
    for i, (label, n) in enumerate(items):
        y = i * row + 2
        w = max(2, int((width - label_w - 60) * n / top))
        parts.append(f'<text x="0" y="{y + 15}">{esc(label)}</text>'
                     f'<rect x="{label_w}" y="{y + 3}" width="{w}" height="16" fill="#0b5fbf" rx="2"></rect>'
                     f'<text x="{label_w + w + 6}" y="{y + 15}">{n}</text>')
    return "".join(parts) + "</svg>"


def badge(state: str) -> str:
    return f'<span class="badge state-{esc(state)}">{esc(state)}</span>'


def field_value(params: dict, name: str) -> str:
    """The last value of one query parameter, or ""."""
    values = params.get(name) or [""]
    return values[-1]


def field_list(params: dict, name: str) -> list[str]:
    """Every value of a parameter, comma-separated lists split, blanks dropped."""
    return [v.strip() for raw in params.get(name) or [] for v in raw.split(",") if v.strip()]


def outcome(disposition: str) -> str:
    """What became of a module considered for the pack (loaded, skipped, missing-…) as a badge."""
    return f'<span class="badge outcome-{esc(disposition)}">{esc(disposition)}</span>'


def checkbox(name: str, label: str, checked: bool) -> str:
    return f'<label>{esc(label)}<input type=checkbox name={name} value=1{" checked" if checked else ""}></label>'


def select(name: str, label: str, choices, chosen: str) -> str:
    opts = "".join(f'<option value="{esc(c)}"{" selected" if c == chosen else ""}>{esc(c or "any")}</option>'
                   for c in ("", *choices))
    return f"<label>{esc(label)}<select name={name}>{opts}</select></label>"


def text_input(name: str, label: str, value: str, placeholder: str = "") -> str:
    return (f'<label>{esc(label)}<input name={name} value="{esc(value)}" placeholder="{esc(placeholder)}"></label>')
