"""`vectorize-map` on a user function with math and conditions (BlackScholes' call price): the rule at widths
4, 8 and 16 agrees with the interpreter, the kernel with numpy, and the search proposes every width."""

import math

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, Map, SizeVar, fun, interpret, paper, userfun
from lift.explore.rewrite_search import map_moves
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


calls = fun([ArrayType(Float, N)], lambda s: Map(bs_call)(s))
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


def test_the_search_proposes_every_vector_width():
    widths = {params["width"] for name, params, _ in map_moves(1 << 22, True) if name == "vector-global"}
    assert widths == {4, 8, 16}
    assert not [m for m in map_moves(1 << 22, False) if "width" in m[1]]


@needs_device
@pytest.mark.parametrize("width", [4, 8, 16])
def test_vectorised_kernel_agrees_with_numpy(width):
    n = 1000  # padded to a multiple of the width times the work-group size
    strategy = next(s for name, params, s in map_moves(n, True)
                    if name == "vector-global" and params["width"] == width)
    derived = (outermost(is_call(P.Map), strategy) >> lower_rest >> clean_up)(
        Focus(calls, RewriteEngine(sizes={"N": n}))).program
    assert f"vectorize-{width}(bs_call)" in paper(derived)
    s = _prices(n)
    got = lift.compile(derived, sizes={"N": n})(s)
    np.testing.assert_allclose(got, np.asarray(interpret(calls, s, sizes={"N": n})), rtol=1e-4, atol=1e-3)
