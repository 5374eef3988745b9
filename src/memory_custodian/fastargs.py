"""The one argument scanner behind the click-free fast paths (`read`, `remember`, `recall`).

It accepts only the plain shapes click would parse the same way (`--name value`, `--name=value`,
`-x value`, flags, repeated multi-value options, positionals when allowed) and returns None for
anything else — help, an unknown option, a missing value, a single-value option given twice — so
the caller falls through to click, which owns usage errors.
"""

from __future__ import annotations

from .errors import Terms


def scan(argv: list[str], *, values: dict, multi: dict, flags: dict,
         positional: bool) -> tuple[dict, list[str]] | None:
    """(options given, positional arguments), keyed by the dicts' target names; None: let click do it."""
    opts: dict = {key: [] for key in multi.values()}
    args: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if positional and arg == "--":
            args.extend(argv[i + 1:])
            break
        if positional and (not arg.startswith("-") or arg == "-"):
            args.append(arg)
            i += 1
            continue
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in flags and not eq:
            opts[flags[name]] = True
            i += 1
            continue
        if name not in values and name not in multi:
            return None
        if eq:
            value = inline
        elif i + 1 < len(argv):
            value = argv[i + 1]
            i += 1
        else:
            return None
        if name in values:
            if values[name] in opts:
                return None
            opts[values[name]] = value
        else:
            opts[multi[name]].append(value)
        i += 1
    return opts, args



class CliTerms(Terms):
    """A library error as the command line knows it: each Memory argument by its flag, each verb by its
    command (see `errors.Terms`)."""

    FLAGS = {"paths": "--path", "tags": "--tag", "kinds": "--kind", "states": "--state", "areas": "--area",
             "profiles": "--profile", "rules": "--rule", "reasons": "--reason", "plan_id": "--plan"}

    def name(self, field: str) -> str:
        return self.FLAGS.get(field, "--" + field.replace("_", "-"))

    def with_value(self, field: str) -> str:
        return f"{self.name(field)} TEXT"

    def verb(self, name: str) -> str:
        return f"`memory-custodian {name.replace('_', '-')}`"


CLI_TERMS = CliTerms()
