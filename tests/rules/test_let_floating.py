"""Let floating (`hoist-invariant`, lift.rules.let_floating) and lets in the DSL: a value a map's function computes
without its element is computed once (issue 17, item 7), and means what the program means (interpreter, numpy)."""

import math

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, Join, Map, Reduce, SizeVar, Split, Zip, fun, paper, userfun
from lift.ir.nodes import FunCall, Lambda
from lift.rules import Rewrite, RewriteEngine, RuleNotApplicable

from hypothesis import given, settings
from hypothesis import strategies as st

from userfuns import absf, add, divide_by, maxf, pair_force

N = SizeVar("N")
ENGINE = RewriteEngine()
RNG = np.random.default_rng(5)


def _hoisted(program):
    return ENGINE.apply(program, Rewrite.of("hoist-invariant", "body"))


def test_a_reduction_in_the_mapped_function_is_let_bound_before_the_map():
    program = fun([ArrayType(Float, N)], lambda x: Map(lambda v: divide_by(v, Reduce(add, 0.0)(x)))(x))
    hoisted = _hoisted(program)
    assert paper(hoisted) == "λ x. (λ s_0. map(λ v. divide_by(v, s_0))(x)) ∘ reduce(add, 0.0)(x)"
    x = RNG.uniform(0.5, 1.0, 100).astype(np.float32)
    np.testing.assert_allclose(lift.interpret(hoisted, x), x / x.sum(dtype=np.float64), rtol=1e-5)


def test_the_hoisted_program_means_the_same():
    program = fun([ArrayType(Float, N)], lambda x: Map(lambda v: Reduce(add, 0.0)(Map(absf)(x)))(x))
    hoisted = _hoisted(program)
    assert paper(hoisted) == "λ x. (λ s_0. map(λ v. s_0)(x)) ∘ reduce(add, 0.0) ∘ map(absf)(x)"
    x = RNG.uniform(-1.0, 1.0, 64).astype(np.float32)
    np.testing.assert_array_equal(lift.interpret(hoisted, x), lift.interpret(program, x))


def test_a_computation_reading_the_element_stays_in_the_map():
    all_pairs = fun([ArrayType(Float, N)],
                    lambda x: Map(lambda p: Reduce(add, 0.0)(Map(lambda q: pair_force(p, q))(x)))(x))
    assert "hoist-invariant" not in {rw.rule for rw in ENGINE.rewrites(all_pairs)}
    with pytest.raises(RuleNotApplicable, match="computes nothing independent of its element"):
        _hoisted(all_pairs)


def test_a_let_of_a_computation_used_inside_a_function_stays_a_let():
    """`fun(lambda s: ...)(e)` is not inlined where `s` is read inside the map's function: `e` is computed once."""
    normalised = fun([ArrayType(Float, N)],
                     lambda x: fun(lambda s: Map(lambda v: divide_by(v, s))(x))(Reduce(add, 0.0)(x)))
    assert isinstance(normalised.body, FunCall) and isinstance(normalised.body.f, Lambda)
    x = RNG.uniform(0.5, 1.0, 1000).astype(np.float32)
    np.testing.assert_allclose(lift.interpret(normalised, x), x / x.sum(dtype=np.float64), rtol=1e-5)


def test_a_view_of_a_computation_is_a_computation_too():
    """A row computed by a map and then viewed (`join(map(f)(x))`) is not inlined into the rows of another map, where
    it would be computed once per element (and, lowered, put a map-global inside a map-global): found by threemm's
    search, whose `map-fusion` of two matrix products inlined the first product's row into the second's columns."""
    M, K = SizeVar("M"), SizeVar("K")
    fused = fun([ArrayType(ArrayType(Float, N), M), ArrayType(ArrayType(Float, N), K)], lambda a, b: Map(
        lambda row: fun(lambda r: Map(lambda col: Reduce(add, 0.0)(Map(mult)(Zip(r, col))))(b))(
            Join()(Map(lambda v: Map(absf)(v))(Split(N)(row)))))(a))
    body = fused.body.f.f.body
    assert isinstance(body, FunCall) and isinstance(body.f, Lambda)
    a, b = RNG.uniform(-1, 1, (3, 5)).astype(np.float32), RNG.uniform(-1, 1, (4, 5)).astype(np.float32)
    np.testing.assert_allclose(lift.interpret(fused, a, b)[..., 0], np.abs(a) @ b.T, rtol=1e-5)


