"""The standard library's argparse, built from the command table for the one command being run.

`parse(argv)` gives (command, keyword arguments of its handler); a usage error is a `UsageError`
carrying one line, never argparse's usage block and exit.
"""

from __future__ import annotations

import argparse
import os

from .table import COMMANDS, PROG

# argparse looks every message up in gettext's catalogues (importing locale, ~1.5 ms a run); the
# CLI's own text is English only, so argparse's is taken as written too
argparse._ = str
argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural


class UsageError(Exception):
    """Bad command-line input (exit 2); `command` names the command whose help explains it."""

    exit_code = 2

    def __init__(self, message: str, command: str | None = None):
        super().__init__(message)
        self.message = message
        self.command = command


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


def _number(kind, minimum, maximum):
    convert = int if kind == "int" else float

    def number(text):
        value = convert(text)  # a ValueError here is argparse's "invalid int value: 'x'"
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            low = "" if minimum is None else f"{minimum}<="
            high = "" if maximum is None else f"<={maximum}"
            raise argparse.ArgumentTypeError(f"{text} is not in the range {low}x{high}")
        return value

    number.__name__ = kind
    return number


def _path(kind):
    # a path that exists must be the right kind; one that does not is the command's to explain
    wrong, other = (os.path.isfile, "file") if kind == "folder" else (os.path.isdir, "folder")

    def path(text):
        if wrong(text):
            raise argparse.ArgumentTypeError(f"{text!r} is a {other}, not a {kind}")
        return text

    return path


def _type(param):
    if param.type in ("int", "float"):
        return _number(param.type, param.minimum, param.maximum)
    if param.type in ("folder", "file"):
        return _path(param.type)
    return None


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


def parse(argv: list[str]):
    """(the table's Command, {dest: value}) for `memory-custodian ARGV`; repeatable options give tuples."""
    if not argv or argv[0] not in COMMANDS:
        given = f"unknown command {argv[0]!r}" if argv else "no command given"
        raise UsageError(f"{given}; the commands are listed by `{PROG} --help`")
    command = COMMANDS[argv[0]]
    values = vars(build(command).parse_args(argv[1:]))
    for param in command.params:
        if getattr(param, "repeat", False) or getattr(param, "many", False):
            values[param.dest] = tuple(values[param.dest] or ())
    return command, values
