"""Ledger commands: remember, the lifecycle verbs, recall, expand, history, reindex, doctor."""

from __future__ import annotations

import sys

from ..base.errors import CustodianError, ProblemsFound, short_line
from ..base.project import require_memory_dir
from ..base.textsafe import printable
from ..ledger.storage.ids import now_iso
from ..ledger.storage.inputs import read_stdin_text
from .output import echo, emit_json, open_memory, warn
from .terms import CLI_TERMS


def _text_arg(text: str) -> str:
    return read_stdin_text() if text == "-" else text


def _emit_note(note, fmt: str, text: str, *, written: bool = False) -> None:
    """A note a command wrote or changed; `written` (remember, supersede): it says whether a quote was refused."""
    if note.mirror_warning:
        warn(note.mirror_warning)
    if written and note.quote_refused:
        warn(f"{note.quote_refused}; the note was stored at {note.provenance} provenance")
    if fmt == "json":
        emit_json({**note.to_dict(), "quote_refused": note.quote_refused} if written else note.to_dict())
    else:
        echo(text)


def remember(text, supersedes, actor, fmt, project_root, memory_dir, **note):
    """`note`: the note's declared inputs (`ledger.params.NOTE_INPUTS`), as the table's options give them."""
    memory = open_memory(project_root, memory_dir)
    made = memory.remember(_text_arg(text), supersedes=supersedes, actor=actor, **note)
    _emit_note(made, fmt, made.id, written=True)


def supersede(note_id, text, reason, actor, fmt, project_root, memory_dir, **note):
    memory = open_memory(project_root, memory_dir)
    made = memory.supersede(note_id, _text_arg(text), reason=reason, actor=actor, **note)
    _emit_note(made, fmt, made.id, written=True)


def _verb(method: str):
    """The handler of a lifecycle verb: the note's id and its state as of now."""

    def command(note_id, reason, actor, fmt, project_root, memory_dir):
        memory = open_memory(project_root, memory_dir)
        note = getattr(memory, method)(note_id, reason=reason, actor=actor)
        if note.mirror_warning:
            warn(note.mirror_warning)

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


def recall(query, fmt, project_root, memory_dir, **filters):
    """`filters`: the recall's declared inputs (`ledger.params.RECALL_INPUTS`)."""
    memory = open_memory(project_root, memory_dir)
    result = memory.recall(query, ids=fmt == "json", caller="cli", **filters)
    _usage_warning(result)
    if fmt == "json":
        emit_json(result.to_dict(CLI_TERMS))
    else:
        echo(as_data(result.render_text(CLI_TERMS)), nl=False)  # note text from disk, fenced as data


def as_data(text: str) -> str:
    from ..base.fence import as_data as fenced

    return fenced(text)


def _usage_warning(result) -> None:
    if result.usage_warning:
        sys.stderr.write(result.usage_warning + "\n")


def expand(ids, fmt, project_root, memory_dir):
    memory = open_memory(project_root, memory_dir)
    expansion = memory.expand(list(ids), caller="cli")
    _usage_warning(expansion)
    items = expansion.notes
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
    lines = []
    for ev in events:
        detail = ev.get("reason") or ""
        if ev["op"] == "create":
            detail = f"{ev['kind']}/{ev['priority']} · {ev['title']}"
        elif ev["op"] == "supersede":
            detail = f"by #{ev['by']}: {detail}"
        elif ev["op"] == "promote":
            detail = f"to {ev['to']}"
        lines.append(f"{ev['at']}  {ev['op']:<10} {ev['actor']:<6} {detail}".rstrip())
    # reasons and titles are whoever wrote them (an agent, a merged pull request): data, as MCP's history is
    echo(as_data("\n".join(lines)), nl=False)


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


def doctor(repair, yes, ledger_only, fmt, project_root, memory_dir):
    memory = open_memory(project_root, memory_dir)
    require_memory_dir(memory.memory_dir_str)  # outside a project: one line saying so, in this command's words
    report = _ledger_report(memory, repair, yes)
    setup = [] if ledger_only else [f.to_dict() for f in _setup_findings(memory)]
    failed = [f for f in setup if not f["ok"]]
    report["setup"] = setup
    from ..session.adoption import summary_line

    adoption = None if ledger_only else summary_line(memory)
    if adoption:
        report["adoption"] = adoption
    if fmt == "json":
        emit_json({**report, "ok": report["ok"] and not failed})
    else:
        _doctor_text(report, setup)
    if failed and report["ok"]:
        raise ProblemsFound(f"{len(failed)} setup problem(s) found — each FAIL line says its fix")
    if not report["ok"]:
        # advertise --repair only for what it can fix; the rest needs a person
        if report.get("repairable") and not repair:
            hint = " — run `memory-custodian doctor --repair`"
        else:
            hint = " — `doctor --repair` cannot fix these; each problem says what to do"
        raise ProblemsFound(f"{len(report['remaining'])} ledger problem(s) found{hint}")


def _setup_findings(memory) -> list:
    """The library's setup findings, then each wired host's (running a host's hooks is an adapter's job)."""
    from ..agents.host_doctor import check_hosts
    from ..setup.setup_doctor import guard

    return [*memory.diagnose(), *guard("hosts", check_hosts, memory)]


def _ledger_report(memory, repair: bool, yes: bool) -> dict:
    """The ledger's own doctor report; a ledger that cannot even be opened is one problem, and the
    setup checks still run."""
    try:
        return memory.doctor(repair=repair, yes=yes).to_dict()
    except (CustodianError, OSError) as exc:
        problem = {"code": "ledger-unreadable", "message": short_line(exc), "where": None}
        return {"shards": 0, "events": 0, "notes": 0, "problems": [problem], "remaining": [problem], "ok": False,
                "repairable": False, "repaired": None, "warnings": [], "trimmed_earlier": []}


def _doctor_text(report: dict, setup: list) -> None:
    echo(f"{report['shards']} shard(s), {report['events']} events, {report['notes']} notes")
    for p in report["problems"]:
        echo(printable(f"{p['where'] or 'ledger'}: {p['code']}: {p['message']}"))
    if report.get("repaired"):
        r = report["repaired"]
        kept = f"; backups in {', '.join(r['backups'])}" if r["backups"] else ""
        echo(f"repaired: {r['trimmed_tails']} torn tail(s) trimmed, {r['removed_lines']} line(s) removed{kept}")
    if report.get("index"):
        idx = report["index"]
        echo(idx["error"] if "error" in idx else f"index rebuilt: {idx['notes']} notes")
    for name in report.get("trimmed_earlier", []):
        warn(f"a writer trimmed a torn line earlier; fragment kept in .cache/torn/{name}")
    for text in report.get("warnings", []):
        warn(printable(text))
    from ..setup.setup_doctor import Finding

    for finding in setup:
        echo(printable(Finding(**finding).line()))
    if report.get("adoption"):
        echo(report["adoption"])
    failed = sum(not f["ok"] for f in setup)
    echo("ok" if report["ok"] and not failed else
         f"{len(report['remaining'])} ledger problem(s), {failed} setup problem(s) remain")
