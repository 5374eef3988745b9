"""The plain reader (`cli/argv.py`) against argparse on generated argvs for every command of the table:
whatever it reads, argparse reads the same; whatever it leaves, argparse answers (or refuses)."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_cli_table import ALL, required

from memory_custodian.cli import parser
from memory_custodian.cli.argv import read_plain
from memory_custodian.cli.output import UsageError
from memory_custodian.cli.table import COMMANDS

HERE = os.path.dirname(os.path.abspath(__file__))


def argparse_reads(command, args):
    try:
        return parser.parse_args(command, args)
    except (UsageError, SystemExit):  # SystemExit: --help
        return None


def vocabulary(command) -> list[str]:
    words = ["cache", "two words", "-", "", "--", "-x", "--no-such", "a=b", "-5", "0", "3", "1.5", "-h", "--help",
             HERE, __file__]
    for param in command.params:
        for value in (getattr(param, "choices", None) or ()):
            words.append(value)
        for spelling in getattr(param, "flags", ()):
            words += [spelling, f"{spelling}=", f"{spelling}=3", f"{spelling}=cache"]
            words += [f"{spelling}={value}" for value in (getattr(param, "choices", None) or ())[:2]]
    return words


@pytest.mark.parametrize("name", ALL)
def test_the_plain_reader_reads_what_argparse_reads_or_leaves_it(name):
    command = COMMANDS[name]

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.lists(st.sampled_from(vocabulary(command)), max_size=7))
    def check(args):
        plain = read_plain(command, args)
        if plain is not None:
            assert plain == argparse_reads(command, args), args

    check()


@pytest.mark.parametrize("name", ALL)
def test_the_plain_forms_never_reach_argparse(name):
    command = COMMANDS[name]
    args, _ = required(command)
    assert read_plain(command, args) is not None
    for param in command.params:
        if getattr(param, "flag", False):
            assert read_plain(command, [*args, param.flags[-1]]) is not None
        elif hasattr(param, "flags") and not param.required:
            value = (param.choices or ("7",))[0] if param.type in (None, "int") else ("0.5" if param.type == "float"
                                                                                        else HERE)
            for words in ([param.flags[-1], value], [f"{param.flags[0]}={value}"]):
                got = read_plain(command, [*args, *words])
                assert got is not None and got == argparse_reads(command, [*args, *words]), words
