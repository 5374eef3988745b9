"""Option and argument values from their words: the one set of conversions both parse paths use."""

from __future__ import annotations

import os


class BadValue(ValueError):
    """A word that is the wrong kind of value; `shown` says so in argparse's terms when not None."""

    def __init__(self, shown: str | None = None):
        super().__init__(shown or "")
        self.shown = shown


def _number(param, text):
    try:
        value = int(text) if param.type == "int" else float(text)
    except ValueError:
        raise BadValue() from None  # argparse's own "invalid int value: 'x'"
    low, high = param.minimum, param.maximum
    if (low is not None and value < low) or (high is not None and value > high):
        raise BadValue(f"{text} is not in the range {'' if low is None else f'{low}<='}x"
                       f"{'' if high is None else f'<={high}'}")
    return value


def _path(param, text):
    # a path that exists must be the right kind; one that does not is the command's to explain
    wrong, other = (os.path.isfile, "file") if param.type == "folder" else (os.path.isdir, "folder")
    if wrong(text):
        raise BadValue(f"{text!r} is a {other}, not a {param.type}")
    return text


CONVERT = {"int": _number, "float": _number, "folder": _path, "file": _path}


def convert(param, text: str):
    """The value `text` gives `param` (a table Arg or Opt); BadValue when it is the wrong kind."""
    kind = CONVERT.get(param.type)
    return text if kind is None else kind(param, text)
