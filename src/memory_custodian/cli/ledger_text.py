"""CLI commands of the ledger as text: export (the read-only Markdown mirror) and edit (check-out/check-in)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile

from ..base.errors import CustodianError, InvalidInput
from ..base.textsafe import printable
from .output import Exit, echo, emit_json, open_memory, warn


def _abs(path):
    # a check-out file typed on the command line means "from here", whatever the project root is
    return None if path is None else os.path.abspath(os.path.expanduser(path))



def export(project_root, memory_dir, path, check, enable, disable, fmt):
    if sum(bool(x) for x in (check, enable, disable)) > 1:
        raise InvalidInput("give only one of --check, --enable, --disable")
    memory = open_memory(project_root, memory_dir)
    if disable:
        result = memory.export_disable().to_dict()
    elif enable:
        result = memory.export_enable(path=path).to_dict()
    else:
        result = memory.export(path=path, check=check).to_dict()
    if fmt == "json":
        emit_json(result)
    elif disable:
        echo(f"export mirror disabled in {result['config']} (the file is left as it is)")
    elif check:
        if result["up_to_date"]:
            echo(f"{result['path']} is up to date ({result['notes']} notes)")
        else:
            echo(printable(result["diff"]), nl=False)  # note text from disk: no raw escapes
    else:
        verb = "wrote" if result["written"] else "unchanged"
        echo(f"{verb} {result['path']} ({result['notes']} notes, {result['bytes']} bytes)")
        if enable:
            echo(f"mirror enabled in {result['config']}: every write through the CLI now re-renders it")
    if check and not result["up_to_date"]:
        raise Exit(f"{result['path']} is out of date — run `memory-custodian export`", 1)


def edit(project_root, memory_dir, checkout, checkin, reason, actor, fmt):
    if checkout and checkin:
        raise InvalidInput("give --checkout FILE or --checkin FILE, not both")
    memory = open_memory(project_root, memory_dir)
    if checkout:
        result = memory.edit_checkout(_abs(checkout)).to_dict()
        if fmt == "json":
            emit_json(result)
        else:
            echo(f"checked out {result['notes']} notes to {result['path']}; "
                       f"check in with `memory-custodian edit --checkin {checkout}`")
        return
    if checkin:
        _report(memory.edit_checkin(_abs(checkin), reason=reason, actor=actor), fmt)
        return

    tmp = os.path.join(tempfile.mkdtemp(prefix="memory-edit-"), "notes.md")
    memory.edit_checkout(tmp)
    _edit_file(tmp)
    try:
        result = memory.edit_checkin(tmp, reason=reason, actor=actor)
    except CustodianError:
        sys.stderr.write(f"your edits are kept in {tmp}; fix them and run `memory-custodian edit --checkin {tmp}`\n")
        raise
    os.unlink(tmp)
    os.rmdir(os.path.dirname(tmp))
    _report(result, fmt)


def _edit_file(path: str) -> None:
    """Open PATH in $VISUAL or $EDITOR (else vi) and wait; an editor that fails ends the command."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        code = subprocess.call([*shlex.split(editor), path])
    except OSError as exc:
        raise Exit(f"{editor}: could not start the editor ({exc.strerror or exc}); set $EDITOR", 1) from exc
    if code:
        raise Exit(f"{editor}: the editor exited with code {code}; nothing was checked in (notes in {path})", 1)


def _report(checked_in, fmt: str) -> None:
    if checked_in.mirror_warning:
        warn(checked_in.mirror_warning)
    result = checked_in.to_dict()
    if fmt == "json":
        emit_json(result)
        return
    for row in result["changes"]:
        where = f" (line {row['line']})" if row.get("line") else ""
        if row["action"] == "create":
            echo(f"created  #{row['note']}{where}")
        elif row["action"] == "supersede":
            what = ", ".join(row["changed"]) or "changed"
            echo(f"superseded #{row['note']} by #{row['by']}{where}: {what}")
        else:
            echo(f"revoked  #{row['note']}{where}: {row['reason']}")
    if result["events"]:
        echo(f"checked in: {result['events']} events in one txn ({result['unchanged']} notes unchanged)")
    else:
        echo(f"nothing to check in: no changes ({result['unchanged']} notes unchanged)")
