"""Ledger commands: remember, the lifecycle verbs, recall, expand, history, reindex, doctor."""

from __future__ import annotations

import sys

import click

from ..ledger.model import KINDS, PRIORITIES, RECALL_STATES, SCOPES
from ..textsafe import printable
from . import emit_json, format_option, handle_errors, memory_options, open_memory, warn

ACTOR_OPTION = click.option("--actor", type=click.Choice(["human", "agent"]), default="human", show_default=True,
                            help="Who is acting; hooks and the MCP server write as agent.")


def _text_arg(text: str) -> str:
    from ..ledger.inputs import read_stdin_text

    return read_stdin_text() if text == "-" else text


def _note_fields(fn):
    fn = click.option("--expires", default=None, metavar="DATE|DAYS",
                      help="Expiry: a YYYY-MM-DD date or a number of days (tasks default to 30 days).")(fn)
    fn = click.option("--scope", type=click.Choice(SCOPES), default=None,
                      help="workspace (default) or only the current git branch.")(fn)
    fn = click.option("--quote", default=None, help="The user's verbatim words this note records.")(fn)
    fn = click.option("--path", "paths", multiple=True, metavar="GLOB", help="Anchor to a path or glob (repeatable).")(fn)
    fn = click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")(fn)
    fn = click.option("--title", default=None, help="Title (default: the first line, at most 80 characters).")(fn)
    fn = click.option("--priority", type=click.Choice(PRIORITIES), default=None,
                      help="Priority (default medium).")(fn)
    fn = click.option("--kind", type=click.Choice(KINDS), default=None, help="Kind (default finding).")(fn)
    return fn


def _emit_note(note, fmt: str, text: str) -> None:
    if note.mirror_warning:
        warn(note.mirror_warning)
    if fmt == "json":
        emit_json(note.to_dict())
    else:
        click.echo(text)


@click.command()
@click.argument("text")
@_note_fields
@click.option("--supersedes", default=None, metavar="ID", help="The note this one replaces (one txn).")
@ACTOR_OPTION
@format_option
@memory_options
@handle_errors
def remember(text, kind, priority, title, tags, paths, quote, scope, expires, supersedes, actor, fmt, project_root,
             memory_dir):
    """Record a note in the ledger and print its id (TEXT may be - for stdin)."""
    memory = open_memory(project_root, memory_dir)
    note = memory.remember(_text_arg(text), kind=kind or "finding", priority=priority or "medium", title=title,
                           tags=tags, paths=paths, quote=quote, scope=scope or "workspace", expires=expires,
                           supersedes=supersedes, actor=actor)
    _emit_note(note, fmt, note.id)


@click.command()
@click.argument("note_id", metavar="ID")
@click.argument("text")
@click.option("--reason", required=True, help="Why the old note is replaced.")
@_note_fields
@ACTOR_OPTION
@format_option
@memory_options
@handle_errors
def supersede(note_id, text, reason, kind, priority, title, tags, paths, quote, scope, expires, actor, fmt,
              project_root, memory_dir):
    """Replace note ID by a new note with TEXT (same kind, tags and paths unless given); print the new id."""
    memory = open_memory(project_root, memory_dir)
    note = memory.supersede(note_id, _text_arg(text), reason=reason, actor=actor, kind=kind, priority=priority,
                            title=title, tags=tags, paths=paths, quote=quote, scope=scope, expires=expires)
    _emit_note(note, fmt, note.id)


def _verb(method: str, help_text: str):
    @click.command(help=help_text)
    @click.argument("note_id", metavar="ID")
    @click.option("--reason", required=True, help="Why (recorded in the event).")
    @ACTOR_OPTION
    @format_option
    @memory_options
    @handle_errors
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
            click.echo(f"#{note.id} {state}")

    return command


revoke = _verb("revoke", "Revoke note ID: it was wrong (shown only as a warning from now on).")
flag_stale = _verb("flag_stale", "Flag note ID as possibly out of date (reinstate confirms it).")
reinstate = _verb("reinstate", "Make note ID active again (after stale, superseded, revoked or expired).")
expire = _verb("expire", "Expire note ID now (it no longer applies).")


@click.command()
@click.argument("note_id", metavar="ID")
@click.option("--to", "to", required=True, type=click.Choice(["agent", "user-stated", "human"]),
              help="The new provenance; only a person can promote to human.")
@ACTOR_OPTION
@format_option
@memory_options
@handle_errors
def promote(note_id, to, actor, fmt, project_root, memory_dir):
    """Raise the provenance of note ID (e.g. after a person verified it)."""
    memory = open_memory(project_root, memory_dir)
    note = memory.promote(note_id, to=to, actor=actor)
    _emit_note(note, fmt, f"#{note.id} {note.provenance}")


