"""CLI commands of the ledger as text: export (the read-only Markdown mirror) and edit (check-out/check-in)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from . import emit_json, format_option, handle_errors, memory_options, open_memory, warn


def _abs(path):
    # a check-out file typed on the command line means "from here", whatever the project root is
    return None if path is None else str(Path(path).expanduser().absolute())


@click.command()
@memory_options
@click.option("--path", "path", default=None, metavar="FILE",
              help="Where to write, relative to the project root and inside it (default: the configured path, "
                   "else docs/memory/MEMORY.md).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 with a short diff if the file is not up to date.")
@click.option("--enable", is_flag=True,
              help="Keep the mirror rendered after every write (recorded in docs/memory/config.json, committed).")
@click.option("--disable", is_flag=True, help="Stop re-rendering after writes (the file is left as it is).")
@format_option
@handle_errors
def export(project_root, memory_dir, path, check, enable, disable, fmt):
    """Render the ledger to a read-only Markdown mirror (every note, with its state).

    The output is byte-identical for an unchanged ledger on any machine, so `export --check`
    can guard it in CI or a pre-commit hook. Nothing reads the mirror back: change memory with
    `edit`, `remember`, `supersede` or `revoke`.
    """
    from ..errors import InvalidInput

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
        click.echo(f"export mirror disabled in {result['config']} (the file is left as it is)")
    elif check:
        if result["up_to_date"]:
            click.echo(f"{result['path']} is up to date ({result['notes']} notes)")
        else:
            from ..textsafe import printable

            click.echo(printable(result["diff"]), nl=False)  # note text from disk: no raw escapes
    else:
        verb = "wrote" if result["written"] else "unchanged"
        click.echo(f"{verb} {result['path']} ({result['notes']} notes, {result['bytes']} bytes)")
        if enable:
            click.echo(f"mirror enabled in {result['config']}: every write through the CLI now re-renders it")
    if check and not result["up_to_date"]:
        click.echo(f"error: {result['path']} is out of date — run `memory-custodian export`", err=True)
        sys.exit(1)


@click.command()
@memory_options
@click.option("--checkout", "checkout", default=None, metavar="FILE", help="Write the active notes to FILE and stop.")
@click.option("--checkin", "checkin", default=None, metavar="FILE", help="Check FILE back in as ledger events.")
@click.option("--reason", default=None, metavar="R", help="Why removed notes are revoked (and changed ones superseded).")
@format_option
@handle_errors
def edit(project_root, memory_dir, checkout, checkin, reason, fmt):
    """Edit the active notes as Markdown in $EDITOR; the result is checked in as events.

    A changed block becomes a new note superseding the old one, a deleted block a `revoke`
    (needs --reason or a `- reason:` line), a new block a new note. If a note you touched
    changed in the ledger meanwhile, nothing is written. For scripts and agents:
    `edit --checkout FILE`, edit FILE, then `edit --checkin FILE [--reason R]`.
    """
    from ..errors import CustodianError, InvalidInput

    if checkout and checkin:
        raise InvalidInput("give --checkout FILE or --checkin FILE, not both")
    memory = open_memory(project_root, memory_dir)
    if checkout:
        result = memory.edit_checkout(_abs(checkout)).to_dict()
        if fmt == "json":
            emit_json(result)
        else:
            click.echo(f"checked out {result['notes']} notes to {result['path']}; "
                       f"check in with `memory-custodian edit --checkin {checkout}`")
        return
    if checkin:
        _report(memory.edit_checkin(_abs(checkin), reason=reason), fmt)
        return
    import tempfile

    tmp = os.path.join(tempfile.mkdtemp(prefix="memory-edit-"), "notes.md")
    memory.edit_checkout(tmp)
    click.edit(filename=tmp)
    try:
        result = memory.edit_checkin(tmp, reason=reason)
    except CustodianError:
        click.echo(f"your edits are kept in {tmp}; fix them and run `memory-custodian edit --checkin {tmp}`", err=True)
        raise
    os.unlink(tmp)
    os.rmdir(os.path.dirname(tmp))
    _report(result, fmt)


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
            click.echo(f"created  #{row['note']}{where}")
        elif row["action"] == "supersede":
            what = ", ".join(row["changed"]) or "changed"
            click.echo(f"superseded #{row['note']} by #{row['by']}{where}: {what}")
        else:
            click.echo(f"revoked  #{row['note']}{where}: {row['reason']}")
    if result["events"]:
        click.echo(f"checked in: {result['events']} events in one txn ({result['unchanged']} notes unchanged)")
    else:
        click.echo(f"nothing to check in: no changes ({result['unchanged']} notes unchanged)")