def test_a_let_read_outside_every_function_is_inlined_as_before():
    composed = fun([ArrayType(Float, N)], lambda x: fun(lambda y: Map(absf)(y))(Map(absf)(x)))
    assert paper(composed) == "map(absf) ∘ map(absf)"



@userfun
def exp_minus(x: Float, m: ArrayType(Float, 1)) -> Float:
    return math.exp(x - m[0])


def test_a_let_in_an_argument_binds_around_the_call():
    """`f((λs. B)(e)) → (λs. f(B))(e)`: the map over a row that hoisting a row's maximum left inside a let is
    composed with the map taking it again."""
    row = fun([ArrayType(Float, N)], lambda x: Map(absf)(fun(lambda m: Map(lambda v: exp_minus(v, m))(x))(
        Reduce(maxf, -math.inf)(x))))
    moved = ENGINE.apply(row, Rewrite.of("let-out-of-argument", "body"))
    assert paper(moved) == "λ x. (λ m. map(absf) ∘ map(λ v. exp_minus(v, m))(x)) ∘ reduce(maxf, -inf)(x)"
    x = RNG.uniform(-1.0, 1.0, 37).astype(np.float32)
    np.testing.assert_array_equal(lift.interpret(moved, x), lift.interpret(row, x))
    with pytest.raises(RuleNotApplicable, match="no argument is a let"):
        ENGINE.apply(moved, Rewrite.of("let-out-of-argument", "body"))


def test_every_let_floating_rewrite_of_softmax_means_the_same(examples):
    """Each `hoist-invariant` and `let-out-of-argument` rewrite the engine offers anywhere in softmax
    (`examples/softmax.py`), applied in turn until none is left, keeps the interpreter's result (numpy's)."""
    softmax, reference = examples["softmax"].kernels["softmax"], examples["softmax"].namespace["reference"]
    a = RNG.uniform(-2.0, 2.0, (5, 7)).astype(np.float32)
    program, applied = softmax, 0
    for _ in range(12):
        rewrites = [rw for rw in ENGINE.rewrites(program) if rw.rule in ("hoist-invariant", "let-out-of-argument")]
        if not rewrites:
            break
        for rw in rewrites:
            np.testing.assert_allclose(lift.interpret(ENGINE.apply(program, rw), a), reference(a), rtol=1e-5)
        program, applied = ENGINE.apply(program, rewrites[0]), applied + 1
    assert applied >= 3


def test_the_default_lowering_computes_a_rows_reductions_once_per_row(examples):
    """Softmax per row: the row's maximum and sum are bound inside the map over rows (not recomputed for each
    element: O(C) work per row, not O(C^2)), the maximum once though both maps read it (`share-computation`),
    the maps over the row fused; the result is numpy's."""
    from lift.rules.default_lowering import default_lowering

    softmax, reference = examples["softmax"].kernels["softmax"], examples["softmax"].namespace["reference"]
    lowered = default_lowering(softmax, {"R": 5, "C": 7}).replay(softmax, RewriteEngine(sizes={"R": 5, "C": 7}))
    text = paper(lowered)
    assert text.startswith("map-global(λ row. (λ") and text.count("reduce-seq(") == 2 and text.count("map-seq(") == 1
    assert "map-global[1]" not in text
    a = RNG.uniform(-2.0, 2.0, (5, 7)).astype(np.float32)
    np.testing.assert_allclose(lift.interpret(lowered, a), reference(a), rtol=1e-5)


def _shared(program):
    """`share-computation` applied wherever the engine offers it, until it offers it nowhere."""
    for _ in range(8):
        rewrites = [rw for rw in ENGINE.rewrites(program) if rw.rule == "share-computation"]
        if not rewrites:
            return program
        program = ENGINE.apply(program, rewrites[0])
    raise AssertionError(f"share-computation still applies to {paper(program)}")


