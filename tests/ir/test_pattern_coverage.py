"""Every pattern is handled by the type checker, the interpreter and both printers.

The patterns are discovered by walking `Pattern`'s subclasses, so a new pattern cannot be forgotten: it
fails here until each of these mappers has a method for it (or for a base class), and until it has an
example below, which is type checked, interpreted against numpy and printed (the Python source evaluates
back to an equal program).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import lift
from lift import (ArrayType, AsScalar, AsVector, Concat, Drop, Float, Get, Id, Iterate, IterateHost, Join, Map,
                  MapAccumSeq, MapGlb, MapLcl, MapSeq, MapSeqSlide, MapSeqUnroll, MapSeqUnswitch, MapWrg, Pad,
                  PadToMultiple, PartRed, Reduce, ReduceSeq, ReduceSeqUnroll, Reorder, ReorderStride, SizeVar, Slide,
                  Split, Take, ToGlobal, ToLocal, ToPrivate, Transpose, Tuple, UserFun, Unzip, VectorType, Vectorize, Zip, fun,
                  infer, interpret, paper, python_source)
from lift.ir.nodes import Lambda
from lift.ir.routine import Routine
from lift.ir import opencl_patterns as O, patterns as P
from lift.ir.interpreter import Interpreter
from lift.ir.mapper import handles
from lift.ir.printer import PaperNotation, PythonSource
from lift.ir.typecheck import TypeInference

N, M = SizeVar("N"), SizeVar("M")
A = ArrayType(Float, N)
A2 = ArrayType(ArrayType(Float, N), M)
A4 = ArrayType(VectorType(Float, 4), N)

neg = UserFun("neg", ("x",), "return -x;", (Float,), Float, python=lambda x: -x)
add = UserFun("add", ("x", "y"), "return x + y;", (Float, Float), Float, python=lambda x, y: x + y)
double = UserFun("twice", ("x",), "return 2.0f * x;", (Float,), Float, python=lambda x: 2 * x)


def _patterns() -> list:
    """The concrete (dataclass) patterns of lift.ir.patterns and lift.ir.opencl_patterns, found by walking the
    subclasses of Pattern."""
    found, todo = [], [P.Pattern]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__ in (P.__name__, O.__name__) and "__dataclass_fields__" in vars(cls):
            found.append(cls)
    return sorted(set(found), key=lambda c: c.__name__)


PATTERNS = _patterns()

x16 = np.arange(16, dtype=np.float32) - 5.5
y16 = np.linspace(1.0, 4.0, 16, dtype=np.float32)
m34 = np.arange(12, dtype=np.float32).reshape(3, 4)
v16 = np.arange(16, dtype=np.float32).reshape(4, 4)


def _reorder_stride(x, s):
    n = len(x) // s
    return x[[i // n + s * (i % n) for i in range(len(x))]]


# One program per pattern: (the program, its inputs, the result numpy computes, how to compare).
EXAMPLES = {
    P.Map: (fun([A], lambda x: Map(neg)(x)), (x16,), -x16),
    P.MapSeq: (fun([A], lambda x: MapSeq(neg)(x)), (x16,), -x16),
    P.MapSeqUnroll: (fun([A], lambda x: MapSeq(MapSeqUnroll(neg))(Split(4)(x))), (x16,), -x16.reshape(4, 4)),
    P.MapSeqUnswitch: (fun([A], lambda x: MapSeqUnswitch(neg, rolled=True)(x)), (x16,), -x16),
    P.MapSeqSlide: (fun([A], lambda x: MapSeqSlide(ReduceSeq(add, 0.0), 3, 2)(x)), (x16[:15],),
                    np.lib.stride_tricks.sliding_window_view(x16[:15], 3)[::2].sum(axis=1, keepdims=True)),
    P.MapGlb: (fun([A2], lambda x: MapGlb(1)(MapGlb(neg))(x)), (m34,), -m34),
    P.MapWrg: (fun([A2], lambda x: MapWrg(MapLcl(double))(x)), (m34,), 2 * m34),
    P.MapLcl: (fun([A], lambda x: MapLcl(double)(x)), (x16,), 2 * x16),
    P.Reduce: (fun([A], lambda x: Reduce(add, 0.0)(x)), (x16,), np.array([x16.sum()])),
    P.ReduceSeq: (fun([A], lambda x: ReduceSeq(add, 1.0)(x)), (x16,), np.array([x16.sum() + 1])),
    P.ReduceSeqUnroll: (fun([A], lambda x: MapSeq(ReduceSeqUnroll(add, 1.0))(Split(4)(x))), (x16,),
                        x16.reshape(4, 4).sum(axis=1, keepdims=True) + 1),
    P.PartRed: (fun([A], lambda x: PartRed(add, 0.0, 4)(x)), (x16,), x16.reshape(4, 4).sum(axis=1)),
    P.MapAccumSeq: (fun([A], lambda x: MapAccumSeq(lambda acc, e: Tuple(add(acc, e), add(acc, e)), 0.0)(x)),
                    (x16,), (np.cumsum(x16), np.array([x16.sum()]))),
    P.Zip: (fun([A, A], lambda x, y: Map(lambda t: add(Get(t, 0), double(Get(t, 1))))(Zip(x, y))),
            (x16, y16), x16 + 2 * y16),
    P.Tuple: (fun([A, A], lambda x, y: Tuple(Map(neg)(x), y)), (x16, y16), (-x16, y16)),
    P.Unzip: (fun([A, A], lambda x, y: Unzip()(Zip(y, x))), (x16, y16), (y16, x16)),
    P.Get: (fun([A, A], lambda x, y: Get(Unzip()(Zip(x, y)), 1)), (x16, y16), y16),
    P.Split: (fun([A], lambda x: Split(4)(x)), (x16,), x16.reshape(4, 4)),
    P.Join: (fun([A2], lambda x: Join()(x)), (m34,), m34.reshape(-1)),
    P.Iterate: (fun([A], lambda x: Iterate(3, Map(double))(x)), (x16,), 8 * x16),
    P.IterateHost: (fun([A], lambda x: IterateHost(3, MapGlb(double))(x)), (x16,), 8 * x16),
    P.Reorder: (fun([A], lambda x: Reorder()(x)), (x16,), x16),
    P.Transpose: (fun([A2], lambda x: Transpose()(x)), (m34,), m34.T),
    P.Id: (fun([A], lambda x: Map(Id())(x)), (x16,), x16),
    P.Slide: (fun([A], lambda x: Slide(3, 2)(x)), (x16[:15],),
              np.lib.stride_tricks.sliding_window_view(x16[:15], 3)[::2]),
    P.Pad: (fun([A], lambda x: Pad(1, 2, "clamp")(x)), (x16,), np.pad(x16, (1, 2), mode="edge")),
    P.PadToMultiple: (fun([A], lambda x: PadToMultiple(8, 0.0)(x)), (x16[:13],), np.pad(x16[:13], (0, 3))),
    P.Take: (fun([A], lambda x: Take(13)(PadToMultiple(8, 0.0)(x))), (x16[:13],), x16[:13]),
    P.Drop: (fun([A], lambda x: Take(9)(Drop(4)(x))), (x16,), x16[4:13]),
    P.Concat: (fun([A, A], lambda x, y: Concat(Map(neg)(Take(13)(x)), Drop(7)(y))), (x16, y16),
               np.concatenate([-x16[:13], y16[7:]])),
    ReorderStride: (fun([A], lambda x: ReorderStride(2)(x)), (x16,), _reorder_stride(x16, 2)),
    ToGlobal: (fun([A], lambda x: ToGlobal(MapSeq(neg))(x)), (x16,), -x16),
    ToLocal: (fun([A], lambda x: ToLocal(MapLcl(neg))(x)), (x16,), -x16),
    ToPrivate: (fun([A], lambda x: ToPrivate(MapSeq(double))(x)), (x16,), 2 * x16),
    AsVector: (fun([A], lambda x: AsVector(4)(x)), (x16,), x16.reshape(4, 4)),
    AsScalar: (fun([A4], lambda x: AsScalar()(x)), (v16,), v16.reshape(-1)),
    Vectorize: (fun([A4], lambda x: Map(Vectorize(4, neg))(x)), (v16,), -v16),
}

MAPPERS = (TypeInference, Interpreter, PaperNotation, PythonSource)


def _uses(node, cls) -> bool:
    return any(type(n) is cls for n in node.subterms())


def test_the_patterns_are_discovered():
    names = {c.__name__ for c in PATTERNS}
    assert {"Map", "MapWrg", "ReduceSeq", "Zip", "Split", "ToLocal", "Vectorize"} <= names
    assert not names & {"Pattern", "AbstractMap", "AbstractReduce", "Fold", "AddressSpaceCast"}
    assert all(dataclasses.is_dataclass(c) for c in PATTERNS)


@pytest.mark.parametrize("cls", PATTERNS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("mapper", MAPPERS, ids=lambda m: m.__name__)
def test_every_mapper_handles_every_pattern(mapper, cls):
    assert handles(mapper, cls), f"{mapper.__name__} has no map_ method for {cls.__name__} or a base class"


@pytest.mark.parametrize("cls", (Lambda, UserFun, Routine), ids=lambda c: c.__name__)
@pytest.mark.parametrize("mapper", MAPPERS, ids=lambda m: m.__name__)
def test_every_mapper_handles_the_other_functions(mapper, cls):
    assert handles(mapper, cls)


@pytest.mark.parametrize("cls", PATTERNS, ids=lambda c: c.__name__)
def test_every_pattern_types_interprets_and_prints(cls):
    assert cls in EXAMPLES, f"add an example program using {cls.__name__} to EXAMPLES"
    program, inputs, expected = EXAMPLES[cls]
    assert _uses(program, cls)
    typed = infer(program)
    got = interpret(program, *inputs)
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
    else:
        got, expected = (got,), (expected,)
    for g, e in zip(got, expected):
        if cls is P.Reorder:
            g, e = np.sort(g), np.sort(e)
        np.testing.assert_allclose(g, e, rtol=1e-6)
        assert np.shape(g) == np.shape(e)
    text = paper(program)
    assert cls.paper in text, text
    again = eval(python_source(program), {**vars(lift), "neg": neg, "add": add, "twice": double})
    assert again == program
    assert infer(again).type == typed.type


def test_a_pattern_no_mapper_handles_is_one_clear_error():
    @dataclasses.dataclass(frozen=True, eq=False)
    class Unknown(P.Pattern):
        paper = "unknown"

    assert not handles(TypeInference, Unknown) and not handles(Interpreter, Unknown)
    with pytest.raises(lift.LiftTypeError, match="no typing rule for Unknown"):
        infer(fun([A], lambda x: Unknown()(x)))
