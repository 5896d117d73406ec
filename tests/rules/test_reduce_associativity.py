"""The rules that split a reduction into partial reductions apply only to operators known to be associative
(lift.ir.associativity); a `reduce` of any other operator means `reduce-seq` and is lowered sequentially, and an
N-body-style fold written with `Reduce` runs correctly on the device (issue 17, item 7)."""

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, Map, Reduce, SizeVar, fun, paper, userfun
from lift.rules import Rewrite, RewriteEngine, RuleNotApplicable
from lift.rules.default_lowering import default_lowering

from opencl_device import needs_device
from userfuns import add, pair_force

N = SizeVar("N")
ENGINE = RewriteEngine()
RNG = np.random.default_rng(7)


@userfun
def smooth(acc: Float, x: Float) -> Float:
    return 0.5 * acc + x


smoothed = fun([ArrayType(Float, N)], lambda x: Reduce(smooth, 0.0)(x))
summed = fun([ArrayType(Float, N)], lambda x: Reduce(add, 0.0)(x))
n_body = fun([ArrayType(Float, N)], lambda x: Map(lambda p: Reduce(lambda acc, q: add(acc, pair_force(p, q)), 0.0)(x))(x))


def _smoothed_reference(x):
    acc = 0.0
    for v in x.astype(np.float64):
        acc = 0.5 * acc + v
    return acc


def test_partial_reduction_needs_an_associative_operator():
    ENGINE.apply(summed, Rewrite.of("partial-reduction", "body", {"chunk": 4}))
    with pytest.raises(RuleNotApplicable, match="smooth is not known to be associative and commutative, so the "
                                                "reduction means reduce-seq"):
        ENGINE.apply(smoothed, Rewrite.of("partial-reduction", "body", {"chunk": 4}))
    rules = {rw.rule for rw in ENGINE.rewrites(smoothed)}
    assert "reduce-to-seq" in rules and not rules & {"partial-reduction", "reduce-to-part-red", "reduce-lanes"}


def test_a_non_associative_reduce_is_lowered_sequentially():
    lowered = default_lowering(smoothed, {"N": 4096}).replay(smoothed)
    assert paper(lowered) == "reduce-seq(smooth, 0.0)"
    assert "split" in paper(default_lowering(summed, {"N": 4096}).replay(summed))


def test_the_interpreter_folds_a_non_associative_reduce_in_order():
    x = RNG.uniform(-1, 1, 1000).astype(np.float32)
    np.testing.assert_allclose(lift.interpret(smoothed, x), [_smoothed_reference(x)], rtol=1e-4)


@needs_device
def test_non_associative_reductions_run_correctly_on_the_device():
    x = RNG.uniform(-1, 1, 4096).astype(np.float32)
    np.testing.assert_allclose(lift.compile(smoothed)(x), _smoothed_reference(x), rtol=1e-4)
    y = RNG.uniform(-1, 1, 300).astype(np.float32)
    d = y[None, :].astype(np.float64) - y[:, None]
    np.testing.assert_allclose(lift.compile(n_body)(y), (d / (1.0 + d * d)).sum(axis=1), rtol=1e-4, atol=1e-4)
