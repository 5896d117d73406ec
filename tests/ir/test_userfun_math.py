"""Math functions: lift's (`lift.sqrt`, ..., `lift.fmin`, `lift.fmax`) on IR values in plain lambdas and in
Python user functions, against numpy, in the interpreter and in the kernel; Python's `math` on an IR value is
refused with a pointer to lift's."""

import math

import numpy as np
import pytest

import lift
from lift import (ArrayType, Double, Float, Int, LiftTypeError, Literal, MapGlb, SizeVar, compile, fun, interpret,
                  userfun)

N = SizeVar("N")
ONE_ARGUMENT = {"sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tan": np.tan,
                "fabs": np.fabs, "floor": np.floor, "ceil": np.ceil, "tanh": np.tanh,
                "erf": np.vectorize(math.erf)}
TWO_ARGUMENTS = {"pow": np.power, "fmin": np.fmin, "fmax": np.fmax}
XS = np.linspace(0.05, 2.5, 67).astype(np.float32)
YS = np.linspace(1.5, -0.5, 67).astype(np.float32)


def run_both(program, *args):
    return interpret(program, *args), compile(program)(*args)


@pytest.mark.parametrize("name", sorted(ONE_ARGUMENT))
def test_one_argument_functions_on_ir_values(name):
    f = getattr(lift, name)
    program = fun([ArrayType(Float, N)], lambda x: MapGlb(lambda v: f(v))(x))
    want = ONE_ARGUMENT[name](XS.astype(np.float64))
    for got in run_both(program, XS):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(TWO_ARGUMENTS))
def test_two_argument_functions_on_ir_values(name):
    f = getattr(lift, name)
    program = fun([ArrayType(Float, N), ArrayType(Float, N)],
                  lambda x, y: MapGlb(lambda p: f(lift.Get(p, 0), lift.Get(p, 1)))(lift.Zip(x, y)))
    want = TWO_ARGUMENTS[name](XS.astype(np.float64), YS.astype(np.float64))
    for got in run_both(program, XS, YS):
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_powers_and_int_literals_in_plain_lambdas():
    program = fun([ArrayType(Float, N)], lambda x: MapGlb(lambda v: v ** 2 + lift.pow(v, 3) + lift.fmax(v, 1))(x))
    x = XS.astype(np.float64)
    want = x * x + x ** 3 + np.fmax(x, 1)
    for got in run_both(program, XS):
        np.testing.assert_allclose(got, want, rtol=2e-6)
    assert lift.pow(Literal(2.0, Double), 3).f.in_types == (Double, Double)


@userfun
def gaussian_tail(x: Float) -> Float:
    return lift.fmin(math.exp(-x * x), 0.5) + lift.fmax(lift.erf(x), 0.0) + math.sqrt(lift.fabs(x))


def test_lift_math_in_user_functions():
    x = XS.astype(np.float64)
    want = np.fmin(np.exp(-x * x), 0.5) + np.fmax(np.vectorize(math.erf)(x), 0.0) + np.sqrt(np.abs(x))
    program = fun([ArrayType(Float, N)], lambda v: MapGlb(gaussian_tail)(v))
    for got in run_both(program, XS):
        np.testing.assert_allclose(got, want, rtol=2e-6)
    assert gaussian_tail.flops >= 6


def test_on_python_numbers_they_compute():
    assert lift.sqrt(4.0) == 2.0 and lift.fmin(1, 2) == 1.0 and lift.erf(0.0) == 0.0


def test_python_math_on_an_ir_value_points_to_lifts():
    with pytest.raises(LiftTypeError, match=r"write lift's \(`lift.sqrt\(v\)` for `math.sqrt\(v\)`\)"):
        fun([ArrayType(Float, N)], lambda x: MapGlb(lambda v: math.sqrt(v))(x))


def test_ints_are_refused():
    with pytest.raises(LiftTypeError, match="lift.sqrt: takes float or double values .*, not Int"):
        fun([Int], lambda n: lift.sqrt(n))
    with pytest.raises(LiftTypeError, match=r"sqrt_float expects argument 1 \(x\) of type Float, got Int"):
        fun([ArrayType(Int, N)], lambda x: MapGlb(lambda v: lift.sqrt(v))(x))
    with pytest.raises(LiftTypeError, match="lift.fmin takes 2 arguments, got 1"):
        lift.fmin(1.0)


def test_operations_weigh_the_math_calls_named():
    """Nine floating-point operations (`-x * x` one, `fabs` and `sqrt` one each); `exp` and `erf` weighed 20 each."""
    assert gaussian_tail.operations() == gaussian_tail.flops == 9
    assert gaussian_tail.operations({"exp": 20, "erf": 20}) == 9 + 2 * 19
