"""bleu_core.records: a record behaves as the data class of the same fields does.

Every class below is made twice from one body, once with ``@dataclass`` and once with ``@record``, and
the two are compared as their users meet them: the constructor's signature and messages, repr, equality,
hashing, frozenness, pickling, and :mod:`dataclasses`' own functions. The expected behaviour is the
standard library's, run in the test.
"""

from __future__ import annotations

import abc
import copy
import dataclasses
import inspect
import os
import pickle
import subprocess
import sys
import typing

import pytest

from bleu_core import records

from ..oracle import REPO

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Optional, Tuple


def _outcome(fn):
    """What calling ``fn`` gives: ("ok", value) or (exception type, message)."""
    try:
        return "ok", fn()
    except Exception as exc:  # the comparison is of the exception itself
        return type(exc), str(exc)


class Base:
    """A plain base class (as the metrics' ``Metric`` and the scores' ``Score``)."""

    kind = "base"

    def describe(self):
        return f"{self.kind}:{self!r}"


def make(decorate, frozen):
    """The same classes, decorated by ``decorate(frozen=...)`` (dataclass or record)."""

    @decorate(frozen=frozen)
    class Point(Base):
        """A point."""

        x: int
        y: int = 0
        label: Optional[str] = None
        hidden: str = (records.field(default="h", repr=False) if decorate is records.record
                       else dataclasses.field(default="h", repr=False))

    @decorate(frozen=frozen)
    class Checked(Base):
        """Validates in __post_init__ (as the metrics do), writing a field through object.__setattr__."""

        order: int = 4
        weights: Optional[Tuple[float, ...]] = None

        def __post_init__(self):
            if self.order < 1:
                raise ValueError(f"order {self.order} < 1")
            object.__setattr__(self, "weights", self.weights or (1 / self.order,) * self.order)

    @decorate(frozen=frozen)
    class Point3(Point):
        """A record deriving from a record: a new field, and a new default for an old one."""

        z: int = 5
        y: int = 7

    return Point, Checked, Point3


PAIRS = {frozen: (make(dataclasses.dataclass, frozen), make(records.record, frozen)) for frozen in (False, True)}

CALLS = [((1,), {}), ((1, 2), {}), ((), {"x": 3, "label": "a"}), ((), {}), ((1,), {"x": 2}), ((1,), {"w": 2}),
         ((1, 2, "l", "h2", 9), {}), ((), {"order": 0}), ((), {"order": 2}), ((2, (0.5, 0.5)), {}), ((1, 2, 3), {})]


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("which", range(3))
def test_a_record_is_what_the_data_class_is(frozen, which):
    dc, rec = (classes[which] for classes in PAIRS[frozen])
    assert str(inspect.signature(rec)) == str(inspect.signature(dc))
    assert rec.__init__.__qualname__ == dc.__init__.__qualname__
    assert rec.__match_args__ == dc.__match_args__
    assert (rec.__hash__ is None) == (dc.__hash__ is None)
    for args, kwargs in CALLS:
        a, b = _outcome(lambda: dc(*args, **kwargs)), _outcome(lambda: rec(*args, **kwargs))
        assert a[0] == b[0] and (a[0] == "ok" or a[1] == b[1]), (args, kwargs, a, b)
        if a[0] != "ok":
            continue
        x, y = a[1], b[1]
        assert repr(y) == repr(x) and y.describe() == x.describe()
        assert y == rec(*args, **kwargs) and not y != rec(*args, **kwargs)
        assert (y == x) is False and y.__eq__(x) is NotImplemented  # another class, as two data classes
        if frozen:
            assert hash(y) == hash(x)
        for do in (lambda o: setattr(o, "x", 9), lambda o: setattr(o, "extra", 1), lambda o: delattr(o, "x")):
            u, v = _outcome(lambda: do(copy.copy(x))), _outcome(lambda: do(copy.copy(y)))
            assert u == v
        assert dataclasses.is_dataclass(y) and dataclasses.is_dataclass(rec)
        assert [(f.name, f.default, f.repr) for f in dataclasses.fields(y)] == \
               [(f.name, f.default, f.repr) for f in dataclasses.fields(x)]
        assert dataclasses.asdict(y) == dataclasses.asdict(x)
        assert records.values(y) == dataclasses.asdict(x)
        first = dataclasses.fields(x)[0].name
        assert repr(records.replace(y, **{first: 2})) == repr(dataclasses.replace(x, **{first: 2}))
        assert repr(dataclasses.replace(y, **{first: 2})) == repr(dataclasses.replace(x, **{first: 2}))
        assert copy.deepcopy(y) == y and copy.copy(y) == y


