"""Data classes without importing :mod:`dataclasses` (start-up).

``@record`` and ``@record(frozen=True)`` make a class what ``@dataclass`` and
``@dataclass(frozen=True)`` make it, for the classes ``beambleu score`` builds on every run (the
metrics, their options and scores, the resampling settings, the text sources). ``dataclasses``
imports :mod:`inspect`, and on Python 3.11 and 3.12 a data class execs six generated methods:
together about a quarter of ``score``'s CPU on a 2k-line file. Here one ``__init__`` is compiled
per class and the other methods are shared.

What a record has, as a data class of the same fields has it (Python 3.11 to 3.13): the
``__init__`` unless the class defines one (same parameters, defaults and messages, then
``__post_init__`` when the class has one), ``__repr__`` (fields of ``field(repr=False)`` left out,
``...`` for an instance within itself), ``__eq__`` (same class, fields equal in order, as the running
Python's data classes compare them), ``__hash__`` (of the fields when frozen, none otherwise, unless
the class sets its own), ``__match_args__``, ``__replace__`` (``copy.replace``), and for a frozen
record :class:`dataclasses.FrozenInstanceError` on assigning or deleting an attribute. Fields and
defaults are inherited as data classes inherit them. ``__dataclass_fields__`` and
``__dataclass_params__`` are made, by :mod:`dataclasses` itself, on first use:
:func:`dataclasses.fields`, :func:`~dataclasses.replace`, :func:`~dataclasses.asdict` and
:func:`~dataclasses.is_dataclass` take a record, and a ``@dataclass`` may subclass one (a metric
plugin deriving from a built-in metric).

Refused when the class is made, as data classes refuse them: a default of a type without a hash
(``ValueError``: a list, a dict, ...), a non-default field after a default one, a ``field()`` without
an annotation (``TypeError``). Not supported (``TypeError``): ``ClassVar``/``InitVar`` annotations
and a data class as a base (records and plain classes are). Not made: the ``__doc__`` a data class
gives a class without a docstring.
"""

from __future__ import annotations

import _thread
import abc
import sys

__all__ = ["field", "record", "replace", "values"]

_MISSING = object()


class _Field:
    """A default with options (``field(default=..., repr=False)``), read by :func:`record`."""

    __slots__ = ("default", "repr")

    def __init__(self, default, repr_: bool):
        self.default = default
        self.repr = repr_


def field(*, default=_MISSING, repr: bool = True):  # noqa: A002  (dataclasses.field's keyword)
    """A field's default and whether ``__repr__`` shows it, as :func:`dataclasses.field` takes them."""
    return _Field(default, repr)


class _Lazy:
    """``__dataclass_fields__`` or ``__dataclass_params__`` of a record class, made on first use
    by :mod:`dataclasses` from a data class of the same fields and defaults. It holds no reference
    to its class (a pickler that copies classes by value copies it too): the class is the first of
    the owner's bases whose own attribute it is."""

    def __init__(self, attr: str):
        self.attr, self.value = attr, None

    def __get__(self, obj, owner=None):
        if self.value is None:
            import dataclasses

            cls = next(c for c in (owner or type(obj)).__mro__ if c.__dict__.get(self.attr) is self)
            spec = cls.__record__
            namespace = {"__annotations__": {name: spec.types[name] for name in spec.names}, "__module__":
                         cls.__module__, "__qualname__": cls.__qualname__}
            for name in spec.names:
                if name in spec.defaults:
                    namespace[name] = dataclasses.field(default=spec.defaults[name], repr=name in spec.shown)
                elif name not in spec.shown:
                    namespace[name] = dataclasses.field(repr=False)
            twin = dataclasses.dataclass(frozen=spec.frozen)(type(cls.__name__, (), namespace))
            self.value = getattr(twin, self.attr)
        return self.value


class _Spec:
    """What :func:`record` read from a class: field names in order, their types (the annotations'
    text), defaults, the fields ``__repr__`` shows, and whether it is frozen."""

    __slots__ = ("names", "types", "defaults", "shown", "frozen")

    def __init__(self, names, types, defaults, shown, frozen):
        self.names, self.types, self.defaults, self.shown, self.frozen = names, types, defaults, shown, frozen


def _own_annotations(cls) -> dict:
    own = cls.__dict__.get("__annotations__")
    return own if own is not None else (getattr(cls, "__annotations__", None) or {})


def _spec(cls, frozen: bool) -> _Spec:
    names, types, defaults, shown = [], {}, {}, set()
    for base in reversed(cls.__mro__[1:]):  # each base's fields replace the earlier ones', as data classes do
        if "__dataclass_fields__" in base.__dict__ and "__record__" not in base.__dict__:
            raise TypeError(f"record {cls.__qualname__} cannot derive from the data class {base.__qualname__}")
        spec = base.__dict__.get("__record__")
        if spec is not None:
            if spec.frozen != frozen:
                raise TypeError(f"record {cls.__qualname__}: frozen={frozen} but its base "
                                f"{base.__qualname__} has frozen={spec.frozen}")
            for name in spec.names:
                if name not in types:
                    names.append(name)
                types[name] = spec.types[name]
                if name in spec.defaults:
                    defaults[name] = spec.defaults[name]
                else:
                    defaults.pop(name, None)
                if name in spec.shown:
                    shown.add(name)
                else:
                    shown.discard(name)
    annotations = _own_annotations(cls)
    for name, value in cls.__dict__.items():
        if isinstance(value, _Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    for name, kind in annotations.items():
        text = kind if isinstance(kind, str) else getattr(kind, "__name__", repr(kind))
        if text.split("[")[0].rsplit(".", 1)[-1] in ("ClassVar", "InitVar"):
            raise TypeError(f"record {cls.__qualname__}: {name} is a {text}, which records do not take")
        if name not in types:
            names.append(name)
        types[name] = kind
        value = getattr(cls, name, _MISSING)  # (a default of a base's is inherited, as data classes inherit it)
        show = True
        if isinstance(value, _Field):
            value, show = value.default, value.repr
            if value is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, value)
        if value is not _MISSING and type(value).__hash__ is None:
            raise ValueError(f"mutable default {type(value)} for field {name} is not allowed: use default_factory")
        defaults.pop(name, None)
        if value is not _MISSING:
            defaults[name] = value
        shown.discard(name)
        if show:
            shown.add(name)
    seen_default = None
    for name in names:
        if name in defaults:
            seen_default = name
        elif seen_default is not None:
            after = f" {seen_default!r}" if sys.version_info >= (3, 13) else ""
            raise TypeError(f"non-default argument {name!r} follows default argument{after}")
    return _Spec(tuple(names), types, defaults, frozenset(shown), frozen)


