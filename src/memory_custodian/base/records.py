"""Plain record classes that behave like dataclasses, without importing `dataclasses`.

`dataclasses` imports `inspect`, which costs a fresh process ~7 ms (measured on a quiet machine;
twice that under load): more than a hook that runs on every prompt can spare. Every record in the
library derives from `Record` instead, so there is one record style: fields declared as class
annotations (`name: str`, `tags: list[str] = field(default_factory=list)`), keyword or positional
construction with defaults, `==`, `repr`, `replace(**changes)` and `as_dict()` (a deep copy, as
`dataclasses.asdict` gives). Under `from __future__ import annotations` the annotations stay strings,
so reading them imports nothing; a type checker sees the same class as a dataclass
(`dataclass_transform`), so every field is typed where it is declared.
"""

from __future__ import annotations

# Not `typing.TYPE_CHECKING`: importing `typing` is what the hook path avoids; type checkers read
# any module-level name TYPE_CHECKING as theirs.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, TypeVar

    from typing_extensions import Self
    from typing_extensions import dataclass_transform as _transform

    _T = TypeVar("_T")
else:

    def _transform(**_options):
        return lambda cls: cls


_MISSING = object()


class Factory:
    """A default built fresh for each record (a list, a dict), like `field(default_factory=...)`."""

    def __init__(self, make):
        self.make = make


def field(*, default_factory: Callable[[], _T]) -> _T:
    """A field whose default is built fresh for each record: `tags: list[str] = field(default_factory=list)`."""
    return Factory(default_factory)  # type: ignore[return-value]  # the class reads it back as a Factory


def _own_annotations(cls) -> dict:
    # not inspect.get_annotations: `inspect` costs the hook path ~7 ms (see above)
    own = cls.__dict__.get("__annotations__")  # noqa: RUF063
    if own is None and "__annotate__" in cls.__dict__:  # Python 3.14+: annotations are made on demand
        own = cls.__annotations__
    return own or {}


@_transform(field_specifiers=(field,))
class Record:
    """Subclasses declare their fields as annotations, in order, a default as the class value.

    `FIELDS` (the names, in order) and `DEFAULTS` are derived from those annotations, never declared."""

    FIELDS: ClassVar[tuple[str, ...]] = ()
    DEFAULTS: ClassVar[dict[str, Any]] = {}  # derived per class by __init_subclass__, never mutated
    _NAMES: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "FIELDS" in cls.__dict__ or "DEFAULTS" in cls.__dict__:
            raise TypeError(f"{cls.__name__}: declare a record's fields as annotations, not FIELDS or DEFAULTS")
        fields, defaults = list(cls.FIELDS), dict(cls.DEFAULTS)  # a subclass extends its parent's fields
        for name, annotation in _own_annotations(cls).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            if name not in fields:
                fields.append(name)
            if name in cls.__dict__:
                defaults[name] = cls.__dict__[name]
                delattr(cls, name)  # the instance holds the value; a stale class default would hide a bug
        cls.FIELDS = tuple(fields)
        cls.DEFAULTS = defaults
        cls._NAMES = frozenset(fields)  # a keyword is checked against a set, not a scan of FIELDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
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

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(self.__dict__[f] == other.__dict__[f] for f in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq=True is

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={self.__dict__[f]!r}" for f in self.FIELDS)
        return f"{type(self).__name__}({inner})"

    def replace(self, **changes: Any) -> Self:
        """A new record with `changes` applied (shallow, as `dataclasses.replace`)."""
        values = {f: self.__dict__[f] for f in self.FIELDS}
        values.update(changes)
        return type(self)(**values)

    def as_dict(self) -> dict[str, Any]:
        return {f: copy_plain(self.__dict__[f]) for f in self.FIELDS}


def copy_plain(value: Any) -> Any:
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
