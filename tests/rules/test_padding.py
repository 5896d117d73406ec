"""Reductions at any size (issue 17, item 2): `pad-reduction` (`lift.rules.padding`) pads a reduction's input with
its neutral element up to a multiple of a chunk, so that every chunked derivation applies at sizes no chunk
divides; checked in the reference interpreter against numpy, at concrete and symbolic sizes."""

import math

import numpy as np
import pytest

import lift

from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Zip, fun, interpret, paper, userfun
from lift.rules import RewriteEngine
from lift.rules.default_lowering import clean_up, default_lowering, lower_rest
from lift.rules.paper_derivations import groups, local_tree_groups, sequential_chunks, vector_lane_chunks
from lift.rules.registry import rule_named
from lift.rules.rule import RuleNotApplicable
from lift.rules.strategy import Focus, outermost, is_call, rewrite
from lift.ir import patterns as P
from lift.ir.typecheck import infer
from opencl_device import needs_device
from userfuns import add, maxf

N = SizeVar("N")
SIZES = (1000, 1021, 4097, 65537)


@userfun
def plus_one(x: Float) -> Float:
    return x + 1.0


def _inputs(n: int, k: int = 1) -> list:
    rng = np.random.default_rng(n)
    return [rng.uniform(-1.0, 1.0, n).astype(np.float32) for _ in range(k)]


def _derive(program, strategy, sizes=None):
    focus = (outermost(is_call(P.Reduce), strategy) >> lower_rest >> clean_up)(Focus(program, RewriteEngine(
        sizes=dict(sizes or {}))))
    assert focus is not None
    return focus.program


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("k", (64, 1024))
def test_padded_chunks_of_asum_and_dot_agree_with_numpy(examples, n, k):
    asum, dot = examples["asum"].kernels["asum"], examples["dot"].kernels["dot"]
    chunks = rewrite("pad-reduction", k=k) >> sequential_chunks(k) >> groups(rewrite("map-to-global", dim=0)) \
        >> rewrite("reduce-to-seq")
    (x,) = _inputs(n)
    lowered = _derive(asum, chunks, {"N": n})
    assert f"split-{k} ∘ pad-to-multiple-{k}(0.0)" in paper(lowered)
    np.testing.assert_allclose(interpret(lowered, x), [np.abs(x).sum(dtype=np.float64)], rtol=1e-5)
    x, y = _inputs(n, 2)
    lowered = _derive(dot, chunks, {"N": n})
    assert "zip(pad-to-multiple" in paper(lowered)
    np.testing.assert_allclose(interpret(lowered, x, y), [np.dot(x.astype(np.float64), y)], rtol=1e-4, atol=1e-5)


def test_padding_works_at_a_symbolic_size(examples):
    asum = examples["asum"].kernels["asum"]
    lowered = _derive(asum, rewrite("pad-reduction", k=4096) >> local_tree_groups(4096, 64, 6)
                      >> rewrite("reduce-to-seq"))
    assert infer(lowered).constraints == ()
    for n in SIZES:
        (x,) = _inputs(n)
        np.testing.assert_allclose(interpret(lowered, x), [np.abs(x).sum(dtype=np.float64)], rtol=1e-5)


def test_padded_vector_lanes_agree_with_numpy(examples):
    asum = examples["asum"].kernels["asum"]
    lowered = _derive(asum, rewrite("pad-reduction", k=2048) >> vector_lane_chunks(2048, 512)
                      >> rewrite("reduce-to-seq"), {"N": 4097})
    (x,) = _inputs(4097)
    np.testing.assert_allclose(interpret(lowered, x), [np.abs(x).sum(dtype=np.float64)], rtol=1e-5)


def test_a_plain_reduction_is_padded_with_its_neutral_element():
    program = fun([ArrayType(Float, N)], lambda x: Reduce(add, 0.0)(x))
    padded = _derive(program, rewrite("pad-reduction", k=16))
    assert paper(padded) == "reduce-seq(add, 0.0) ∘ pad-to-multiple-16(0.0)"
    (x,) = _inputs(1021)
    np.testing.assert_allclose(interpret(padded, x), [x.sum(dtype=np.float64)], rtol=1e-5)


def test_a_map_that_does_not_send_zero_to_the_neutral_element_has_its_results_padded():
    """Its input is not padded (`pad-reduction`), its results are (`pad-reduction-result`), then chunked."""
    program = fun([ArrayType(Float, N)], lambda x: Reduce(add, 0.0)(Map(plus_one)(x)))
    call = infer(program).expr.body
    with pytest.raises(RuleNotApplicable, match="does not send 0.0 to the neutral element 0.0"):
        rule_named("pad-reduction").apply(call, {"k": 16})
    lowered = default_lowering(program, {"N": 1021}).replay(program)
    assert ("map-global(reduce-seq(" in paper(lowered) and
            "pad-to-multiple-16(0.0) ∘ take-(N) ∘ asScalar ∘ map-global(vectorize-4(plus_one))" in paper(lowered))
    (x,) = _inputs(1021)
    np.testing.assert_allclose(interpret(lowered, x), [(x + 1.0).sum(dtype=np.float64)], rtol=1e-5)


