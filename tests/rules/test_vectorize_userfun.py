"""`vectorize-map` on a user function with math and conditions (BlackScholes' call price), and
`vectorize-tuple-map` on BlackScholes' call and put: the rules at widths 4, 8 and 16 agree with the interpreter,
the kernels with it, and the search proposes every width."""

import math

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, Map, SizeVar, TupleType, fun, interpret, paper, userfun
from lift.explore.search_moves import map_moves
from lift.rules import Rewrite, RewriteEngine
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.strategy import Focus, is_call, outermost
from lift.ir import patterns as P

from opencl_device import needs_device

N = SizeVar("N")
STRIKE, RATE, VOLATILITY = 50.0, 0.02, 0.30


@userfun
def bs_call(s: Float) -> Float:
    """The call price of one option (examples/blackscholes.py without the put): log, exp, sqrt, abs, select."""
    d1 = (math.log(s / STRIKE) + (RATE + 0.5 * VOLATILITY * VOLATILITY)) / (VOLATILITY * math.sqrt(1.0))
    d2 = d1 - VOLATILITY
    k1 = 1.0 / (1.0 + 0.2316419 * abs(d1))
    k2 = 1.0 / (1.0 + 0.2316419 * abs(d2))
    c1 = 0.3989422804014327 * math.exp(-0.5 * d1 * d1) * k1 * (
        0.31938153 + k1 * (-0.356563782 + k1 * (1.781477937 + k1 * (-1.821255978 + k1 * 1.330274429))))
    c2 = 0.3989422804014327 * math.exp(-0.5 * d2 * d2) * k2 * (
        0.31938153 + k2 * (-0.356563782 + k2 * (1.781477937 + k2 * (-1.821255978 + k2 * 1.330274429))))
    cnd_d1 = 1.0 - c1 if d1 > 0.0 else c1
    cnd_d2 = 1.0 - c2 if d2 > 0.0 else c2
    return s * cnd_d1 - STRIKE * math.exp(-RATE) * cnd_d2


@userfun
def call_put(s: Float) -> TupleType(Float, Float):
    """A pair of results from math and a condition (BlackScholes' shape: examples/blackscholes.py)."""
    d = math.log(s / STRIKE) / VOLATILITY
    weight = math.exp(-0.5 * d * d) if d > 0.0 else math.sqrt(abs(d) + 1.0)
    return (s * weight - STRIKE, STRIKE * weight - s)


calls = fun([ArrayType(Float, N)], lambda s: Map(bs_call)(s))
pairs = fun([ArrayType(Float, N)], lambda s: Map(call_put)(s))
ENGINE = RewriteEngine(sizes={"N": 64})


def _prices(n):
    return np.random.default_rng(n).uniform(5.0, 100.0, n).astype(np.float32)


@pytest.mark.parametrize("width", [4, 8, 16])
def test_vectorised_math_agrees_with_the_interpreter(width):
    vectorised = ENGINE.apply(calls, Rewrite.of("vectorize-map", "body", {"n": width}))
    assert paper(vectorised) == f"asScalar ∘ map(vectorize-{width}(bs_call)) ∘ asVector-{width}"
    s = _prices(64)
    expected = np.asarray(interpret(calls, s, sizes={"N": 64}))
    np.testing.assert_allclose(np.asarray(interpret(vectorised, s, sizes={"N": 64})), expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("width", [4, 8, 16])
def test_vectorised_pairs_agree_with_the_interpreter(width):
    vectorised = ENGINE.apply(pairs, Rewrite.of("vectorize-tuple-map", "body", {"n": width}))
    m = f"map(vectorize-{width}(call_put)) ∘ asVector-{width}(s)"
    assert paper(vectorised) == f"λ s. zip(asScalar ∘ get-0 ∘ unzip ∘ {m}, asScalar ∘ get-1 ∘ unzip ∘ {m})"
    s = _prices(64)
    expected = interpret(pairs, s, sizes={"N": 64})
    got = interpret(vectorised, s, sizes={"N": 64})
    for k in expected.dtype.names:
        np.testing.assert_allclose(got[k], expected[k], rtol=1e-5, atol=1e-4)


def test_each_map_vectorises_by_its_own_rule():
    def widths(program, rule):
        return {rw.param_dict["n"] for rw in ENGINE.rewrites(program) if rw.rule == rule}

    assert widths(pairs, "vectorize-tuple-map") == widths(calls, "vectorize-map") == {2, 4, 8, 16}
    assert widths(pairs, "vectorize-map") == widths(calls, "vectorize-tuple-map") == set()


def test_the_search_proposes_every_vector_width():
    for tuples in (False, True):
        moves = map_moves(1 << 22, not tuples, tuples)
        widths = {params["width"] for name, params, _ in moves if name == "vector-global"}
        assert widths == {4, 8, 16}
    assert not [m for m in map_moves(1 << 22, False) if "width" in m[1]]


@needs_device
@pytest.mark.parametrize("n", [1000, 1 << 12])
@pytest.mark.parametrize("program", [calls, pairs], ids=["scalars", "pairs"])
def test_vectorised_kernels_agree_with_the_interpreter(program, n):
    s, expected = _prices(n), interpret(program, _prices(n), sizes={"N": n})
    tuples = program is pairs
    for name, params, strategy in map_moves(n, not tuples, tuples):
        if name != "vector-global":
            continue
        derived = (outermost(is_call(P.Map), strategy) >> lower_rest >> clean_up)(
            Focus(program, RewriteEngine(sizes={"N": n}))).program
        assert f"vectorize-{params['width']}" in paper(derived)
        compiled = lift.compile(derived, sizes={"N": n})
        got = compiled(s)
        if tuples:  # the map of pairs computed once (its definition and one call), both components stored from it
            assert compiled.generated({"N": n}).source.count(f"call_put_v{params['width']}(") == 2
        for k in expected.dtype.names or [None]:
            np.testing.assert_allclose(got[k] if k else got, expected[k] if k else expected, rtol=1e-4, atol=1e-3,
                                       err_msg=f"{name} {params}")
