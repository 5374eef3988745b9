"""Plain record classes that behave like dataclasses, without importing `dataclasses`.

`dataclasses` imports `inspect`, which costs a fresh process ~7 ms (measured on a quiet machine;
twice that under load): more than a hook that runs on every prompt can spare. Every record in the
library derives from `Record` instead, so there is one record style: keyword or positional construction with defaults, `==`, `repr`,
`replace(**changes)` and `as_dict()` (a deep copy, as `dataclasses.asdict` gives).
"""

from __future__ import annotations

_MISSING = object()


class Factory:
    """A default built fresh for each record (a list, a dict), like `field(default_factory=...)`."""

    def __init__(self, make):
        self.make = make


def copy_plain(value):
    """A deep copy of JSON-like data; a record inside becomes a dict (as `dataclasses.asdict` does)."""
    if isinstance(value, dict):
        return {k: copy_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(copy_plain(v) for v in value)
    if isinstance(value, Record):
        return value.as_dict()
    return value


class Record:
    """Subclasses set FIELDS (in order) and DEFAULTS ({name: value or Factory})."""

    FIELDS: tuple[str, ...] = ()
    DEFAULTS: dict = {}
    _NAMES: frozenset = frozenset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._NAMES = frozenset(cls.FIELDS)  # a keyword is checked against a set, not a scan of FIELDS

    def __init__(self, *args, **kwargs):
        fields = self.FIELDS
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} arguments, {len(args)} given")
        values = self.__dict__
        names = self._NAMES
        for name, value in zip(fields, args):
            values[name] = value
        for name, value in kwargs.items():
            if name in values or name not in names:
                raise TypeError(f"{type(self).__name__}() got an unexpected or repeated argument {name!r}")
            values[name] = value
        if len(values) < len(fields):
            for name in fields:
                if name not in values:
                    default = self.DEFAULTS.get(name, _MISSING)
                    if default is _MISSING:
                        raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
                    values[name] = default.make() if isinstance(default, Factory) else default

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(self.__dict__[f] == other.__dict__[f] for f in self.FIELDS)

    __hash__ = None  # mutable, as a dataclass with eq=True is

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={self.__dict__[f]!r}" for f in self.FIELDS)
        return f"{type(self).__name__}({inner})"

    def replace(self, **changes):
        """A new record with `changes` applied (shallow, as `dataclasses.replace`)."""
        values = {f: self.__dict__[f] for f in self.FIELDS}
        values.update(changes)
        return type(self)(**values)

    def as_dict(self) -> dict:
        return {f: copy_plain(self.__dict__[f]) for f in self.FIELDS}
