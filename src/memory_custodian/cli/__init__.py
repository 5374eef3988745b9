"""The command line: a thin layer over `memory_custodian.Memory`.

Commands are registered by name and imported only when run, so `memory-custodian hook …` and
`read` pay for nothing they do not use. Each tier owns one module of commands. Every command
opens the Memory, calls one method, prints, and turns known errors into one line on stderr with
the exit code the error carries (see `errors.py`): 0 ok, 1 refused / problems found, 2 bad input.
"""

from __future__ import annotations

import importlib
import sys
from functools import wraps

import click

from .. import __version__

# name -> "module:attribute" (relative to this package)
COMMANDS: dict[str, str] = {
    # curated tier, read path
    "init": "curated_read:init",
    "read": "curated_read:read",
    "check": "curated_read:check",
    "status": "curated_read:status",
    # curated tier, write path (`forget --note ID` is the ledger's hard delete)
    "add": "curated_write:add",
    "forget": "curated_write:forget",
    "compact": "curated_write:compact",
    "enable": "curated_write:enable",
    "migrate": "curated_write:migrate",
    # ledger tier
    "remember": "ledger:remember",
    "supersede": "ledger:supersede",
    "revoke": "ledger:revoke",
    "flag-stale": "ledger:flag_stale",
    "reinstate": "ledger:reinstate",
    "promote": "ledger:promote",
    "expire": "ledger:expire",
    "recall": "ledger:recall",
    "expand": "ledger:expand",
    "history": "ledger:history",
    "reindex": "ledger:reindex",
    "doctor": "ledger:doctor",
    # ledger as text
    "export": "ledger_text:export",
    "edit": "ledger_text:edit",
    # agents
    "mcp": "agents:mcp",
    "hook": "agents:hook",
    # recall quality
    "eval": "evaluate:eval_cmd",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(f"{__name__}.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{module_name}":
                return None  # that tier is not built in this checkout
            raise
        return getattr(module, attr, None)


CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="memory-custodian")
def cli():
    """Repo-native project memory for coding agents.

    Curated rules in docs/memory/*.md are routed per task and packed to a budget; the notes
    agents record live in an append-only ledger with ranked recall. Start with `init`, then
    `read --task planning`.
    """


def main(argv=None):
    cli.main(args=argv, prog_name="memory-custodian")


# ---- shared helpers for command modules -------------------------------------------------------

def memory_options(fn):
    """--project-root and --memory-dir, the same on every command."""
    fn = click.option(
        "--memory-dir",
        default=None,
        metavar="DIR",
        help="Memory folder, relative to the project root; must stay under docs/ (default docs/memory).",
    )(fn)
    fn = click.option(
        "--project-root",
        default=None,
        metavar="DIR",
        type=click.Path(file_okay=False),
        help="Project root (default: the nearest ancestor holding docs/memory/manifest.md, else the current directory).",
    )(fn)
    return fn


def format_option(fn):
    return click.option(
        "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format."
    )(fn)


def open_memory(project_root, memory_dir):
    from ..memory import Memory

    return Memory.open(project_root, memory_dir)


def handle_errors(fn):
    """Turn the library's errors into one line on stderr and their exit code."""

    @wraps(fn)
    def wrapper(*args, **kwargs):
        from ..errors import CustodianError
        from ..fastargs import CLI_TERMS

        try:
            return fn(*args, **kwargs)
        except CustodianError as exc:
            click.echo(f"error: {exc.one_line(CLI_TERMS)}", err=True)
            sys.exit(exc.exit_code)

    return wrapper


def emit_json(obj) -> None:
    """One JSON document on stdout with stable sorted keys."""
    from ..textsafe import json_text

    click.echo(json_text(obj))


def warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)
