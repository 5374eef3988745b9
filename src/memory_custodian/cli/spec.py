"""The vocabulary of the command table: arguments, options, commands, and the options they share.

Plain records and tuples, so that declaring the table (`cli/table.py`) costs no parser import.
"""

from __future__ import annotations

from ..base.records import Record
from ..ledger.params import KEPT_DEFAULT, KEPT_ON_SUPERSEDE, NOTE, NOTE_INPUTS, RECALL, RECALL_INPUTS, Input, settable
from ..ledger.storage.model import REQUIRED


class Arg(Record):
    """A positional argument; `many` takes one or more values (a tuple)."""

    dest: str
    metavar: str | None = None
    optional: bool = False
    many: bool = False
    type: str | None = None
    help: str = ""


class Opt(Record):
    """An option: `flags` is the long name then any short alias; `repeat` gathers a tuple.

    `type` is None (text), "int", "float" (with `minimum`/`maximum`), "folder" or "file" (a path
    that must not be the other kind when it exists).
    """

    flags: tuple[str, ...]
    dest: str
    type: str | None = None
    default: bool | int | str | None = None
    choices: tuple[str, ...] | None = None
    repeat: bool = False
    flag: bool = False
    required: bool = False
    metavar: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    help: str = ""


class Command(Record):
    """`handler` is "module:function" under `memory_custodian.cli`, called with one keyword per dest."""

    name: str
    group: str
    handler: str
    summary: str
    example: str
    params: tuple[Arg | Opt, ...]
    description: str = ""


def opt(flags, dest=None, **fields) -> Opt:
    flags = (flags,) if isinstance(flags, str) else tuple(flags)
    return Opt(flags, dest or flags[0].lstrip("-").replace("-", "_"), **fields)


def flag(name, help, dest=None) -> Opt:
    return opt(name, dest, flag=True, default=False, help=help)


# ---- options several commands share ----------------------------------------------------------

MEMORY = (
    opt("--project-root", type="folder", metavar="DIR",
        help="Project root (default: the nearest ancestor holding docs/memory/manifest.md within this git "
             "repository, else the current directory)."),
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
REASON = opt("--reason", required=True, help="Why (recorded in the event).")


# ---- the inputs of a note and of a recall, as declared in `ledger/params.py` -----------------------

# The command line's own words for a declared input: its flag (a many-valued input by its singular,
# given once per value) and, where it helps, the form of its value.
FLAGS = {"include_all": "--all"}
METAVARS = {"paths": "GLOB", "expires": "DATE|DAYS"}


def flag_of(name: str, many: bool = False) -> str:
    """The option that sets the library argument `name`."""
    return FLAGS.get(name) or "--" + (name[:-1] if many else name).replace("_", "-")


def option(inp: Input) -> Opt:
    """The option of a declared input; argparse's help adds a default that is a value."""
    text = inp.help + (" (repeatable)" if inp.many else "") + "."
    if inp.type == "bool":
        return flag(flag_of(inp.name), text, dest=inp.name)
    scalar = inp.default is not REQUIRED and not isinstance(inp.default, tuple)
    if inp.default_words is not None:
        text += f" (default: {inp.default_words})"
    return opt(flag_of(inp.name, inp.many), inp.name, type="int" if inp.type == "int" else None,
               default=inp.default if scalar else None, choices=inp.choices, repeat=inp.many, minimum=inp.minimum,
               metavar=METAVARS.get(inp.name), help=text)


def kept_fields(fields) -> tuple:
    """`NOTE_FIELDS` as `supersede` has them: what it carries over defaults to the replaced note's own."""
    return tuple(f.replace(default=None, help=f"{f.help} (default: {KEPT_DEFAULT})")
                 if f.dest in KEPT_ON_SUPERSEDE else f for f in fields)


# what anyone may set: the actor is known only once the command runs (`--actor`, or the host it runs in)
NOTE_FIELDS = tuple(option(i) for i in settable(NOTE_INPUTS, person=False) if i.name != "text")
TEXT = Arg("text", help=NOTE["text"].help + " (- reads it from stdin).")
QUERY = Arg("query", "QUERY", optional=True, help=RECALL["query"].help + ".")
RECALL_OPTIONS = tuple(option(i) for i in RECALL_INPUTS if i.name != "query")


def verb(name: str, summary: str, example: str) -> Command:
    """A lifecycle verb: ID --reason R, printing `#id state`."""
    return Command(name, "ledger", "ledger:" + name.replace("-", "_"), summary, example, (NOTE_ID, REASON, ACTOR, *DATA))

