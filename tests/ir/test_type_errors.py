"""The bad-program corpus: each ill-typed program fails with one clear `LiftTypeError` naming the pattern,
the expected and actual types, and the place."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import lift
from lift import (ArrayType, AsScalar, AsVector, Double, Float, Get, Int, Iterate, Join, Map, Pad,
                  PartRed, Reduce, ReduceSeq, ReorderStride, SizeVar, Slide, Split, Transpose, Tuple,
                  TupleType, UserFun, VectorType, Vectorize, Zip, fun, userfun)

from userfuns import add, neg

N = SizeVar("N")
M = SizeVar("M")


@userfun
def dadd(x: Double, y: Double) -> Double:
    return x + y


F = ArrayType(Float, N)
F1024 = ArrayType(Float, 1024)

CORPUS = [
    ("map of a scalar", [Float], lambda x: Map(neg)(x), r"map\(neg\) expects an array, got Float \(at body.f\)"),
    ("zip of different lengths", [F, ArrayType(Float, M)], lambda x, y: Zip(x, y),
     r"zip expects arrays of one length, got Float\[N\], Float\[M\]"),
    ("zip of a scalar", [F, Float], lambda x, y: Zip(x, y), r"zip expects arrays, got Float"),
    ("split 3 of 1024", [F1024], lambda x: Split(3)(x), r"split-3 cannot divide an array of length 1024 into chunks of 3"),
    ("split of a scalar", [Float], lambda x: Split(2)(x), r"split-2 expects an array, got Float"),
    ("split by zero", [F], lambda x: Split(0)(x), r"split-0: the factor must be positive"),
    ("join of 1-D", [F], lambda x: Join()(x), r"join expects an array of arrays, got Float\[N\]"),
    ("user function arity", [F], lambda x: Map(add)(x), r"add expects 2 argument\(s\), got 1: Float"),
    ("user function argument type", [ArrayType(Int, N)], lambda x: Map(neg)(x),
     r"neg expects argument 1 \(x\) of type Float, got Int"),
    ("double operator on floats", [F], lambda x: Reduce(dadd, 0.0)(x),
     r"dadd expects argument 1 \(x\) of type Double, got Float"),
    ("asVector of a length not divisible", [ArrayType(Float, 1022)], lambda x: AsVector(4)(x),
     r"asVector-4 cannot divide an array of length 1022 into chunks of 4"),
    ("asVector of vectors", [ArrayType(VectorType(Float, 4), N)], lambda x: AsVector(4)(x),
     r"asVector-4 expects an array of scalars, got Float4\[N\]"),
    ("asScalar of scalars", [F], lambda x: AsScalar()(x), r"asScalar expects an array of vectors, got Float\[N\]"),
    ("reduce init type", [F], lambda x: Reduce(add, 0)(x), r"add expects argument 1 \(x\) of type Float, got Int"),
    ("reduce operator result", [F], lambda x: ReduceSeq(lambda a, b: Tuple(a, b), 0.0)(x),
     r"reduce-seq\(λ a, b. tuple\(a, b\), 0.0\) expects an operator returning the type of its initial value Float, "
     r"got one returning <Float, Float>"),
    ("reduce of a scalar", [Float], lambda x: Reduce(add, 0.0)(x), r"reduce\(add, 0.0\) expects an array, got Float"),
    ("get out of range", [ArrayType(TupleType(Float, Float), N)], lambda x: Map(Get(2))(x),
     r"get-2 expects a tuple of at least 3 components, got <Float, Float>"),
    ("get of a scalar", [F], lambda x: Map(Get(0))(x), r"get-0 expects a tuple of at least 1 components, got Float"),
    ("transpose of 1-D", [F], lambda x: Transpose()(x), r"transpose expects a 2-D array, got Float"),
    ("iterate growing the element type", [F], lambda x: Iterate(2, Split(2))(x),
     r"iterate-2\(split-2\) expects a function that keeps the element type Float, got Float\[2\]"),
    ("iterate of a scalar function", [F], lambda x: Iterate(3, neg)(x), r"neg expects argument 1 \(x\) of type Float, got Float\[N\]"),
    ("vectorize of a vector function", [ArrayType(VectorType(Float, 4), N)],
     lambda x: Map(Vectorize(4, UserFun("v", ("a",), "return a;", (VectorType(Float, 4),), VectorType(Float, 4))))(x),
     r"vectorize-4\(v\) expects a scalar user function, got v over Float4"),
    ("vectorize over ints", [ArrayType(Int, N)], lambda x: Map(Vectorize(4, neg))(x),
     r"neg expects argument 1 \(x\) of type Float4, got Int"),
    ("vectorize of a lambda", [F], lambda x: Map(Vectorize(4, lambda v: neg(neg(v))))(x),
     r"vectorize-4\(neg ∘ neg\) expects a user function to vectorise \(push vectorize into lambdas first\)"),
    ("part-red of a length not divisible", [F1024], lambda x: PartRed(add, 0.0, 3)(x),
     r"part-red\(add, 0.0, 3\) cannot divide an array of length 1024 into chunks of 3"),
    ("slide window too large", [ArrayType(Float, 2)], lambda x: Slide(3, 1)(x),
     r"slide\(3, 1\) expects an array of at least 3 elements, got Float\[2\]"),
    ("pad with a value of another type", [F], lambda x: Pad(1, 1, 0)(x),
     r"pad\(1, 1, 0\) expects a boundary value of the element type Float, got Int"),
    ("reorder-stride not dividing", [F1024], lambda x: ReorderStride(3)(x),
     r"reorder-stride-3 cannot divide an array of length 1024 into chunks of 3"),
    ("map lambda arity", [F], lambda x: Map(lambda a, b: add(a, b))(x),
     r"λ a, b. add\(a, b\) expects 2 argument\(s\), got 1: Float"),
    ("nested map of 1-D", [F], lambda x: Map(Map(neg))(x), r"map\(neg\) expects an array, got Float \(at body.f.f\)"),
    ("user function of a reduction's result", [ArrayType(F, M)], lambda x: Map(lambda r: neg(Reduce(add, 0.0)(r)))(x),
     r"neg expects argument 1 \(x\) of type Float, got Float\[1\] \(a reduction's result is an array of one element: "
     r"map the function over it, `Map\(lambda s: ...\)\(Reduce\(...\)\(x\)\)`\)"),
]


@pytest.mark.parametrize("title, types, body, message", [c for c in CORPUS],
                         ids=[c[0] for c in CORPUS])
def test_bad_program_is_rejected_with_its_message(title, types, body, message):
    with pytest.raises(lift.LiftTypeError, match=message):
        fun(types, body)


def test_corpus_size():
    assert len(CORPUS) >= 25


def test_every_type_error_is_a_lift_error():
    assert issubclass(lift.LiftTypeError, lift.LiftError)


def test_untyped_program_is_rejected():
    with pytest.raises(lift.LiftTypeError, match="parameter x of the program has no declared type"):
        lift.infer(fun(lambda x: Map(neg)(x)))


def test_userfun_declaration_errors():
    with pytest.raises(lift.LiftTypeError, match="2 parameters but 1 parameter types"):
        UserFun("f", ("a", "b"), "return a;", (Float,), Float)
    with pytest.raises(lift.LiftTypeError, match="not a C identifier"):
        UserFun("my fun", ("a",), "return a;", (Float,), Float)


def test_pattern_argument_errors():
    with pytest.raises(lift.LiftTypeError, match="Split: expected an integer or a size expression"):
        Split(2.5)
    with pytest.raises(lift.LiftTypeError, match="AsVector: width must be 2, 3, 4, 8 or 16, got 5"):
        AsVector(5)
    with pytest.raises(lift.LiftTypeError, match="Pad: boundary must be one of"):
        Pad(1, 1, "reflect-ish")
    with pytest.raises(lift.LiftTypeError, match="expected a function, got the value"):
        Map(lift.Float(1.0))


def test_array_literal_errors():
    from lift.ir.nodes import Literal

    assert Literal(1, ArrayType(ArrayType(Float, 3), N)).value == 1.0
    with pytest.raises(lift.LiftTypeError, match=r"an array literal is one scalar, the value of every element: "
                                                 r"\[1.0, 2.0\] of the type Float\[2\] is not"):
        Literal([1.0, 2.0], ArrayType(Float, 2))
    assert Literal(0.0, ArrayType(VectorType(Float, 4), N)).value == 0.0  # every lane of every element
    with pytest.raises(lift.LiftTypeError, match="an array literal is one scalar"):
        Literal(0.0, ArrayType(TupleType(Float, Float), N))
    with pytest.raises(lift.LiftTypeError, match="literal 'x' does not fit the type Float"):
        Literal("x", ArrayType(Float, N))


@pytest.mark.parametrize("value", [2**31, -2**31 - 1, 1 << 40])
def test_an_int_literal_beyond_32_bits_is_a_type_error(value):
    """OpenCL's `int` and the interpreter's int32 hold 32 bits: a larger literal was cut short in C and overflowed
    numpy (a crash in `interpret`, a wrong kernel from `compile`)."""
    from lift.ir.nodes import Literal

    assert Literal(2**31 - 1, Int).value == 2**31 - 1 and Literal(-2**31, Int).value == -2**31
    with pytest.raises(lift.LiftTypeError, match=f"literal {value} does not fit the type Int .a 32-bit int"):
        fun([ArrayType(Int, N)], lambda x: Map(lambda a: a + value)(x))
    with pytest.raises(lift.LiftTypeError, match=f"literal {value * 10**400} does not fit the type Float"):
        Literal(value * 10**400, Float)


@given(st.integers(-2**40, 2**40) | st.integers())
@example(2**31 - 1)
@example(-2**31)
@example(2**31)
def test_an_int_literal_is_accepted_exactly_when_32_bits_hold_it(value):
    """`x + value` over Int arrays: a type error beyond int32's range, the interpreter's int32 sum within it."""
    if not -2**31 <= value < 2**31:
        with pytest.raises(lift.LiftTypeError, match="does not fit the type Int"):
            fun([ArrayType(Int, N)], lambda x: Map(lambda a: a + value)(x))
        return
    program = fun([ArrayType(Int, N)], lambda x: Map(lambda a: a + value)(x))
    np.testing.assert_array_equal(lift.interpret(program, np.zeros(3, np.int32)), np.full(3, value, np.int32))


def test_a_tuple_of_types_is_a_tuple_type_in_arrays_and_parameters():
    """`ArrayType((Float, Int), N)` and `fun([(Float, Float)], ...)` as user functions' annotations are written."""
    assert ArrayType((Float, (Int, Float)), N) == ArrayType(TupleType(Float, TupleType(Int, Float)), N)
    program = fun([ArrayType((Float, Float), N), (Float, Int)],
                  lambda xs, t: Map(lambda p: add(Get(p, 0), Get(t, 0)))(xs))
    assert lift.infer(program).type == F
    with pytest.raises(TypeError, match="ArrayType: element must be a type or a tuple of types, got \\(Float, 3\\)"):
        ArrayType((Float, 3), N)
