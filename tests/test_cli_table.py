"""Generated from the command table: every command and every option parses to its handler call,
every command's help carries its example, and usage errors are one line (or one JSON object)."""

from __future__ import annotations

import inspect
import json

import pytest
from conftest import run_cli

from memory_custodian.cli import argv as cli_argv
from memory_custodian.cli import parser
from memory_custodian.cli.run import handler_of, top_help
from memory_custodian.cli.spec import Arg
from memory_custodian.cli.table import COMMANDS, GROUPS
from memory_custodian.ledger.params import NOTE_INPUTS, RECALL_INPUTS

ALL = sorted(COMMANDS)


def sample(param, index: int = 0):
    """(argv words, the value the handler receives) for one parameter."""
    if param.type == "int":
        value = (param.minimum or 0) + 3 + index
        return [str(value)], value
    if param.type == "float":
        value = 0.25 * (index + 1)
        return [str(value)], value
    if getattr(param, "choices", None):
        value = param.choices[-1 - index % len(param.choices)]
        return [value], value
    value = f"{param.dest}-{index}" if param.type is None else f"some/where-{index}"
    return [value], value


def defaults(command) -> dict:
    out = {}
    for param in command.params:
        if isinstance(param, Arg):
            out[param.dest] = () if param.many else None
        else:
            out[param.dest] = () if param.repeat else param.default
    return out


def required(command) -> tuple[list[str], dict]:
    """The shortest valid argv (after the command name) and the values it sets."""
    argv, values = [], {}
    for param in command.params:
        if isinstance(param, Arg) and not param.optional:
            words, value = sample(param)
            argv += words
            values[param.dest] = (value,) if param.many else value
        elif not isinstance(param, Arg) and param.required:
            words, value = sample(param)
            argv += [param.flags[0], *words]
            values[param.dest] = (value,) if param.repeat else value
    return argv, values


def option_cases():
    for name in ALL:
        for param in COMMANDS[name].params:
            if isinstance(param, Arg):
                if param.optional or param.many:  # a required one is in every case's shortest argv
                    yield pytest.param(name, param, None, id=f"{name}-{param.dest}")
            else:
                for spelling in param.flags:
                    yield pytest.param(name, param, spelling, id=f"{name}{spelling}")


