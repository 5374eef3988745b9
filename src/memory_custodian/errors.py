"""The library's errors: one small hierarchy, mapped to exit codes in one place (`exit_code`).

Every error crossing the library boundary is a CustodianError whose message is one line that
names the file (and line, where there is one) and says what to do.
"""

from __future__ import annotations


class CustodianError(Exception):
    """Base class. `exit_code` is what the CLI exits with."""

    exit_code = 2

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        self.message = message
        self.path = path
        self.line = line
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        return (where + self.message).replace("\n", " ")


class InvalidInput(CustodianError):
    """Bad arguments or a bad file handed to us (exit 2)."""


class NotFound(CustodianError):
    """A memory folder, file or note that does not exist (exit 2)."""


class Corrupt(CustodianError):
    """A memory folder that cannot be read as it stands (exit 2)."""


class Refused(CustodianError):
    """The operation is understood but refused: a secret, an illegal transition, a guard (exit 1)."""

    exit_code = 1


class Conflict(Refused):
    """Refused because something changed underneath (a stale plan, an edit conflict) (exit 1)."""


class ProblemsFound(CustodianError):
    """A check ran and found problems; the report has already been produced (exit 1)."""

    exit_code = 1


def unreadable(path, exc: OSError, what: str = "file") -> Corrupt:
    """An OSError met while reading the memory folder, as one line naming the path and what to do."""
    import errno

    path = str(path if path is not None else exc.filename or "memory folder")
    if exc.errno == errno.ELOOP:
        return Corrupt(f"is a symlink loop; replace it with a real {what}", path=path)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return Corrupt(f"cannot be read ({exc.strerror}); fix its permissions", path=path)
    if exc.errno == errno.EISDIR:
        return Corrupt("is a folder where a file is expected; replace it with a file", path=path)
    return Corrupt(f"cannot be read ({exc.strerror or exc}); fix or remove it and run the command again", path=path)
