"""A host's file as it is on disk: read byte for byte, and the habits (a BOM, CRLF line ends) an
edit by `init --agent` keeps, so a file we touch keeps its own form."""

from __future__ import annotations

from ..base.errors import InvalidInput
from ..base.records import Record


class Form(Record):
    """A file's byte-level habits (a BOM, CRLF line ends) our edits keep; `text`: the file without them."""

    bom: bool
    crlf: bool
    text: str | None

    @classmethod
    def of(cls, raw: str | None) -> Form:
        if raw is None:
            return cls(False, False, None)
        bom = raw.startswith("\ufeff")
        body = raw[1:] if bom else raw
        crlf = "\r\n" in body and "\n" not in body.replace("\r\n", "")
        return cls(bom, crlf, body.replace("\r\n", "\n") if crlf else body)

    def encode(self, text: str | None) -> str | None:
        if text is None:
            return None
        return ("\ufeff" if self.bom else "") + (text.replace("\n", "\r\n") if self.crlf else text)


def read_raw(path: str) -> str | None:
    """A host file exactly as it is (no newline or BOM normalisation: we must give it back intact)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InvalidInput(f"cannot read ({exc.strerror})", path=path) from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"not valid UTF-8 (byte {exc.start}); re-save it as UTF-8, then rerun", path=path) from exc