def test_a_computation_a_mapped_function_does_twice_is_bound_once_per_element():
    M = SizeVar("M")
    program = fun([ArrayType(ArrayType(Float, N), M)],
                  lambda a: Map(lambda row: Map(mult)(Zip(Map(absf)(row), Map(neg)(Map(absf)(row)))))(a))
    shared = _shared(program)
    assert paper(shared) == "map((λ s_0. map(mult) ∘ zip(s_0, map(neg)(s_0))) ∘ map(absf))"
    a = RNG.uniform(-1.0, 1.0, (3, 5)).astype(np.float32)
    np.testing.assert_array_equal(lift.interpret(shared, a), -np.abs(a) * np.abs(a))


def test_a_computation_reading_an_inner_parameter_is_not_shared():
    """`map(absf)(r)` reads `r`, bound inside the row's function: it is not one value per row."""
    M = SizeVar("M")
    program = fun([ArrayType(ArrayType(ArrayType(Float, N), N), M)],
                  lambda a: Map(lambda m: Map(lambda r: Map(mult)(Zip(Map(absf)(r), Map(absf)(r))))(m))(a))
    with pytest.raises(RuleNotApplicable, match="computes nothing twice"):
        ENGINE.apply(program, Rewrite.of("share-computation", "body"))
    assert len([rw for rw in ENGINE.rewrites(program) if rw.rule == "share-computation"]) == 1
    a = RNG.uniform(-1.0, 1.0, (2, 3, 3)).astype(np.float32)
    np.testing.assert_array_equal(lift.interpret(_shared(program), a), a * a)



@userfun
def neg(x: Float) -> Float:
    return -x


@userfun
def mult(x: Float, y: Float) -> Float:
    return x * y


UNARY = (absf, neg)


@given(st.integers(1, 4), st.integers(1, 9), st.sampled_from(("zip", "reduce", "nested")),
       st.sampled_from(UNARY), st.sampled_from(UNARY), st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_sharing_computations_means_the_same(m, n, shape, u1, u2, seed):
    """Random maps over rows whose function computes `e = map(u2) ∘ map(u1)(row)` two or three times: after
    `share-computation` wherever it applies, the interpreter's result is numpy's."""
    M = SizeVar("M")
    e = lambda row: Map(u2)(Map(u1)(row))
    bodies = {"zip": lambda row: Map(mult)(Zip(e(row), Map(u1)(e(row)))),
              "reduce": lambda row: Reduce(add, 0.0)(Map(mult)(Zip(e(row), e(row)))),
              "nested": lambda row: Map(add)(Zip(e(row), Map(mult)(Zip(e(row), e(row)))))}
    program = fun([ArrayType(ArrayType(Float, N), M)], lambda a: Map(bodies[shape])(a))
    shared = _shared(program)
    assert paper(shared).count("map(λ") < paper(program).count("map(λ") or "s_0" in paper(shared)
    a = np.random.default_rng(seed).uniform(-2.0, 2.0, (m, n)).astype(np.float32)
    ev = {absf: np.abs, neg: np.negative}
    v = ev[u2](ev[u1](a))
    want = {"zip": lambda: v * ev[u1](v), "reduce": lambda: (v * v).sum(axis=1, keepdims=True),
            "nested": lambda: v + v * v}[shape]()
    np.testing.assert_allclose(lift.interpret(shared, a), want, rtol=1e-5)
    np.testing.assert_allclose(lift.interpret(shared, a), lift.interpret(program, a), rtol=1e-6)


def test_the_default_lowering_computes_attention_s_scores_once_per_query(examples):
    """Attention written as a new user writes it (`examples/attention.py`): the scores of a query row, read by
    their maximum, their exponentials and their sum, are computed once per row (`share-computation`), and the
    softmax weights once per row, not once per column of V (`hoist-invariant` of an array of `S` floats);
    the result is numpy's."""
    from lift.rules.default_lowering import default_lowering

    pf = examples["attention"]
    attention, sizes = pf.kernels["attention"], {"S": 13, "D": 7}
    lowered = default_lowering(attention, sizes).replay(attention, RewriteEngine(sizes=sizes))
    assert paper(lowered).count("map-seq(λ k.") == 1
    inputs = pf.inputs("attention", sizes, seed=1)
    np.testing.assert_allclose(lift.interpret(lowered, *inputs), pf.namespace["reference"](*inputs), rtol=1e-4,
                               atol=1e-6)