@pytest.mark.parametrize("name", ALL)
def test_the_shortest_argv_reaches_the_handler_with_every_default(name):
    command = COMMANDS[name]
    argv, values = required(command)
    got, kwargs = cli_argv.parse([name, *argv])
    assert got is command
    assert kwargs == {**defaults(command), **values}
    handler = handler_of(command)
    params = inspect.signature(handler).parameters
    named = {n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    if len(named) < len(params):  # `**note`: the declared inputs of a note or a recall, passed on as they are
        declared = {i.name for i in (*NOTE_INPUTS, *RECALL_INPUTS)}
        assert named <= set(kwargs) and set(kwargs) - named <= declared, "the handler takes the table's dests"
    else:
        assert named == set(kwargs), "the handler takes exactly the table's dests"


@pytest.mark.parametrize("name,param,spelling", list(option_cases()))
def test_every_option_and_argument_parses_to_the_handler_call(name, param, spelling):
    command = COMMANDS[name]
    argv, values = required(command)
    expected = {**defaults(command), **values}
    if spelling is None:  # an optional positional given, or a second value of one that takes many
        for earlier in command.params:  # `diff [BASE [HEAD]]`: HEAD is given after BASE
            if earlier is param:
                break
            if isinstance(earlier, Arg) and earlier.optional and not earlier.many:
                words, value = sample(earlier, 0)
                argv, expected[earlier.dest] = argv + words, value
        words, value = sample(param, 1)
        argv = argv + words
        expected[param.dest] = (*expected[param.dest], value) if param.many else value
    elif param.flag:
        argv, expected[param.dest] = [*argv, spelling], True
    elif param.repeat:
        first, a = sample(param, 0)
        second, b = sample(param, 1)
        argv = [*argv, spelling, *first, f"{spelling}={second[0]}"]  # both spellings of a value
        expected[param.dest] = (a, b)
    else:
        words, value = sample(param, 1)
        if param.required:  # replace the required value given by the shortest argv
            at = argv.index(param.flags[0])
            del argv[at:at + 2]
        argv, expected[param.dest] = [*argv, spelling, *words], value
    got, kwargs = cli_argv.parse([name, *argv])
    assert got is command and kwargs == expected


def test_a_plain_argv_builds_no_parser_and_a_mistake_only_its_commands(monkeypatch):
    built = []
    real = parser.build
    monkeypatch.setattr(parser, "build", lambda command: built.append(command.name) or real(command))
    cli_argv.parse(["recall", "x", "--limit", "3"])
    assert built == []
    with pytest.raises(cli_argv.UsageError):
        cli_argv.parse(["recall", "x", "--limit", "none"])
    assert built == ["recall"]


@pytest.mark.parametrize("name", ALL)
def test_every_command_has_help_with_its_example(name):
    command = COMMANDS[name]
    assert command.summary and command.example.startswith(f"memory-custodian {name}")
    proc = run_cli(name, "--help")
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith(f"usage: memory-custodian {name}")
    assert f"example:\n\n  {command.example}\n" in proc.stdout
    assert " ".join(command.summary.split()[:4]) in " ".join(proc.stdout.split())


def test_top_level_help_lists_every_command_whole_in_its_group():
    proc = run_cli("--help")
    assert proc.returncode == 0 and proc.stdout == top_help()
    text = proc.stdout
    starts = [text.index(f"\n{group}:\n") for group in GROUPS]
    assert starts == sorted(starts)
    bounds = dict(zip(GROUPS, zip(starts, [*starts[1:], len(text)])))
    flat = " ".join(text.split())
    for name, command in COMMANDS.items():
        start, end = bounds[command.group]
        assert f"\n  {name} " in text[start:end], name
        assert " ".join(command.summary.split()) in flat, f"{name}'s summary is cut"
    assert "…" not in text and "..." not in text.replace("COMMAND [ARGS]...", "")


def test_version():
    proc = run_cli("--version")
    assert (proc.returncode, proc.stdout) == (0, "memory-custodian, version 0.1.0\n")


def test_every_command_that_prints_data_has_format_json():
    for name, command in COMMANDS.items():
        dests = {param.dest for param in command.params}
        assert ("fmt" in dests) == (name not in ("mcp", "hook", "merge-driver")), name


@pytest.mark.parametrize("name", ALL)
def test_an_unknown_option_is_one_line_exit_2(name):
    proc = run_cli(name, *required(COMMANDS[name])[0], "--no-such-option")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: unrecognized arguments: --no-such-option")
    assert f"memory-custodian {name} --help" in proc.stderr


def choice_cases():
    for name in ALL:
        for param in COMMANDS[name].params:
            if getattr(param, "choices", None):
                yield pytest.param(name, param, id=f"{name}{param.flags[0]}")


@pytest.mark.parametrize("name,param", list(choice_cases()))
def test_a_bad_choice_is_one_line_exit_2(name, param):
    proc = run_cli(name, *required(COMMANDS[name])[0], param.flags[0], "nope")
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"error: argument {param.flags[0]}") and "invalid choice: 'nope'" in proc.stderr


@pytest.mark.parametrize("name", [n for n in ALL if n not in ("mcp", "hook", "merge-driver")])
def test_with_format_json_a_usage_error_is_one_json_object(name):
    proc = run_cli(name, "--format", "json", *required(COMMANDS[name])[0], "--no-such-option")
    assert proc.returncode == 2 and proc.stdout == ""
    assert json.loads(proc.stderr) == {"error": {"exit_code": 2, "line": None, "path": None,
                                                 "message": "unrecognized arguments: --no-such-option"}}
    assert proc.stderr.count("\n") == 1


def test_with_format_json_a_library_error_is_one_json_object(tmp_path):
    proc = run_cli("recall", "--format=json", "--project-root", str(tmp_path))
    assert proc.returncode == 2 and proc.stdout == ""
    error = json.loads(proc.stderr)["error"]
    assert sorted(error) == ["exit_code", "line", "message", "path"] and error["exit_code"] == 2
    assert "memory-custodian init" in error["message"]
    text = run_cli("recall", "--project-root", str(tmp_path))
    assert text.stderr.count("\n") == 1 and text.stderr.startswith("error: ") and error["message"] in text.stderr


def test_unknown_and_missing_commands():
    proc = run_cli("recal")
    assert proc.returncode == 2 and proc.stderr.startswith("error: unknown command 'recal'")
    proc = run_cli()
    assert proc.returncode == 2 and proc.stdout == top_help()


def test_hook_fails_open_at_run_time_but_not_on_usage(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x\n")
    proc = run_cli("hook", "--project-root", str(afile), "SessionStart", input="{}")
    assert (proc.returncode, proc.stdout) == (0, "")
    proc = run_cli("hook", "SessionStart", "--project-root", str(tmp_path), input="not json")
    assert proc.returncode == 0 and proc.stderr.count("\n") == 1 and "continuing without memory" in proc.stderr
    for argv in (["hook"], ["hook", "A", "B"], ["hook", "--host", "cursor", "A"], ["hook", "--task"]):
        proc = run_cli(*argv, input="{}")
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "memory-custodian hook --help" in proc.stderr
