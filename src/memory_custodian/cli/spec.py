"""The vocabulary of the command table: arguments, options, commands, and the options they share.

Plain records and tuples, so that declaring the table (`cli/table.py`) costs no parser import.
"""

from __future__ import annotations

from ..ledger.storage.model import KINDS, PRIORITIES, SCOPES
from ..base.records import Record

class Arg(Record):
    """A positional argument; `many` takes one or more values (a tuple)."""

    FIELDS = ("dest", "metavar", "optional", "many", "type", "help")
    DEFAULTS = {"metavar": None, "optional": False, "many": False, "type": None, "help": ""}


class Opt(Record):
    """An option: `flags` is the long name then any short alias; `repeat` gathers a tuple.

    `type` is None (text), "int", "float" (with `minimum`/`maximum`), "folder" or "file" (a path
    that must not be the other kind when it exists).
    """

    FIELDS = ("flags", "dest", "type", "default", "choices", "repeat", "flag", "required", "metavar", "minimum",
              "maximum", "help")
    DEFAULTS = {"type": None, "default": None, "choices": None, "repeat": False, "flag": False, "required": False,
                "metavar": None, "minimum": None, "maximum": None, "help": ""}


class Command(Record):
    """`handler` is "module:function" under `memory_custodian.cli`, called with one keyword per dest."""

    FIELDS = ("name", "group", "handler", "summary", "example", "params", "description")
    DEFAULTS = {"description": ""}


def opt(flags, dest=None, **fields) -> Opt:
    flags = (flags,) if isinstance(flags, str) else tuple(flags)
    return Opt(flags, dest or flags[0].lstrip("-").replace("-", "_"), **fields)


def flag(name, help, dest=None) -> Opt:
    return opt(name, dest, flag=True, default=False, help=help)


# ---- options several commands share ----------------------------------------------------------

MEMORY = (
    opt("--project-root", type="folder", metavar="DIR",
        help="Project root (default: the nearest ancestor holding docs/memory/manifest.md, else the current "
             "directory)."),
    opt("--memory-dir", metavar="DIR",
        help="Memory folder, relative to the project root; must stay under docs/ (default docs/memory)."),
)
FORMAT = opt("--format", "fmt", choices=("text", "json"), default="text", help="Output format.")
DATA = (FORMAT, *MEMORY)
ACTOR = opt("--actor", choices=("human", "agent"),
            help="Who is acting (default: agent when run inside Claude Code, Codex or Gemini CLI, else human); "
                 "hooks and the MCP server write as agent.")
APPLY = flag("--apply", "Write the plan (default: preview only).", dest="apply_")
PLAN = opt("--plan", "plan_id", metavar="ID", help="With --apply: refuse unless the preview's plan still holds.")
NOTE_ID = Arg("note_id", "ID")
TEXT = Arg("text", help="The note's text (- reads it from stdin).")
REASON = opt("--reason", required=True, help="Why (recorded in the event).")


KEPT_ON_SUPERSEDE = ("kind", "priority", "tags", "paths", "scope")  # as `ledger.api` carries them over


def kept_fields(fields) -> tuple:
    """`NOTE_FIELDS` as `supersede` has them: what it carries over defaults to the replaced note's own."""
    return tuple(f.replace(help=f.help.split(" (")[0].rstrip(".") + " (default: the replaced note's).")
                 if f.dest in KEPT_ON_SUPERSEDE else f for f in fields)


NOTE_FIELDS = (
    opt("--kind", choices=KINDS, help="Kind (default finding)."),
    opt("--priority", choices=PRIORITIES, help="Priority (default medium)."),
    opt("--title", help="Title (default: the first line, at most 80 characters)."),
    opt("--tag", "tags", repeat=True, help="A tag (repeatable)."),
    opt("--path", "paths", repeat=True, metavar="GLOB", help="Anchor to a path or glob (repeatable)."),
    opt("--quote", help="The user's verbatim words this note records."),
    opt("--scope", choices=SCOPES, help="workspace (default) or only the current git branch."),
    opt("--expires", metavar="DATE|DAYS", help="Expiry: a YYYY-MM-DD date or a number of days (tasks default to 30 days)."),
)


def verb(name: str, summary: str, example: str) -> Command:
    """A lifecycle verb: ID --reason R, printing `#id state`."""
    return Command(name, "ledger", "ledger:" + name.replace("-", "_"), summary, example, (NOTE_ID, REASON, ACTOR, *DATA))

