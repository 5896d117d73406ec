"""Python operators on IR values in plain lambdas: each builds a call of a built-in user function, which the
reference interpreter and the OpenCL kernel both compute as numpy does."""

import numpy as np
import pytest

import lift
from lift import ArrayType, Double, Float, Get, Int, LiftTypeError, Map, MapGlb, SizeVar, Zip, compile, fun, interpret

N = SizeVar("N")


def _both(program, *inputs):
    return interpret(program, *inputs), compile(program)(*inputs)


def test_scale_by_a_literal_as_in_the_readme():
    a = np.linspace(-2, 3, 37).astype(np.float32)
    program = fun([ArrayType(Float, N)], lambda x: MapGlb(lambda v: v * 2.0)(x))
    for got in _both(program, a):
        np.testing.assert_allclose(got, a * 2.0, rtol=1e-6)


def test_axpy_with_reflected_and_nested_operators():
    x = np.linspace(0, 1, 64).astype(np.float32)
    y = np.linspace(3, -1, 64).astype(np.float32)
    program = fun([Float, ArrayType(Float, N), ArrayType(Float, N)],
                  lambda a, xs, ys: MapGlb(lambda p: a * Get(p, 0) + Get(p, 1) - 1.0 / (2.0 + abs(-Get(p, 0))))(Zip(xs, ys)))
    want = 1.5 * x + y - 1.0 / (2.0 + np.abs(-x))
    for got in _both(program, np.float32(1.5), x, y):
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_int_division_truncates_as_in_c_and_comparisons_are_bools():
    a = np.arange(-9, 9, dtype=np.int32)
    program = fun([ArrayType(Int, N)], lambda x: MapGlb(lambda v: v / 4)(x))
    for got in _both(program, a):
        np.testing.assert_array_equal(got, np.trunc(a / 4).astype(np.int32))
    less = fun([ArrayType(Float, N)], lambda x: Map(lambda v: v < 0.5)(x))
    f = np.linspace(0, 1, 16).astype(np.float32)
    np.testing.assert_array_equal(interpret(less, f), f < 0.5)
    np.testing.assert_array_equal(interpret(fun([ArrayType(Float, N)], lambda x: Map(lambda v: lift.eq(v, 0.0))(x)), f),
                                  f == 0.0)


def test_double_operands_and_structural_equality_kept():
    d = np.linspace(0, 1, 8)
    two = lift.Literal(2.0, Double)
    program = fun([ArrayType(Double, N)], lambda x: Map(lambda v: v * two - v)(x))
    np.testing.assert_allclose(interpret(program, d), d * 2.0 - d)
    with pytest.raises(LiftTypeError, match="mul_float expects argument 1 .* Float, got Double"):
        fun([ArrayType(Double, N)], lambda x: Map(lambda v: v * v)(x))  # untyped operands are Float
    p = lift.Param("p", Float)
    assert (p * 2.0) == (p * 2.0) and isinstance((p * 2.0) == (p * 2.0), bool)


def test_mixed_operand_types_are_refused():
    with pytest.raises(LiftTypeError, match="different types"):
        lift.Param("a", Float) * lift.Param("b", Int)


def test_python_max_on_lift_values_is_refused_not_silently_wrong():
    """`max(a, b)` asks `b > a` for a truth value; a lift value has none while the program is built, so the
    choice would be made once, wrongly, for every element."""
    N = SizeVar("N")
    with pytest.raises(LiftTypeError, match="no truth value.*lift.fmax"):
        fun([ArrayType(Float, N)], lambda x: Map(lambda v: max(v, 0.0))(x))
    relu = fun([ArrayType(Float, N)], lambda x: Map(lambda v: lift.fmax(v, 0.0))(x))
    x = np.array([-1.0, 2.0, -3.0], np.float32)
    np.testing.assert_allclose(lift.interpret(relu, x), np.maximum(x, 0.0))


def test_python_source_of_operators_evaluates_back_with_lifts_names():
    """`v * 2.0`, `abs`, `lift.sqrt` on floats and doubles: their built-in user functions are written as the calls
    that build them (`operator_userfun('mul', Float)`), so the source evaluates back to an equal program."""
    two = lift.Literal(2.0, Double)
    programs = [fun([ArrayType(Float, N)], lambda x: Map(lambda v: lift.sqrt(v * 2.0 + 1.0) - abs(v))(x)),
                fun([ArrayType(Double, N)], lambda x: Map(lambda v: lift.exp(v * two) / (v - two))(x)),
                fun([ArrayType(Int, N)], lambda x: Map(lambda v: -(v / 3) < v)(x))]
    for program in programs:
        source = lift.python_source(program)
        assert "operator_userfun(" in source and eval(source, vars(lift)) == program


def test_python_source_writes_a_user_function_named_like_a_built_in_by_its_name():
    """`add_float32` (a lift arrays function), `mul_float` defined by the user: not the built-ins."""
    for name in ("add_float32", "mul_float"):
        f = lift.UserFun(name, ("x", "y"), "return x + y;", (Float, Float), Float, python=np.add)
        assert lift.python_source(fun([ArrayType(Float, N)], lambda x: Map(lambda v: f(v, v))(x))).count(name) == 1
