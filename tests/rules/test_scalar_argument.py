"""`scalar-argument` and `reduce-join-map` (lift.rules.scalar_argument): a user function's one-element array argument
read as `m[0]` taken as its element.

Random user functions `f(x: Float, m: [Float]1)` reading `m[0]` in a few expressions mean the same with `m` a scalar:
the interpreter agrees exactly before and after each rule, on a map over an array of one given as input and on a
row's reduction of a map whose `m` is the row's maximum; a function reading `m` otherwise is left alone. The default
lowering of such a row reduction sums `vect-n` lanes, the scalar broadcast, where 4 divides the row or it holds 16
elements at least (the rest a tail, `reduce-tail`), and its kernel agrees with numpy."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import ArrayType, Float, Int, Map, Reduce, SizeVar, UserFun, fun, userfun
from lift.rules import RewriteEngine
from lift.rules.scalar_argument import scalar_userfun
from opencl_device import needs_device, vector_lowering
from userfuns import add, maxf

N, C = SizeVar("N"), SizeVar("C")
ENGINE = RewriteEngine()
TERMS = ("x - m[0]", "x * m[0]", "m[0] * m[0] + x", "math.exp(x - m[0])", "(x if x > m[0] else m[0])", "x + 0.5")


@st.composite
def functions_of_one_element(draw):
    """A user function `(x: Float, m: [Float]1) -> Float` of a few terms reading `m[0]`, through a local too."""
    terms = draw(st.lists(st.sampled_from(TERMS), min_size=1, max_size=3))
    lines = ["def g(x: Float, m: ArrayType(Float, 1)) -> Float:", f"    a = {terms[0]}"]
    lines += [f"    a = a * 0.5 + {t}" for t in terms[1:]] + ["    return a"]
    return userfun(source="\n".join(lines))


def _applied(program, name: str):
    """`program` with rule `name` applied where the engine first enumerates it, or None."""
    rewrites = [rw for rw in ENGINE.rewrites(program) if rw.rule == name]
    return ENGINE.apply(program, rewrites[0]) if rewrites else None


def _mapped(f: UserFun):
    return fun([ArrayType(Float, N), ArrayType(Float, 1)], lambda xs, m: Map(lambda v: f(v, m))(xs))


def _row_sums(f: UserFun):
    return fun([ArrayType(ArrayType(Float, C), N)], lambda xss: Map(
        lambda row: Reduce(add, 0.0)(Map(lambda v: f(v, Reduce(maxf, -math.inf)(row)))(row)))(xss))


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(functions_of_one_element(), st.integers(1, 9), st.integers(0, 2**16))
def test_a_mapped_one_element_argument_taken_as_its_element_keeps_the_meaning(f, n, seed):
    rng = np.random.default_rng(seed)
    xs, m = rng.uniform(-3, 3, n).astype(np.float32), rng.uniform(-3, 3, 1).astype(np.float32)
    program = _mapped(f)
    rewritten = _applied(program, "scalar-argument")
    (g,) = [u for u in rewritten.subterms() if isinstance(u, UserFun)]
    assert g.name == "g_scalar" and g.in_types == (Float, Float)
    np.testing.assert_array_equal(lift.interpret(rewritten, xs, m), lift.interpret(program, xs, m))
    assert _applied(rewritten, "scalar-argument") is None, "taken once"


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(functions_of_one_element(), st.integers(1, 5), st.integers(1, 9), st.integers(0, 2**16))
def test_a_row_reduction_moved_into_the_map_over_its_maximum_keeps_the_meaning(f, n, c, seed):
    xss = np.random.default_rng(seed).uniform(-3, 3, (n, c)).astype(np.float32)
    program = _row_sums(f)
    scalar = _applied(program, "scalar-argument")
    moved = _applied(scalar, "reduce-join-map")
    expected = lift.interpret(program, xss)
    np.testing.assert_array_equal(lift.interpret(scalar, xss), expected)
    np.testing.assert_array_equal(lift.interpret(moved, xss), expected)


@userfun
def sq(x: Float) -> Float:
    return x * x


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(functions_of_one_element(), st.integers(1, 5), st.integers(1, 9), st.integers(0, 2**16))
def test_a_call_inside_the_mapped_function_takes_the_element_and_keeps_the_meaning(f, n, c, seed):
    """`sq(f(v, max(row)))`, layer normalisation's `sq(centre(x, s, n))`: the call of `f` is an argument."""
    xss = np.random.default_rng(seed).uniform(-3, 3, (n, c)).astype(np.float32)
    program = fun([ArrayType(ArrayType(Float, C), N)], lambda xss: Map(
        lambda row: Reduce(add, 0.0)(Map(lambda v: sq(f(v, Reduce(maxf, -math.inf)(row))))(row)))(xss))
    scalar = _applied(program, "scalar-argument")
    assert "g_scalar" in lift.paper(scalar)
    moved = _applied(scalar, "reduce-join-map")
    expected = lift.interpret(program, xss)
    np.testing.assert_array_equal(lift.interpret(scalar, xss), expected)
    np.testing.assert_array_equal(lift.interpret(moved, xss), expected)


def test_an_argument_reading_a_parameter_bound_inside_the_mapped_function_stays_an_array():
    @userfun
    def first(x: Float, m: ArrayType(Float, 1)) -> Float:
        return x - m[0]

    program = fun([ArrayType(ArrayType(Float, C), N)], lambda xss: Map(
        lambda row: Map(lambda v: first(v, Reduce(maxf, -math.inf)(row)))(row))(xss))
    paths = [rw.location for rw in ENGINE.rewrites(program) if rw.rule == "scalar-argument"]
    assert len(paths) == 1 and paths[0] != "body", "only at the inner map, whose function does not bind the row"


def test_a_function_reading_its_array_otherwise_keeps_it():
    @userfun
    def at(x: Float, m: ArrayType(Float, 1), i: Int) -> Float:
        return x + m[i]

    @userfun
    def summed(x: Float, m: ArrayType(Float, 1)) -> Float:
        a = x
        for i in range(1):
            a = a + m[i]
        return a

    assert scalar_userfun(at, 1) is None and scalar_userfun(summed, 1) is None
    program = fun([ArrayType(Float, N), ArrayType(Float, 1)], lambda xs, m: Map(lambda v: at(v, m, 0))(xs))
    assert _applied(program, "scalar-argument") is None


def test_an_argument_reading_the_mapped_element_stays_an_array():
    @userfun
    def first(x: Float, m: ArrayType(Float, 1)) -> Float:
        return x - m[0]

    program = fun([ArrayType(ArrayType(Float, 1), N)], lambda xs: Map(lambda v: first(1.0, v))(xs))
    assert _applied(program, "scalar-argument") is None


@needs_device
@pytest.mark.parametrize("c, vectorised", [(64, True), (40, True), (41, True), (13, False)])
def test_the_default_lowering_sums_a_row_reduction_of_its_maximum_in_vector_lanes(c, vectorised):
    @userfun
    def exp_minus(x: Float, m: ArrayType(Float, 1)) -> Float:
        return math.exp(x - m[0])

    xss = (3 * np.random.default_rng(c).standard_normal((9, c))).astype(np.float32)
    program, sizes = _row_sums(exp_minus), {"N": 9, "C": c}
    compiled = lift.compile(program, lowering=vector_lowering(program, sizes), sizes=sizes)
    assert ("exp_minus_scalar_v" in compiled.source) == vectorised
    z = xss.astype(np.float64)
    np.testing.assert_allclose(compiled(xss), np.exp(z - z.max(axis=1, keepdims=True)).sum(axis=1), rtol=1e-5)
