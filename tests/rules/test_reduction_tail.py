"""`reduce-tail` (`lift.rules.reduction_tail`): a reduction of `n` elements is the reduction of its last
`n - k·⌊n/k⌋` elements from the reduction of the first `k·⌊n/k⌋`.

The interpreter agrees before and after at every `n` and `k` (`n < k`, `n = k`, `n = k·m + r` for every `r`), from
neutral and other initial values, of a plain array, a map and a map over a zip, concrete and symbolic. The default
lowering splits the tail off a row reduction that no padding keeps (softmax's, cross-entropy's and log-sum-exp's
`exp(x - max)`, layer normalisation's squares of `x - mean`) at odd row lengths, and its kernels agree with numpy."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import ArrayType, Float, Get, Lambda, Map, Reduce, SizeVar, Zip, fun, paper
from lift.ir.typecheck import infer
from lift.rules import Rewrite, RewriteEngine
from lift.rules.registry import rule_named
from opencl_device import needs_device, vector_lowering
from userfuns import add, diff, maxf, mult, shifted

N = SizeVar("N")
REDUCE_TAIL = rule_named("reduce-tail")


def _program(op, z, n, shape: str):
    if shape == "zip":
        return fun([ArrayType(Float, n), ArrayType(Float, n)],
                   lambda x, y: Reduce(op, z)(Map(lambda p: diff(Get(p, 0), Get(p, 1)))(Zip(x, y))))
    return fun([ArrayType(Float, n), ArrayType(Float, n)],
               lambda x, y: Reduce(op, z)(Map(shifted)(x) if shape == "map" else x))


def _split(program, k: int):
    """`program` with `reduce-tail` applied at its reduction with `k`, typed."""
    call = infer(program).expr.body
    split = Lambda(program.params, REDUCE_TAIL.apply(call, {"k": k}))
    infer(split)
    return split


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.sampled_from([(add, 0.0), (add, 2.5), (mult, 1.0), (mult, -2.0), (maxf, -math.inf), (maxf, 0.25)]),
       st.integers(1, 20), st.integers(1, 9), st.sampled_from(["array", "map", "zip"]), st.integers(0, 2**16))
def test_the_tail_reduced_from_the_head_s_result_keeps_the_meaning(op_z, n, k, shape, seed):
    op, z = op_z
    rng = np.random.default_rng(seed)
    x, y = (rng.uniform(0.5, 1.5, n).astype(np.float32) for _ in range(2))
    program = _program(op, z, n, shape)
    split = _split(program, k)
    head = n // k * k
    assert f"take-{head}" in paper(split) and f"drop-{head}" in paper(split)
    np.testing.assert_allclose(lift.interpret(split, x, y), lift.interpret(program, x, y), rtol=1e-5)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 8])
def test_every_remainder_and_a_k_above_the_length_keep_the_sum(k):
    """`n < k` (no head), `n = k` (no tail) and `n = k·m + r` for every `r`, a map over a zip from 2.5."""
    for n in range(1, 3 * k + 1):
        x, y = (np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32) for _ in range(2))
        program = _program(add, 2.5, n, "zip")
        np.testing.assert_allclose(lift.interpret(_split(program, k), x, y), [2.5 + (x - y).sum(dtype=np.float64)],
                                   rtol=1e-5, atol=1e-6)


def test_at_a_symbolic_length_the_head_is_a_multiple_of_k_and_the_tail_the_rest():
    program = _program(add, 0.0, N, "map")
    split = _split(program, 8)
    expected = ("λ x, y. join ∘ map(λ s_0. reduce(add, s_0) ∘ map(shifted) ∘ drop-(8*(N//8))(x)) "
                "∘ reduce(add, 0.0) ∘ map(shifted) ∘ take-(8*(N//8))(x)")
    assert paper(split) == expected.replace("s_0", _bound(split))
    x = np.random.default_rng(1).uniform(-1, 1, 1003).astype(np.float32)
    np.testing.assert_allclose(lift.interpret(split, x, x), [(x * 0.5 + 1.0).sum(dtype=np.float64)], rtol=1e-5)


def _bound(program) -> str:
    """The name of the parameter the tail's map binds."""
    return next(p.name for n in program.subterms() if isinstance(n, Lambda) for p in n.params
                if p.name.startswith("s_"))


def test_the_engine_offers_the_ks_that_leave_a_tail_and_a_head():
    engine = RewriteEngine()
    offered = {n: [dict(rw.params)["k"] for rw in engine.rewrites(_program(add, 0.0, n, "map"))
                   if rw.rule == "reduce-tail"] for n in (3, 8, 12, 999)}
    assert offered == {3: [2], 8: [], 12: [8], 999: [2, 4, 8, 16, 32, 64, 128, 256, 512]}
    symbolic = [dict(rw.params)["k"] for rw in engine.rewrites(_program(add, 0.0, N, "array"))
                if rw.rule == "reduce-tail"]
    assert symbolic[:3] == [2, 4, 8]
    split = engine.apply(_program(add, 0.0, 12, "array"), Rewrite.of("reduce-tail", "body", {"k": 8}))
    assert "take-8" in paper(split) and "drop-8" in paper(split)


EXAMPLES = {"softmax": ("R", "C", "exp_minus"), "cross_entropy": ("R", "C", "exp_minus"),
            "lse_outer": ("M", "N", "exp_minus"), "layernorm": ("R", "C", "centre")}


@needs_device
@pytest.mark.parametrize("name", sorted(EXAMPLES))
@pytest.mark.parametrize("columns", [999, 1001, 1003])
def test_row_reductions_at_odd_lengths_sum_vector_lanes_and_a_tail_and_agree_with_numpy(examples, name, columns):
    """On a vectorising device the row sums of each example at odd lengths are a vector head and a scalar tail
    (`reduce-tail`), and compute numpy's results."""
    pf = examples[name]
    rows, cols, f = EXAMPLES[name]
    sizes = {rows: 7, cols: columns}
    compiled = lift.compile(pf.kernels[name], lowering=vector_lowering(pf.kernels[name], sizes), sizes=sizes)
    assert f"{f}_scalar_v8(vload8(" in compiled.source
    inputs = pf.inputs(name, sizes, seed=columns)
    want = np.asarray(pf.namespace["reference"](*inputs), np.float64)
    got = np.asarray(compiled(*inputs), np.float64)
    np.testing.assert_allclose(got, want.reshape(got.shape), rtol=1e-4, atol=1e-6)


@needs_device
def test_the_search_splits_tails_off_and_its_candidates_compute_softmax(examples):
    """`lift explore`'s rewrite search takes the one-element arguments as scalars (a decision) and offers lanes with a
    tail at the row reductions (`vectorize`, `tail=True`); such candidates compute numpy's softmax."""
    from lift.explore.rewrite_search import RewriteSearch

    pf, sizes = examples["softmax"], {"R": 7, "C": 999}
    program, a = pf.kernels["softmax"], np.random.default_rng(0).uniform(-3, 3, (7, 999)).astype(np.float32)
    tails = []
    for candidate in itertools.islice(RewriteSearch(program, sizes, seed=0), 12):
        if any("tail=True" in str(v) for v in candidate.params.values()):
            tails.append(candidate)
            assert "reduce-tail" in [s["rule"] for s in candidate.derivation]
            np.testing.assert_allclose(lift.compile(candidate.program, sizes=sizes)(a), pf.namespace["reference"](a),
                                       rtol=1e-4, atol=1e-7)
    assert len(tails) >= 2