def _init(cls, spec: _Spec):
    """``__init__`` with the fields as its parameters, compiled for this class (in its module's
    globals, so that its annotations resolve there, as a data class's do)."""
    me = "__record_self__" if "self" in spec.names else "self"
    assign = "__record_setattr__({me}, {0!r}, {0})" if spec.frozen else "{me}.{0} = {0}"
    body = [assign.format(name, me=me) for name in spec.names]
    if hasattr(cls, "__post_init__"):
        body.append(f"{me}.__post_init__()")
    params = ", ".join([me, *spec.names])
    source = (f"def __create_fn__(__record_setattr__):\n def __init__({params}):\n"
              + "".join(f"  {line}\n" for line in body or ["pass"]) + " return __init__\n")
    module = sys.modules.get(cls.__module__)
    namespace: dict = {}
    exec(compile(source, f"<record {cls.__qualname__}>", "exec"),
         module.__dict__ if module is not None else {}, namespace)
    init = namespace["__create_fn__"](object.__setattr__)
    defaults = tuple(spec.defaults[name] for name in spec.names if name in spec.defaults)
    init.__defaults__ = defaults or None
    init.__annotations__ = {**{name: spec.types[name] for name in spec.names}, "return": None}
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


_in_repr = set()  # (id, thread) of the records whose __repr__ is running: an instance within itself is "..."


def _repr(self) -> str:
    key = (id(self), _thread.get_ident())
    if key in _in_repr:
        return "..."
    _in_repr.add(key)
    try:
        spec = self.__record__
        return f"{type(self).__qualname__}(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in spec.names
                                                          if name in spec.shown) + ")"
    finally:
        _in_repr.discard(key)


if sys.version_info >= (3, 13):
    def _eq(self, other):  # field by field, as 3.13's data classes compare
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        result = True
        for n in self.__record__.names:
            result = getattr(self, n) == getattr(other, n)
            if not result:
                return result
        return result
else:
    def _eq(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = self.__record__.names
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)


def _hash(self) -> int:
    return hash(tuple(getattr(self, n) for n in self.__record__.names))


def _replace(self, /, **changes):
    return replace(self, **changes)


def _frozen_methods(cls, names):
    def __setattr__(self, name, value):
        if type(self) is cls or name in names:
            from dataclasses import FrozenInstanceError

            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self, name):
        if type(self) is cls or name in names:
            from dataclasses import FrozenInstanceError

            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for fn in (__setattr__, __delattr__):
        fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
    return __setattr__, __delattr__


def record(cls=None, /, *, frozen: bool = False):
    """The class as ``@dataclass`` (``frozen=True``: ``@dataclass(frozen=True)``) makes it (see the module)."""

    def wrap(cls):
        own = cls.__dict__  # (a live view: read what the class itself defines before anything is set)
        class_hash = own.get("__hash__", _MISSING)
        explicit_hash = not (class_hash is _MISSING or (class_hash is None and "__eq__" in own))
        defined = {name for name in ("__init__", "__repr__", "__eq__", "__match_args__", "__replace__")
                   if name in own}
        spec = _spec(cls, frozen)
        cls.__record__ = spec
        if "__init__" not in defined:
            cls.__init__ = _init(cls, spec)
        if "__repr__" not in defined:
            cls.__repr__ = _repr
        if "__eq__" not in defined:
            cls.__eq__ = _eq
        if frozen:
            for name in ("__setattr__", "__delattr__"):
                if name in own:
                    raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
            cls.__setattr__, cls.__delattr__ = _frozen_methods(cls, spec.names)
        if not explicit_hash:
            cls.__hash__ = _hash if frozen else None
        if "__match_args__" not in defined:
            cls.__match_args__ = spec.names
        if "__replace__" not in defined:
            cls.__replace__ = _replace
        cls.__dataclass_fields__ = _Lazy("__dataclass_fields__")
        cls.__dataclass_params__ = _Lazy("__dataclass_params__")
        abc.update_abstractmethods(cls)
        return cls

    return wrap if cls is None else wrap(cls)


def replace(obj, /, **changes):
    """:func:`dataclasses.replace` of a record (of another class, that function's answer)."""
    spec = type(obj).__dict__.get("__record__")
    if spec is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)
    for name in spec.names:
        if name not in changes:
            changes[name] = getattr(obj, name)
    return type(obj)(**changes)


def values(obj) -> dict:
    """The fields of a record (those its record class declares) and their values, in order."""
    return {name: getattr(obj, name) for name in obj.__record__.names}