@click.command()
@click.argument("query", required=False)
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KINDS), help="Only these kinds (repeatable).")
@click.option("--tag", "tags", multiple=True, help="Only notes with any of these tags (repeatable).")
@click.option("--path", "paths", multiple=True, help="Only notes anchored to these paths (repeatable).")
@click.option("--state", "states", multiple=True,
              type=click.Choice(RECALL_STATES),
              help="Only these states (default: active).")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(0), help="How many lines to show.")
@click.option("--all", "include_all", is_flag=True, help="Include every state and scope.")
@format_option
@memory_options
@handle_errors
def recall(query, kinds, tags, paths, states, limit, include_all, fmt, project_root, memory_dir):
    """Ranked index lines of the notes matching QUERY (without QUERY: by priority, then recency)."""
    memory = open_memory(project_root, memory_dir)
    result = memory.recall(query, kinds=kinds, tags=tags, paths=paths, states=states, limit=limit,
                           include_all=include_all, ids=fmt == "json")
    if fmt == "json":
        emit_json(result.to_dict())
    else:
        click.echo(printable(result.render_text()), nl=False)  # note text from disk: no raw escapes


@click.command()
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@format_option
@memory_options
@handle_errors
def expand(ids, fmt, project_root, memory_dir):
    """Full notes, framed by provenance and state, with tags, paths, dates and the supersession chain."""
    memory = open_memory(project_root, memory_dir)
    items = memory.expand(list(ids)).notes
    if fmt == "json":
        emit_json({"notes": items})
    else:
        click.echo(printable("\n".join(item["text"] for item in items)), nl=False)


@click.command()
@click.argument("note_id", metavar="ID")
@format_option
@memory_options
@handle_errors
def history(note_id, fmt, project_root, memory_dir):
    """The events of note ID in order: who, when, why."""
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
        click.echo(printable(f"{ev['at']}  {ev['op']:<10} {ev['actor']:<6} {detail}".rstrip()))


@click.command()
@format_option
@memory_options
@handle_errors
def reindex(fmt, project_root, memory_dir):
    """Rebuild the derived index (.cache/index.sqlite) from the ledger shards."""
    memory = open_memory(project_root, memory_dir)
    if sys.stderr.isatty() and fmt == "text":
        with click.progressbar(length=1000, label="reindexing", file=sys.stderr) as bar:
            state = {"done": 0}

            def progress(fraction):
                step = int(fraction * 1000) - state["done"]
                if step > 0:
                    bar.update(step)
                    state["done"] += step

            result = memory.reindex(progress=progress).to_dict()
    else:
        result = memory.reindex().to_dict()
    if fmt == "json":
        emit_json(result)
    else:
        click.echo(f"indexed {result['notes']} notes from {result['events']} events in {result['shards']} shard(s)")


@click.command()
@click.option("--repair", is_flag=True, help="Remove torn tails and incomplete txns (with a backup) and rebuild the index.")
@format_option
@memory_options
@handle_errors
def doctor(repair, fmt, project_root, memory_dir):
    """Verify every ledger shard: torn lines, incomplete txns, versions, ops, illegal transitions, duplicates."""
    from ..errors import ProblemsFound

    memory = open_memory(project_root, memory_dir)
    report = memory.doctor(repair=repair).to_dict()
    if fmt == "json":
        emit_json(report)
    else:
        click.echo(f"{report['shards']} shard(s), {report['events']} events, {report['notes']} notes")
        for p in report["problems"]:
            click.echo(printable(f"{p['where'] or 'ledger'}: {p['code']}: {p['message']}"))
        if report.get("repaired"):
            r = report["repaired"]
            click.echo(f"repaired: {r['trimmed_tails']} torn tail(s) trimmed, {r['removed_lines']} line(s) removed; "
                       f"backups in {', '.join(r['backups'])}")
        if report.get("index"):
            idx = report["index"]
            click.echo(idx["error"] if "error" in idx else f"index rebuilt: {idx['notes']} notes")
        for name in report.get("trimmed_earlier", []):
            warn(f"a writer trimmed a torn line earlier; fragment kept in .cache/torn/{name}")
        for text in report.get("warnings", []):
            warn(printable(text))
        click.echo("ok" if report["ok"] else f"{len(report['remaining'])} problem(s) remain")
    if not report["ok"]:
        # advertise --repair only for what it can fix; the rest needs a person
        if report.get("repairable") and not repair:
            hint = " — run `memory-custodian doctor --repair`"
        else:
            hint = " — `doctor --repair` cannot fix these; each problem says what to do"
        raise ProblemsFound(f"{len(report['remaining'])} ledger problem(s) found{hint}")
