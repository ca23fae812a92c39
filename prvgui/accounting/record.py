"""Frozen records: what ``@dataclass(frozen=True)`` gives the engine's value types, without
compiling code when a class is defined.

On CPython 3.11 a frozen dataclass costs about 1 ms to define (six generated methods, each
compiled by ``exec``). The accounting package defines sixteen value types; as dataclasses
they were two thirds of its import time, about 8% of a command-line call.

A ``Record`` subclass declares its fields as annotations, as a dataclass would (``ClassVar``
annotations are not fields; a class attribute gives the default; a subclass adds fields
after its base's). It gets ``__init__`` (positional or keyword arguments, then
``__post_init__`` if defined), ``__repr__``, ``__eq__`` and ``__hash__`` over the fields in
order, and immutability (set fields in ``__post_init__`` with ``object.__setattr__``).
``fields`` and ``replace`` work like their ``dataclasses`` namesakes. Types that are not
on the start-up path of a query (requests and results of engine.py, calibration and budget
answers) stay dataclasses.
"""
from __future__ import annotations

__all__ = ["MISSING", "Field", "FrozenError", "Record", "fields", "replace"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: the default of a field that has none
MISSING = _Missing()


class FrozenError(AttributeError):
    """Raised on an attempt to change a record."""


class Field:
    """A field's name and default (``MISSING`` if it must be given)."""

    __slots__ = ("default", "name")

    def __init__(self, name: str, default: object) -> None:
        self.name, self.default = name, default

    def __repr__(self) -> str:
        return f"Field({self.name!r}, default={self.default!r})"


def _is_classvar(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return str(text).split("[", 1)[0].rsplit(".", 1)[-1] == "ClassVar"


class Record:
    """Base of the frozen value types (module docstring)."""

    __fields__: tuple[Field, ...] = ()

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        found = {f.name: f for f in cls.__fields__}
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if not _is_classvar(annotation):
                found[name] = Field(name, cls.__dict__.get(name, MISSING))
        seen_default = None
        for f in found.values():
            if f.default is not MISSING:
                seen_default = f.name
            elif seen_default is not None:
                raise TypeError(f"{cls.__name__}: field {f.name!r} without a default follows "
                                f"{seen_default!r} with one")
        cls.__fields__ = tuple(found.values())

    def __init__(self, *args: object, **kwargs: object) -> None:
        flds = self.__fields__
        if len(args) > len(flds):
            raise TypeError(f"{type(self).__name__}() takes {len(flds)} arguments, got {len(args)}")
        for f, value in zip(flds, args):
            if f.name in kwargs:
                raise TypeError(f"{type(self).__name__}() got multiple values for {f.name!r}")
            object.__setattr__(self, f.name, value)
        for f in flds[len(args):]:
            if f.name in kwargs:
                value = kwargs.pop(f.name)
            elif f.default is not MISSING:
                value = f.default
            else:
                raise TypeError(f"{type(self).__name__}() missing required argument {f.name!r}")
            object.__setattr__(self, f.name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got an unexpected argument {next(iter(kwargs))!r}")
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def _values(self) -> tuple:
        return tuple(getattr(self, f.name) for f in self.__fields__)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenError(f"cannot assign to field {name!r} of a {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise FrozenError(f"cannot delete field {name!r} of a {type(self).__name__}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.__fields__)
        return f"{type(self).__qualname__}({inner})"


def fields(obj: Record | type[Record]) -> tuple[Field, ...]:
    """The fields of a record or record class, in order."""
    return obj.__fields__


def replace(obj: Record, **changes: object) -> Record:
    """A copy of ``obj`` with some fields changed (validated again by ``__post_init__``)."""
    values = {f.name: getattr(obj, f.name) for f in obj.__fields__}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {min(unknown)!r}")
    values.update(changes)
    return type(obj)(**values)