@pytest.mark.parametrize("frozen", [False, True])
def test_a_data_class_may_derive_from_a_record(frozen):
    """A plugin's ``@dataclass`` subclass of a built-in metric gets the record's fields as its own."""
    made = {}
    for name, classes in zip(("dc", "rec"), PAIRS[frozen]):
        @dataclasses.dataclass(frozen=frozen)
        class Sub(classes[0]):
            """A subclass adding a field."""

            extra: int = 1

        made[name] = Sub
    dc, rec = made["dc"], made["rec"]
    assert str(inspect.signature(rec)) == str(inspect.signature(dc))
    assert repr(rec(1, extra=2)) == repr(dc(1, extra=2))
    y = rec(1, 2, extra=3)
    assert records.replace(y, x=5) == rec(5, 2, extra=3)  # (a subclass: dataclasses.replace's answer)
    assert records.replace(y, x=5).extra == 3


def test_what_records_refuse_as_data_classes_do():
    for decorate in (dataclasses.dataclass, records.record):
        with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
            @decorate
            class Bad:
                a: int = 1
                b: int

        with pytest.raises(ValueError, match="mutable default <class 'list'> for field a is not allowed"):
            @decorate
            class Mutable:
                a: list = []

    @dataclasses.dataclass
    class Data:
        a: int = 1

    with pytest.raises(TypeError, match="cannot derive from the data class"):
        @records.record
        class FromData(Data):
            b: int = 2

    @records.record(frozen=True)
    class Frozen:
        a: int = 1

    with pytest.raises(TypeError, match="Thawed: frozen=False but its base .*Frozen has frozen=True"):
        @records.record
        class Thawed(Frozen):
            b: int = 2


def test_the_library_classes_are_records():
    """The classes ``beambleu score`` builds on every run (see test_cli_startup: no dataclasses import)."""
    from beambleu.io.textfiles import Source
    from bleu_core import scoring
    from bleu_core.metrics.bleu.metric import Bleu
    from bleu_core.metrics.bleu.score import BleuScore
    from bleu_core.metrics.chrf.metric import Chrf
    from bleu_core.metrics.chrf.score import ChrfScore
    from bleu_core.metrics.ter.metric import Ter
    from bleu_core.metrics.ter.score import TerScore
    from bleu_core.protocol import Option

    for cls in (Source, Bleu, BleuScore, Chrf, ChrfScore, Ter, TerScore, Option, scoring.Resampling, scoring.Interval,
                scoring.Paired, scoring.MetricResult):
        assert "__record__" in cls.__dict__, cls
        assert tuple(inspect.signature(cls).parameters) == tuple(f.name for f in dataclasses.fields(cls))
    # sacrebleu's defaults, as the constructors take them (hand-written from sacrebleu 2.6.0's BLEU/CHRF/TER)
    assert Bleu() == Bleu(tokenize="13a", lowercase=False, smooth_method="exp", smooth_value=None, max_ngram_order=4,
                          effective_order=False)
    assert records.replace(Bleu(), lowercase=True) == Bleu(lowercase=True)
    assert Chrf(word_order=2) == Chrf(6, 2, 2) and hash(Chrf(word_order=2)) == hash(Chrf(6, 2, 2))
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'lowercase'"):
        Bleu().lowercase = True
    for obj in (Bleu(tokenize="intl"), Chrf(word_order=2), Ter(normalized=True), Source(("a", "b"), fields=2),
                scoring.Resampling("bootstrap", 10), Option("x", int, 1, "--x-y")):
        assert pickle.loads(pickle.dumps(obj)) == obj
    assert repr(Ter()) == "Ter(normalized=False, no_punct=False, asian_support=False, case_sensitive=False)"
    assert "name=" not in repr(BleuScore(1.0, [1], [1], [100.0], 1.0, 1, 1))  # field(repr=False), as before


