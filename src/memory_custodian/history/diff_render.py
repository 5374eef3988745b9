"""A `MemoryDiff` as text for a terminal and as Markdown for a pull-request comment or a CI job summary.

Memory text is data in both: control and bidi characters are shown as escapes, and in Markdown every
character that could start markup (a link, an image, HTML, a table cell, emphasis) is escaped, so a note's
title cannot forge a line of the report or reach the reviewer's page as markup.
"""

from __future__ import annotations

import re

from ..base.textsafe import printable

ENTRY_MARK = {"added": "+", "changed": "~", "removed": "-", "archived": ">", "forgotten": "x"}
NOTE_MARK = {"created": "+", "superseded": "~", "revoked": "-", "flagged-stale": "?", "expired": "-",
             "reinstated": "+", "promoted": "^", "forgotten": "x"}
SECRET = "(its text is not shown)"
_MD = re.compile(r"([\\`*_\[\]|~])")  # what can open markup mid-line; each line starts with our own words


def _one(text) -> str:
    return " ".join(printable(str(text or "")).split())


def _md(text) -> str:
    """Markdown text: `&`, `<` and `>` as entities (no renderer reads HTML in them), the rest backslash-escaped."""
    plain = _one(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD.sub(r"\\\1", plain)


def entry_line(c, quote=_one) -> str:
    if c.change == "forgotten":
        return f"forgotten  an entry {SECRET}"
    where = f" (line {c.line}, {c.tokens} tokens)" if c.line and c.change != "removed" else ""
    to = f" to {quote(c.to)}" if c.to else ""
    return f"{c.change:<10} \u201c{quote(c.heading)}\u201d{to}{where}"


def note_line(c, quote=_one) -> str:
    if c.change == "forgotten":
        return f"forgotten     #{c.note} {SECRET} · {quote(c.actor)}, {c.at[:10]}"
    what = f"{c.kind}/{c.priority}" if c.kind else "note"
    if c.change == "superseded":
        head = (f"superseded    #{c.note} \u201c{quote(c.old_title)}\u201d \u2192 #{c.by} "
                + (f"\u201c{quote(c.title)}\u201d" if c.title else SECRET))
    else:
        head = f"{c.change:<13} #{c.note} {what} \u201c{quote(c.title)}\u201d"
    tail = [quote(c.actor) + (f" ({quote(c.provenance)})" if c.change == "created" and c.provenance else "")]
    if c.reason:
        tail.append(f"reason: {quote(c.reason)}")
    if c.to:
        tail.append(f"to {quote(c.to)}")
    return head + " · " + " · ".join(tail)


def as_text(d) -> str:
    lines = [f"memory diff {d.memory_dir}: {_one(d.base.label)} \u2192 {_one(d.head.label)}"]
    if d.empty:
        lines.append("no change to memory")
    if d.directives or d.tombstones:
        lines.append("")
        lines.append("Directives and tombstones")
        lines += [f"  {NOTE_MARK[c.change]} directive {note_line(c)}" for c in d.directives]
        lines += [f"  {ENTRY_MARK[c.change]} tombstone {entry_line(c)}" for c in d.tombstones]
    files = sorted({c.file for c in d.curated})
    if files:
        lines += ["", "Curated files"]
        for name in files:
            lines.append(f"  {name}")
            lines += [f"    {ENTRY_MARK[c.change]} {entry_line(c)}" for c in d.curated if c.file == name]
    if d.ledger:
        lines += ["", "Ledger notes"]
        lines += [f"  {NOTE_MARK[c.change]} {note_line(c)}" for c in d.ledger]
    if d.flags:
        lines += ["", "For the reviewer"]
        lines += [f"  ! {f.code}: {_one(f.message)}" for f in d.flags]
    counts = d.counts()
    if counts:
        lines += ["", ", ".join(f"{k}: {n}" for k, n in counts.items())]
    return "\n".join(lines) + "\n"


def _md_diff(lines: list[str]) -> list[str]:
    if not lines:
        return []
    body = "\n".join(printable(line).replace("```", "`\u200b``") for line in lines)
    return ["  <details><summary>diff</summary>", "", "  ```diff", *("  " + x for x in body.splitlines()),
            "  ```", "  </details>"]


def as_markdown(d) -> str:
    out = [f"### Memory changes in `{_one(d.memory_dir)}`", "",
           f"{_md(d.base.label)} \u2192 {_md(d.head.label)}", ""]
    if d.empty:
        out.append("No change to memory.")
    if d.flags:
        out += ["#### For the reviewer", ""] + [f"- :warning: **{f.code}**: {_md(f.message)}" for f in d.flags] + [""]
    if d.directives or d.tombstones:
        out += ["#### Directives and tombstones", ""]
        for c in d.directives:
            out += [f"- **directive** {_md(note_line(c, str))}", *_md_diff(c.diff)]
        for c in d.tombstones:
            out += [f"- **tombstone** `{c.file}` {_md(entry_line(c, str))}", *_md_diff(c.diff)]
        out.append("")
    files = sorted({c.file for c in d.curated})
    if files:
        out += ["#### Curated files", ""]
        for name in files:
            out.append(f"- `{_one(name)}`")
            for c in d.curated:
                if c.file == name:
                    out += [f"  - {_md(entry_line(c, str))}", *_md_diff(c.diff)]
        out.append("")
    if d.ledger:
        out += ["#### Ledger notes", ""]
        for c in d.ledger:
            out += [f"- {_md(note_line(c, str))}", *_md_diff(c.diff)]
        out.append("")
    counts = d.counts()
    if counts:
        out.append("<sub>" + _md(", ".join(f"{k}: {n}" for k, n in counts.items())) + "</sub>")
    return "\n".join(out).rstrip("\n") + "\n"
