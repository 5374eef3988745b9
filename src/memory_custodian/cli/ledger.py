"""Ledger commands: remember, the lifecycle verbs, recall, expand, history, reindex, doctor."""

from __future__ import annotations

import sys

from ..textsafe import printable
from .output import echo, emit_json, open_memory, warn


def _text_arg(text: str) -> str:
    from ..ledger.inputs import read_stdin_text

    return read_stdin_text() if text == "-" else text


def _emit_note(note, fmt: str, text: str) -> None:
    if note.mirror_warning:
        warn(note.mirror_warning)
    if fmt == "json":
        emit_json(note.to_dict())
    else:
        echo(text)


def remember(text, kind, priority, title, tags, paths, quote, scope, expires, supersedes, actor, fmt, project_root,
             memory_dir):
    memory = open_memory(project_root, memory_dir)
    note = memory.remember(_text_arg(text), kind=kind or "finding", priority=priority or "medium", title=title,
                           tags=tags, paths=paths, quote=quote, scope=scope or "workspace", expires=expires,
                           supersedes=supersedes, actor=actor)
    _emit_note(note, fmt, note.id)


def supersede(note_id, text, reason, kind, priority, title, tags, paths, quote, scope, expires, actor, fmt,
              project_root, memory_dir):
    memory = open_memory(project_root, memory_dir)
    note = memory.supersede(note_id, _text_arg(text), reason=reason, actor=actor, kind=kind, priority=priority,
                            title=title, tags=tags, paths=paths, quote=quote, scope=scope, expires=expires)
    _emit_note(note, fmt, note.id)


def _verb(method: str):
    """The handler of a lifecycle verb: the note's id and its state as of now."""

    def command(note_id, reason, actor, fmt, project_root, memory_dir):
        memory = open_memory(project_root, memory_dir)
        note = getattr(memory, method)(note_id, reason=reason, actor=actor)
        if note.mirror_warning:
            warn(note.mirror_warning)
        from ..ledger.ids import now_iso

        state = note.state_at(now_iso())  # as of now: an `expires` that has passed makes it expired
        if fmt == "json":
            emit_json({**note.to_dict(), "state": state})
        else:
            echo(f"#{note.id} {state}")

    return command


revoke = _verb("revoke")
flag_stale = _verb("flag_stale")
reinstate = _verb("reinstate")
expire = _verb("expire")


def promote(note_id, to, actor, fmt, project_root, memory_dir):
    memory = open_memory(project_root, memory_dir)
    note = memory.promote(note_id, to=to, actor=actor)
    _emit_note(note, fmt, f"#{note.id} {note.provenance}")


def recall(query, kinds, tags, paths, states, limit, include_all, fmt, project_root, memory_dir):
    memory = open_memory(project_root, memory_dir)
    result = memory.recall(query, kinds=kinds, tags=tags, paths=paths, states=states, limit=limit,
                           include_all=include_all, ids=fmt == "json")
    if fmt == "json":
        emit_json(result.to_dict())
    else:
        echo(as_data(result.render_text()), nl=False)  # note text from disk, fenced as data


def as_data(text: str) -> str:
    from ..agents.fence import as_data as fenced

    return fenced(text)


def expand(ids, fmt, project_root, memory_dir):
    memory = open_memory(project_root, memory_dir)
    items = memory.expand(list(ids)).notes
    if fmt == "json":
        emit_json({"notes": items})
    else:
        echo(as_data("\n".join(item["text"] for item in items)), nl=False)


def history(note_id, fmt, project_root, memory_dir):
    memory = open_memory(project_root, memory_dir)
    events = memory.history(note_id).events
    if fmt == "json":
        emit_json({"events": events})
        return
    for ev in events:
        detail = ev.get("reason") or ""
        if ev["op"] == "create":
            detail = f"{ev['kind']}/{ev['priority']} · {ev['title']}"
        elif ev["op"] == "supersede":
            detail = f"by #{ev['by']}: {detail}"
        elif ev["op"] == "promote":
            detail = f"to {ev['to']}"
        echo(printable(f"{ev['at']}  {ev['op']:<10} {ev['actor']:<6} {detail}".rstrip()))


def reindex(fmt, project_root, memory_dir):
    memory = open_memory(project_root, memory_dir)
    if sys.stderr.isatty() and fmt == "text":
        from .progress import Progress

        with Progress("reindexing") as bar:
            result = memory.reindex(progress=bar.show).to_dict()
    else:
        result = memory.reindex().to_dict()
    if fmt == "json":
        emit_json(result)
    else:
        echo(f"indexed {result['notes']} notes from {result['events']} events in {result['shards']} shard(s)")


def doctor(repair, fmt, project_root, memory_dir):
    from ..errors import ProblemsFound

    memory = open_memory(project_root, memory_dir)
    report = memory.doctor(repair=repair).to_dict()
    if fmt == "json":
        emit_json(report)
    else:
        echo(f"{report['shards']} shard(s), {report['events']} events, {report['notes']} notes")
        for p in report["problems"]:
            echo(printable(f"{p['where'] or 'ledger'}: {p['code']}: {p['message']}"))
        if report.get("repaired"):
            r = report["repaired"]
            echo(f"repaired: {r['trimmed_tails']} torn tail(s) trimmed, {r['removed_lines']} line(s) removed; "
                 f"backups in {', '.join(r['backups'])}")
        if report.get("index"):
            idx = report["index"]
            echo(idx["error"] if "error" in idx else f"index rebuilt: {idx['notes']} notes")
        for name in report.get("trimmed_earlier", []):
            warn(f"a writer trimmed a torn line earlier; fragment kept in .cache/torn/{name}")
        for text in report.get("warnings", []):
            warn(printable(text))
        echo("ok" if report["ok"] else f"{len(report['remaining'])} problem(s) remain")
    if not report["ok"]:
        # advertise --repair only for what it can fix; the rest needs a person
        if report.get("repairable") and not repair:
            hint = " — run `memory-custodian doctor --repair`"
        else:
            hint = " — `doctor --repair` cannot fix these; each problem says what to do"
        raise ProblemsFound(f"{len(report['remaining'])} ledger problem(s) found{hint}")