def _both(body):
    """``body(decorate, field)`` run with dataclasses' and with records' (its classes, or the exception each raised)."""
    out = []
    for decorate, make_field in ((dataclasses.dataclass, dataclasses.field), (records.record, records.field)):
        try:
            out.append(body(decorate, make_field))
        except Exception as exc:  # the comparison is of the exception itself
            out.append((type(exc), str(exc)))
    return out


def _described(cls):
    """What a user meets of a class: its signature, the fields' names, defaults and repr flags, an instance's repr."""
    if isinstance(cls, tuple):
        return cls
    return (str(inspect.signature(cls)), [(f.name, f.default, f.repr) for f in dataclasses.fields(cls)],
            repr(_outcome(lambda: cls(1))[1]).replace(type(cls).__name__, ""))


# the review of the first version found each of these different from a data class (each a failing case then)
def test_inherited_defaults_and_several_bases_as_data_classes_have_them():
    def redeclared(decorate, field):
        @decorate
        class P:
            x: int
            y: int = 0

        @decorate
        class C(P):
            y: int  # redeclared without a value: the default is still P's

        return C

    def plain_default(decorate, field):
        class B:
            x = 5

        @decorate
        class A(B):
            x: int

        return A

    def several_bases(decorate, field):
        @decorate
        class A:
            x: int = 1

        @decorate
        class B(A):
            x: int = field(repr=False)

        @decorate
        class C(A):
            z: int = 3

        @decorate
        class D(B, C):
            pass

        return D

    for body in (redeclared, plain_default, several_bases):
        dc, rec = _both(body)
        assert _described(rec) == _described(dc), body.__name__


def test_what_a_class_defines_itself_is_kept_and_refusals_are_the_same():
    def own_init(decorate, field):
        @decorate
        class A:
            x: int = 1

            def __init__(self, a, b):
                self.x = a + b

        return repr(A(1, 2))

    def unhashable_default(decorate, field):
        @decorate
        class U:
            x: bytearray = bytearray(b"a")

        return U

    def no_annotation(decorate, field):
        @decorate
        class N:
            y = field(default=2)

        return N

    def frozen_unhashable(decorate, field):
        @decorate(frozen=True)
        class H:
            x: int = 1
            __hash__ = None

        return H.__hash__ is None

    def self_field(decorate, field):
        @decorate
        class S:
            self: int
            other: int = 2

        return repr(S(self=1)), str(inspect.signature(S))

    def recursive(decorate, field):
        @decorate
        class R:
            items: list

        r = R([])
        r.items.append(r)
        return repr(r)

    def abstract_repr(decorate, field):
        class Base(abc.ABC):
            @abc.abstractmethod
            def __repr__(self):
                ...

        @decorate
        class Concrete(Base):
            x: int = 1

        return repr(Concrete())

    for body in (own_init, unhashable_default, no_annotation, frozen_unhashable, self_field, recursive, abstract_repr):
        dc, rec = _both(body)
        assert rec == dc, body.__name__


class Thing:
    """A module-level type named by a field's annotation."""


def test_init_annotations_resolve_in_the_module():
    for decorate in (dataclasses.dataclass, records.record):
        @decorate
        class Holder:
            t: Thing

        assert typing.get_type_hints(Holder.__init__) == {"t": Thing, "return": type(None)}


@pytest.mark.skipif(sys.version_info < (3, 13), reason="copy.replace and field-by-field __eq__ are Python 3.13's")
def test_python_3_13s_replace_and_equality():
    nan = float("nan")
    dc, rec = _both(lambda decorate, field: decorate(type("I", (), {"__annotations__": {"x": "float"}})))
    assert copy.replace(rec(1.0), x=2.0) == rec(2.0)
    assert (rec(nan) == rec(nan)) == (dc(nan) == dc(nan))


def test_a_record_class_pickled_by_value_round_trips():
    """Beam's dill pickler copies a class of __main__ by value; the lazy fields hold no reference back to
    their class (one did, and dill then pickled the class by reference, which a worker cannot import)."""
    dill = pytest.importorskip("dill")
    code = ("import dill, sys\n"
            "from bleu_core.records import record\n"
            "@record(frozen=True)\n"
            "class Local:\n"
            "    x: int = 1\n"
            "sys.stdout.buffer.write(dill.dumps([Local(2)]))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    blob = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env).stdout
    (obj,) = dill.loads(blob)
    assert repr(obj) == "Local(x=2)" and dataclasses.fields(obj)[0].default == 1
