"""A library error as the command line says it: each Memory argument by its flag, each verb by its
command (the library's own phrasing is `errors.Terms`)."""

from __future__ import annotations

from ..base.errors import Terms


class CliTerms(Terms):
    FLAGS = {"paths": "--path", "tags": "--tag", "kinds": "--kind", "states": "--state", "areas": "--area",
             "profiles": "--profile", "rules": "--rule", "reasons": "--reason", "plan_id": "--plan"}

    def name(self, field: str) -> str:
        return self.FLAGS.get(field, "--" + field.replace("_", "-"))

    def with_value(self, field: str) -> str:
        return f"{self.name(field)} TEXT"

    def verb(self, name: str) -> str:
        return f"`memory-custodian {name.replace('_', '-')}`"


CLI_TERMS = CliTerms()
