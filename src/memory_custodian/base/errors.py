"""The library's errors: one small hierarchy, mapped to exit codes in one place (`exit_code`).

Every error crossing the library boundary is a CustodianError whose message is one line that
names the file (and line, where there is one) and says what to do.
"""

from __future__ import annotations

import errno

from .limits import SHOWN_CHARS

SHOWN = SHOWN_CHARS
PATH_SHOWN = 255  # a path longer than one file name can be is shown by its ends
class Terms:
    """How a message names a Memory argument and the verbs a note allows; each adapter says it its
    own way (the CLI by its flags, MCP by its tool arguments and tools), the library by its own names.

    The same terms word what an error asks and what a result hints at: a message or a result's line
    writes `{verb:NAME}` for a verb to try (`{verb:NAME FIELD=VALUE FIELD}` with what it is given), `{field:NAME}`
    for an argument and `{set:FIELD=VALUE}` or `{set:FIELD}` (a switch) for a setting, and the caller's
    terms say each (`phrase`). A library result never names a command-line flag or command."""

    def name(self, field: str) -> str:
        return field

    def with_value(self, field: str) -> str:
        return f"{field}=..."

    def ops(self, ops) -> str:
        return ", ".join(ops) or "nothing (it is gone)"

    def verb(self, name: str) -> str:
        """A verb to suggest (`{verb:recall}` in a message): the Memory method."""
        return f"`Memory.{name}`"

    def setting(self, field: str, value: str | None) -> str:
        """An argument set to `value` (None: a switch turned on), as the Memory keyword."""
        return f"{field}=True" if value is None else f"{field}={value}"

    def call(self, name: str, settings: list[tuple[str, str | None]]) -> str:
        """A verb given some arguments (`{verb:recall kinds=directive include_all}`): the Memory call."""
        return f"`Memory.{name}({', '.join(self.setting(field, value) for field, value in settings)})`"

    def phrase(self, text: str) -> str:
        """`text` with each `{verb:...}`, `{field:...}` and `{set:...}` said in these terms."""
        for opening, say in (("{verb:", self._call), ("{field:", self.name), ("{set:", self._setting)):
            start = text.find(opening)
            while start >= 0 and text.find("}", start) > 0:
                end = text.find("}", start)
                said = say(text[start + len(opening):end])
                text = text[:start] + said + text[end + 1:]
                start = text.find(opening, start + len(said))
        return text

    def _call(self, spec: str) -> str:
        name, *given = spec.split() or [""]
        return self.call(name, [_setting_of(word) for word in given]) if given else self.verb(name)

    def _setting(self, spec: str) -> str:
        return self.setting(*_setting_of(spec))


def _setting_of(word: str) -> tuple[str, str | None]:
    field, eq, value = word.partition("=")
    return field, (value if eq else None)


LIBRARY_TERMS = Terms()


class CustodianError(Exception):
    """Base class. `exit_code` is what the CLI exits with.

    `field` names the Memory argument at fault ("reason", "title", "expires", "paths"); the
    message writes it as `{field}` (or `{field=}` where a value is asked for), and `one_line(terms)`
    says it the way the caller knows it. A refused transition carries the note's `state` and the
    `allowed` verbs, written `{allowed}`; a verb to try next is written `{verb:NAME}`, and another
    argument the message names `{field:NAME}`.
    """

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None, state: str | None = None, allowed: tuple | None = None):
        self.template = message
        self.path = path
        self.line = line
        self.field = field
        self.state = state
        self.allowed = allowed
        self.message = self.phrased(LIBRARY_TERMS)
        super().__init__(self.one_line())

    def phrased(self, terms: Terms) -> str:
        """The message (without its place) as `terms` say it."""
        text = self.template
        if self.field is not None:
            text = text.replace("{field=}", terms.with_value(self.field)).replace("{field}", terms.name(self.field))
        if self.allowed is not None:
            text = text.replace("{allowed}", terms.ops(self.allowed))
        return terms.phrase(text)

    def one_line(self, terms: Terms | None = None) -> str:
        where = ""
        if self.path is not None:
            path = str(self.path)
            if len(path) > PATH_SHOWN:  # an error never echoes unbounded input: a path as long as a page is cut
                path = f"{path[:SHOWN]}…{path[-SHOWN:]} ({len(path)} characters)"
            where = f"{path}:{self.line}: " if self.line is not None else f"{path}: "
        message = self.message if terms is None else self.phrased(terms)
        return (where + message).replace("\n", " ")

    def at(self, *, path: str | None = None, line: int | None = None) -> CustodianError:
        """The same error placed in a file (and line), keeping its field and state."""
        return type(self)(self.template, path=path, line=line, field=self.field, state=self.state,
                          allowed=self.allowed)

    def after(self, done: str, advice: tuple[str, str] = ("", "")) -> CustodianError:
        """The same error, told after `done`, what the command did first (its "nothing was changed"
        becomes "nothing else was changed", which is what is true then); `advice` (old, new) swaps
        what to do next for what fits the caller."""
        text = self.template.replace("nothing was changed", "nothing else was changed")
        if advice[0]:
            text = text.replace(*advice)
        return type(self)(f"{done}; then: {text}", path=self.path, line=self.line, field=self.field,
                          state=self.state, allowed=self.allowed)


class InvalidInput(CustodianError):
    """Bad arguments or a bad file handed to us (exit 2)."""


class NotFound(CustodianError):
    """A memory folder, file or note that does not exist (exit 2)."""


class Corrupt(CustodianError):
    """A memory folder that cannot be read as it stands (exit 2)."""


class SecretFound(InvalidInput):
    """The input holds what looks like a credential: bad input, refused before anything is written (exit 2)."""


class Refused(CustodianError):
    """The operation is understood but refused: an illegal transition, a guard (exit 1)."""

    exit_code = 1


class Conflict(Refused):
    """Refused because something changed underneath (a stale plan, an edit conflict) (exit 1)."""


class PartlyWritten(Refused):
    """A write of several files stopped part-way (a full disk): the message names what was written and
    what finishes the rest; never "nothing was changed" (exit 1, as every refused write)."""


class ProblemsFound(CustodianError):
    """A check ran and found problems; the report has already been produced (exit 1)."""

    exit_code = 1


def unreadable(path, exc: OSError, what: str = "file") -> Corrupt:
    """An OSError met while reading the memory folder, as one line naming the path and what to do."""
    path = str(path if path is not None else exc.filename or "memory folder")
    if exc.errno == errno.ELOOP:
        return Corrupt(f"is a symlink loop; replace it with a real {what}", path=path)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return Corrupt(f"cannot be read ({exc.strerror}); fix its permissions", path=path)
    if exc.errno == errno.EISDIR:
        return Corrupt("is a folder where a file is expected; replace it with a file", path=path)
    return Corrupt(f"cannot be read ({exc.strerror or exc}); fix or remove it and run the command again", path=path)


def short_line(exc: BaseException, limit: int = 240) -> str:
    """Any error as one short line, for a problem named inside a context pack (the hooks fail open)."""
    if isinstance(exc, CustodianError):
        text = exc.one_line()
    elif isinstance(exc, OSError) and exc.strerror:  # not `OSError: [Errno 30] ...`: what failed, on which file
        where = f" {exc.filename}" if exc.filename else ""
        text = f"could not use{where}: {exc.strerror.lower()}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