def test_the_default_lowering_pads_dot_at_a_prime_size(examples):
    dot = examples["dot"].kernels["dot"]
    lowered = default_lowering(dot, {"N": 65537}).replay(dot)
    assert "map-global" in paper(lowered)
    assert "split-8 ∘ zip(asVector-4 ∘ pad-to-multiple-32(0.0)(x), asVector-4 ∘ pad-to-multiple-32(0.0)(y))" in paper(lowered)
    x, y = _inputs(65537, 2)
    np.testing.assert_allclose(interpret(lowered, x, y), [np.dot(x.astype(np.float64), y)], rtol=1e-4)


@pytest.mark.parametrize("n", SIZES)
def test_a_padded_map_keeps_the_first_n_results(examples, n):
    scal = examples["scal"].kernels["scal"]
    focus = (outermost(is_call(P.Map), rewrite("pad-map", k=256) >> outermost(is_call(P.Map), rewrite(
        "split-join", n=256))) >> lower_rest >> clean_up)(Focus(scal, RewriteEngine(sizes={"N": n})))
    assert paper(focus.program).startswith("λ a, x. take-(N) ∘ join ∘ map-global(map-seq(")
    assert "split-256 ∘ pad-to-multiple-256(0.0)(x)" in paper(focus.program)
    (x,) = _inputs(n)
    got = interpret(focus.program, 3.0, x)
    assert got.shape == (n,)
    np.testing.assert_allclose(got, 3.0 * x, rtol=1e-6)


def test_a_map_is_not_padded_where_the_chunk_divides(examples):
    scal = examples["scal"].kernels["scal"]
    pad = outermost(is_call(P.Map), rewrite("pad-map", k=256))
    assert pad(Focus(scal, RewriteEngine(sizes={"N": 4096}))) is None
    assert pad(Focus(scal, RewriteEngine(sizes={"N": 4097}))) is not None


def test_a_map_over_windows_is_padded_at_a_prime_size(examples):
    """A 1-D stencil's map over windows (arrays) at a prime length: the windows are padded with windows of zeros
    up to whole blocks of 64 windows, one block per work-item (a prime global size would leave the driver
    work-groups of one work-item); the padded results are dropped."""
    jacobi = examples["stencils"].kernels["jacobi1d_high"]
    n = 1021
    lowered = default_lowering(jacobi, {"N": n}).replay(jacobi, RewriteEngine(sizes={"N": n}))
    assert "take-(N) ∘ join ∘ map-global(" in paper(lowered) and "split-64 ∘ pad-to-multiple-64(0.0) ∘ slide(3, 1)" \
        in paper(lowered)
    (a,) = _inputs(n)
    k = np.array([0.25, 0.5, 0.25], np.float32)
    p = np.pad(a.astype(np.float64), 1, mode="edge")
    np.testing.assert_allclose(interpret(lowered, a, k), 0.25 * p[:-2] + 0.5 * p[1:-1] + 0.25 * p[2:], rtol=1e-5)


@userfun
def absdiff(x: Float, y: Float) -> Float:
    return abs(x - y)


MAX_ABS_DIFF = fun([ArrayType(Float, N), ArrayType(Float, N)], lambda x, y: Reduce(maxf, -math.inf)(
    Map(lambda p: absdiff(Get(p, 0), Get(p, 1)))(Zip(x, y))))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("k", (64, 1024))
def test_a_max_from_minus_infinity_is_padded_with_its_last_elements(n, k):
    """`max(|x - y|)` from `-inf`: no padding value is sent to `-inf`, but `max` is idempotent, so the inputs are
    padded with copies of their last element (`pad-reduction-repeat`) and the chunks apply at any size."""
    padded = _derive(MAX_ABS_DIFF, rewrite("pad-reduction-repeat", k=k) >> sequential_chunks(k)
                     >> groups(rewrite("map-to-global", dim=0)), {"N": n})
    assert f"zip(pad-to-multiple-{k}(clamp)(x), pad-to-multiple-{k}(clamp)(y))" in paper(padded)
    x, y = _inputs(n, 2)
    np.testing.assert_array_equal(interpret(padded, x, y), [np.abs(x - y).max()])


def test_only_an_idempotent_reduction_is_padded_with_repeated_elements():
    call = infer(fun([ArrayType(Float, N)], lambda x: Reduce(add, 0.0)(Map(plus_one)(x)))).expr.body
    with pytest.raises(RuleNotApplicable, match="not known to be idempotent"):
        rule_named("pad-reduction-repeat").apply(call, {"k": 16})


@needs_device
def test_the_default_lowering_chunks_a_max_at_a_prime_size():
    """Before `pad-reduction-repeat`, `max(|x - y|)` from `-inf` at a prime size was one work-item folding the
    whole array."""
    n = 65537
    lowered = default_lowering(MAX_ABS_DIFF, {"N": n}).replay(MAX_ABS_DIFF)
    assert "map-global(reduce-seq(" in paper(lowered) and "asVector-4 ∘ pad-to-multiple-32(clamp)(x)" in paper(lowered)
    x, y = _inputs(n, 2)
    assert lift.compile(MAX_ABS_DIFF, lowering="default")(x, y) == np.abs(x - y).max()
