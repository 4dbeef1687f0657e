"""Frozen dataclasses to JSON-able data and back, checked against their type hints on the way in.

The cache stores data, never code: a cache entry is decoded into exactly the declared types (str, int,
float, bool, None, tuples, enums, nested dataclasses) or rejected. Nothing is imported or called by name
from the entry itself.
"""
from __future__ import annotations

import dataclasses
import enum
import types
import typing
from functools import cache

from auditor.util.errors import AuditorError


class DecodeError(AuditorError, ValueError):
    """The data does not have the declared shape: the cache treats the entry as a miss."""


def encode(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list, frozenset)):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot encode {type(value).__name__}")


T = typing.TypeVar("T")


@typing.overload
def decode(kind: type[T], data: object) -> T: ...
@typing.overload
def decode(kind: object, data: object) -> object: ...
def decode(kind: object, data: object) -> object:
    """`data` as an instance of `kind` (a dataclass or a type hint), or DecodeError."""
    return decoder(kind)(data)


@cache
def decoder(kind: object):
    """A function checking and converting data to `kind`, built once per type (a warm cache decodes thousands
    of results per run)."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        return _union_decoder(kind)
    if origin is tuple:
        return _tuple_decoder(kind)
    if origin is dict or kind is dict:
        return _mapping
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass_decoder(kind)
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return _enum_decoder(kind)
    if kind is float:
        return _number
    if kind in (str, int, bool):
        return _exact_decoder(kind)
    if kind is object:
        return lambda data: data
    raise TypeError(f"cannot decode {kind!r}")


def _union_decoder(kind: object):
    """`A | B | None`: None when the union allows it, else the first member that decodes the data."""
    options = [o for o in typing.get_args(kind) if o is not type(None)]
    optional = len(options) < len(typing.get_args(kind))
    parts = [decoder(o) for o in options]

    def union(data):
        if data is None and optional:
            return None
        for part in parts:
            try:
                return part(data)
            except DecodeError:
                continue
        raise DecodeError(f"{data!r:.40} is none of {options}")
    return union


def _tuple_decoder(kind: object):
    """`tuple[X, ...]` from a list of any length, `tuple[X, Y]` from a list of exactly that length."""
    args = typing.get_args(kind)
    if len(args) == 2 and args[1] is Ellipsis:
        item = decoder(args[0])

        def sequence(data):
            if type(data) is not list:
                raise DecodeError("expected a list")
            return tuple(map(item, data))
        return sequence
    items = [decoder(a) for a in args]

    def fixed(data):
        if type(data) is not list or len(data) != len(items):
            raise DecodeError("expected a list of fixed length")
        return tuple(f(d) for f, d in zip(items, data))
    return fixed


def _mapping(data):
    if type(data) is not dict:
        raise DecodeError("expected an object")
    return data


def _enum_decoder(kind: type[enum.Enum]):
    def member(data):
        try:
            return kind(data)
        except ValueError:
            raise DecodeError(f"{data!r} is not a {kind.__name__}") from None
    return member


def _number(data):
    """A float, or an int taken as one."""
    if type(data) is float:
        return data
    if type(data) is int:
        return float(data)
    raise DecodeError("expected a number")


def _exact_decoder(kind: type):
    """str, int or bool: exactly that type (a bool is not an int here)."""
    def exact(data):
        if type(data) is not kind:
            raise DecodeError(f"expected {kind.__name__}")
        return data
    return exact


def _dataclass_decoder(kind: type):
    hints = _hints(kind)
    fields = [(f.name, f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
              for f in dataclasses.fields(kind)]
    known = frozenset(hints)
    parts: dict = {}

    def instance(data):
        if type(data) is not dict:
            raise DecodeError(f"expected an object for {kind.__name__}")
        if not parts:   # built on first use: the field types may refer to this very class
            parts.update({name: decoder(hints[name]) for name, _ in fields})
        if not known.issuperset(data):
            raise DecodeError(f"unknown fields in {kind.__name__}")
        values = {}
        for name, required in fields:
            if name in data:
                values[name] = parts[name](data[name])
            elif required:
                raise DecodeError(f"{kind.__name__}.{name} missing")
        return kind(**values)
    return instance


@cache
def _hints(kind: type) -> dict:
    return typing.get_type_hints(kind)
