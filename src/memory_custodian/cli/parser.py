"""The standard library's argparse, built from the command table for the one command being run.

Only what the plain reader (`cli/argv.py`) hands on comes here: help, mistakes and the rarer forms.
A usage error is a `UsageError` carrying one line, never argparse's usage block and exit.
"""

from __future__ import annotations

import argparse

from .output import UsageError
from .table import PROG
from .values import BadValue, convert

# argparse looks every message up in gettext's catalogues (importing locale, ~1.5 ms a run); the
# CLI's own text is English only, so argparse's is taken as written too
argparse._ = str  # type: ignore[attr-defined]  # argparse's own `from gettext import gettext as _`
argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural  # type: ignore[attr-defined]  # as `_`


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message, self.prog[len(PROG) + 1:] or None)


class _Formatter(argparse.HelpFormatter):
    """Wraps each paragraph of a description on its own; indented lines (the example) stay as written."""

    def __init__(self, prog):
        # a fixed width, as the top-level help has; without one argparse imports shutil (bz2, lzma too)
        super().__init__(prog, width=100)

    def _fill_text(self, text, width, indent):
        return "\n\n".join(para if para.startswith("  ") else super(_Formatter, self)._fill_text(para, width, indent)
                           for para in text.split("\n\n"))


def _type(param):
    if param.type is None:
        return None

    def value(text):
        try:
            return convert(param, text)
        except BadValue as exc:
            if exc.shown is None:
                raise ValueError(text) from None  # argparse's own "invalid int value: 'x'"
            raise argparse.ArgumentTypeError(exc.shown) from None

    value.__name__ = param.type
    return value


def _add(parser, param) -> None:
    if not hasattr(param, "flags"):  # a positional
        nargs = "+" if param.many else ("?" if param.optional else None)
        parser.add_argument(param.dest, metavar=param.metavar, nargs=nargs, type=_type(param), help=param.help or None)
        return
    if param.flag:
        parser.add_argument(*param.flags, dest=param.dest, action="store_true", help=param.help)
        return
    metavar = param.metavar or (None if param.choices else {"int": "N", "float": "X"}.get(param.type, "TEXT"))
    help_text = param.help
    if param.default is not None:
        help_text += f" (default: {param.default})"
    parser.add_argument(*param.flags, dest=param.dest, action="append" if param.repeat else "store",
                        type=_type(param), choices=param.choices, required=param.required, metavar=metavar,
                        default=param.default, help=help_text)


def build(command) -> argparse.ArgumentParser:
    description = command.summary + (f"\n\n{command.description}" if command.description else "")
    parser = _Parser(prog=f"{PROG} {command.name}", description=description, epilog=f"example:\n\n  {command.example}",
                     formatter_class=_Formatter, allow_abbrev=False, add_help=False)
    parser.add_argument("-h", "--help", action="help", help="Show this message and exit.")
    for param in command.params:
        _add(parser, param)
    return parser


def parse_args(command, args: list[str]) -> dict:
    """{dest: value} for `memory-custodian COMMAND ARGS`; repeatable options give tuples."""
    values = vars(build(command).parse_args(args))
    for param in command.params:
        if getattr(param, "repeat", False) or getattr(param, "many", False):
            values[param.dest] = tuple(values[param.dest] or ())
    return values
