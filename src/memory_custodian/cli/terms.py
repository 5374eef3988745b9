"""A library error or hint as the command line says it: each Memory argument by its flag, each verb by its
command with its options (the library's own phrasing is `errors.Terms`)."""

from __future__ import annotations

from ..base.errors import Terms
from .spec import FLAGS as DECLARED_FLAGS
from .table import COMMANDS, PROG

# each Memory argument by the flag that sets it (the rest are `--` and the name, dashed)
_FLAGS = {"paths": "--path", "tags": "--tag", "kinds": "--kind", "states": "--state", "areas": "--area",
          "profiles": "--profile", "rules": "--rule", "reasons": "--reason", "plan_id": "--plan",
          "base": "BASE", "head": "HEAD",  # `diff` takes these as positional arguments, not flags
          **DECLARED_FLAGS}


class CliTerms(Terms):
    def name(self, field: str) -> str:
        return _FLAGS.get(field, "--" + field.replace("_", "-"))

    def with_value(self, field: str) -> str:
        return f"{self.name(field)} TEXT"

    def verb(self, name: str) -> str:
        return f"`{PROG} {name.replace('_', '-')}`"

    def setting(self, field: str, value: str | None) -> str:
        return self.name(field) if value is None else f"{self.name(field)} {value}"

    def call(self, name: str, settings: list[tuple[str, str | None]]) -> str:
        """The command line itself: a positional argument by its value, an option by its flag."""
        command = COMMANDS.get(name.replace("_", "-"))
        positional = {p.dest for p in command.params if not hasattr(p, "flags")} if command else set()
        words = [value if field in positional and value is not None else self.setting(field, value)
                 for field, value in settings]
        return f"`{' '.join([PROG, name.replace('_', '-'), *words])}`"


CLI_TERMS = CliTerms()
