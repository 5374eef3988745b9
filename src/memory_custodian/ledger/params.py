"""The inputs of a note and of a recall, declared once: name, type, default, help, who may set them.

The CLI's options (`cli/spec.py`) and the MCP tools' parameters and descriptions (`agents/mcp_server.py`)
are both built from these records, so no door can state a default or a filter's meaning the ledger does
not have; a test holds `Memory`'s own signatures to the same defaults. The help is in the library's
words: each door adds its own ("repeatable", "- reads stdin"). Plain records and tuples: the CLI reads
this module on every start-up.
"""

from __future__ import annotations

from ..base.records import Record
from .storage import model
from .storage.model import KINDS, REQUIRED, TITLE_MAX

# `type`: what a value is. "text", "choice" (one of `choices`), "texts" and "choices" (several),
# "int" (from `minimum`), "bool".
TYPES = ("text", "choice", "texts", "choices", "int", "bool")
# `who` may set an input: "anyone", or "person" (provenance: what an agent claims of itself is no evidence).
WHO = ("anyone", "person")


class Input(Record):
    """One input. `default` is what the library uses when the caller gives nothing (REQUIRED: the
    caller must give it); `default_words` says a default that is worked out rather than a value
    ("the first line"); `kept` marks the fields `supersede` carries over from the replaced note."""

    name: str
    type: str
    default: object
    help: str
    choices: tuple[str, ...] | None = None
    who: str = "anyone"
    default_words: str | None = None
    kept: bool = False
    minimum: int | None = None

    @property
    def many(self) -> bool:
        return self.type in ("texts", "choices")

    def default_said(self) -> str | None:
        """The default in words, or None when there is nothing to say (no value, an empty list, off)."""
        if self.default_words is not None:
            return self.default_words
        if self.default is REQUIRED or self.default in (None, (), False):
            return None
        return str(self.default)

    def described(self, default: str | None = None) -> str:
        """The help with its default, as a tool's parameter description; `default` overrides the
        declared one (supersede: "the replaced note's")."""
        said = default if default is not None else self.default_said()
        return f"{self.help} (default: {said})" if said else self.help


def _kinds_help() -> str:
    task_days = model.DEFAULT_LIFETIME_DAYS["task"]
    what = {"directive": "a rule that must always hold (loaded in every context pack)",
            "task": f"a checkpoint of unfinished work (expires after {task_days} days)",
            "gotcha": "a trap tied to files (give its paths)", "finding": "something learned",
            "decision": "a choice and its reason", "reference": "where something is found",
            "operational": "how to build, run or deploy"}
    return "What the note is — " + "; ".join(f"{kind}: {what[kind]}" for kind in KINDS)


NOTE_INPUTS = (
    Input("text", "text", REQUIRED, "The note: what the next session must know, complete on its own"),
    Input("kind", "choice", "finding", _kinds_help(), choices=KINDS, kept=True),
    Input("priority", "choice", "medium", "How much it matters; a higher one ranks first", choices=model.PRIORITIES,
          kept=True),
    Input("title", "text", None, f"One line, at most {TITLE_MAX} characters",
          default_words=f"the text's first line, cut at {TITLE_MAX} characters"),
    Input("tags", "texts", (), "Tags: each one word of letters, digits and ._:/+-", kept=True),
    Input("paths", "texts", (), "Files, folders or globs the note is about, relative to the project root",
          kept=True),
    Input("quote", "text", None, "The user's own words, verbatim, when the note records what they said; from "
          "any writer but a person it is checked against the user's recent messages, and one the user never "
          "wrote is refused (the note keeps the writer's own provenance)"),
    Input("scope", "choice", "workspace", "workspace: seen on every branch; branch: only on the current git branch",
          choices=model.SCOPES, kept=True),
    Input("expires", "text", None, "When the note stops applying: a YYYY-MM-DD date or a number of days",
          default_words=f"never; a task after {model.DEFAULT_LIFETIME_DAYS['task']} days"),
    Input("provenance", "choice", None, "How far the note is to be trusted; only a person records human",
          choices=model.PROVENANCES, who="person",
          default_words="the writer's own: human for a person, agent for an agent; user-stated when a quote binds"),
)

RECALL_INPUTS = (
    Input("query", "text", None, "Words to search for; without any, notes are listed by priority, then recency"),
    Input("kinds", "choices", (), "Only notes of these kinds", choices=KINDS),
    # the SQL matches a note carrying any one of them (`recall_plan._filters`); a test holds the words to it
    Input("tags", "texts", (), "Only notes with any of these tags"),
    Input("paths", "texts", (), "Only notes anchored to these files or folders"),
    Input("states", "choices", (), "Only notes in these states", choices=model.RECALL_STATES,
          default_words=" and ".join(model.RECALL_DEFAULT_STATES)),
    Input("limit", "int", 10, "How many notes to show at most", minimum=0),
    Input("include_all", "bool", False, "Include notes of every state and scope (revoked, superseded, stale, "
          "expired, other branches)"),
)

NOTE = {i.name: i for i in NOTE_INPUTS}
RECALL = {i.name: i for i in RECALL_INPUTS}
# What `supersede` carries over from the note it replaces, unless given.
KEPT_ON_SUPERSEDE = tuple(i.name for i in NOTE_INPUTS if i.kept)
KEPT_DEFAULT = "the replaced note's"


def settable(inputs: tuple, *, person: bool) -> tuple:
    """The inputs a caller may set: everything for a person, what an agent may claim otherwise."""
    return tuple(i for i in inputs if person or i.who == "anyone")
