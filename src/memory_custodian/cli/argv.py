"""argv → (the table's Command, its handler's keywords), read straight from the table.

Most calls are plain (`recall "cache" --limit 5`): long or short options each followed by its own
value, `--opt=value`, flags, and one block of positional words. Those are read here without
importing argparse, which alone costs a command's start-up more than its parsing does. Anything
else — help, a mistake, `--`, a word starting with "-" that is no option of the command, a value
out of range — goes to argparse (`cli/parser.py`), which gives the answer or the error. The plain
reader only ever returns what argparse would: tests/test_cli_argv.py holds the two equal on
generated argvs for every command.
"""

from __future__ import annotations

from .output import UsageError
from .table import COMMANDS, PROG
from .values import BadValue, convert


def _options(command) -> tuple[dict, list]:
    options, positionals = {}, []
    for param in command.params:
        if hasattr(param, "flags"):
            options.update(dict.fromkeys(param.flags, param))
        else:
            positionals.append(param)
    return options, positionals


def _value(param, text):
    value = convert(param, text)
    if getattr(param, "choices", None) and value not in param.choices:
        raise BadValue()
    return value


def _defaults(command) -> dict:
    values = {}
    for param in command.params:
        if not hasattr(param, "flags"):
            values[param.dest] = () if param.many else None
        elif param.repeat:
            values[param.dest] = ()
        else:  # argparse converts a default given as text, as it would the word
            default = param.default
            values[param.dest] = _value(param, default) if isinstance(default, str) and param.type else default
    return values


def _positional(positionals, words):
    """Deal one block of words to the positionals as argparse's greedy match does; None if it would fail."""
    values, rest = {}, list(words)
    for at, param in enumerate(positionals):
        after = sum(1 for later in positionals[at + 1:] if not later.optional)  # words the later ones need
        if param.many:  # noqa: SIM108  # the other branch is a conditional itself: nested, it reads worse
            take = len(rest) - after
        else:
            take = 1 if len(rest) > after or not param.optional else 0
        if take < (0 if param.optional else 1) or take > len(rest):
            return None
        taken, rest = rest[:take], rest[take:]
        if param.many:
            values[param.dest] = tuple(_value(param, word) for word in taken)
        else:
            values[param.dest] = _value(param, taken[0]) if taken else None
    return None if rest else values


def read_plain(command, args: list[str]) -> dict | None:
    """The handler's keywords for a plain `args`, or None when argparse must read them."""
    options, positionals = _options(command)
    values, seen, words, block_ended = _defaults(command), set(), [], False
    i = 0
    try:
        while i < len(args):
            word = args[i]
            if word[:1] != "-" or word == "-":
                if block_ended:
                    return None  # positional words split by options: argparse's to place
                words.append(word)
                i += 1
                continue
            block_ended = block_ended or bool(words)
            name, eq, given = word.partition("=")
            param = options.get(name if eq and name.startswith("--") else word)
            if param is None:  # -h, --, a negative number, a short option with its value attached
                return None
            if param.flag:
                if eq:
                    return None
                values[param.dest] = True
                i += 1
                continue
            if not eq:
                if i + 1 == len(args) or args[i + 1][:1] == "-":
                    return None
                given, i = args[i + 1], i + 1
            value = _value(param, given)
            values[param.dest] = (*values[param.dest], value) if param.repeat else value
            seen.add(param.dest)
            i += 1
        fixed = _positional(positionals, words)
    except BadValue:
        return None
    if fixed is None or any(p.required and p.dest not in seen for p in options.values()):
        return None
    values.update(fixed)
    return values


def parse(argv: list[str]):
    """(the table's Command, {dest: value}) for `memory-custodian ARGV`; repeatable options give tuples."""
    if not argv or argv[0] not in COMMANDS:
        given = f"unknown command {argv[0]!r}" if argv else "no command given"
        raise UsageError(f"{given}; the commands are listed by `{PROG} --help`")
    command = COMMANDS[argv[0]]
    values = read_plain(command, argv[1:])
    if values is None:
        from .parser import parse_args

        values = parse_args(command, argv[1:])
    return command, values
