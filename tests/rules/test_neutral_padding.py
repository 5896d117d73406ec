"""Parallel reductions at any size whatever their neutral element (issue 18, "compile anything"): `pad-reduction`
pads a reduction's input with the reduction's own `z` (a product with 1, `max` with `-inf`, a `(value, index)`
pair over a zip with its components), not with 0, also through the `map(id)` that `reduce-map-id` gives a bare
reduction; an idempotent `and`/`or` pads by repetition; a tuple-valued reduction (argmax) splits into partial
reductions (Figure 3(d)) like a scalar one; a map that sends no value to `z` has its results padded with `z`
(`pad-reduction-result`). Every move the search proposes at a reduction, padded or not, is
checked in the reference interpreter against the program and numpy, at random sizes including primes."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lift import ArrayType, Bool, Float, Int, Map, Reduce, SizeVar, Zip, fun, infer, interpret, paper, userfun
from lift.explore.search_moves import array_reduction_moves, reduction_moves
from lift.ir import patterns as P
from lift.ir.associativity import absorbs_itself, is_idempotent
from lift.ir.nodes import Literal
from lift.rules import RewriteEngine
from lift.rules.default_lowering import clean_up, default_lowering, lower_rest
from lift.rules.registry import rule_named
from lift.rules.rule import RuleNotApplicable
from lift.rules.strategy import Focus, argument, is_call, outermost, rewrite
from userfuns import add, maxf, mult

from argmax import argmax, better
from montecarlo import montecarlo
from montecarlo import reference as montecarlo_reference

N = SizeVar("N")
PRIMES = (3, 5, 17, 31, 127, 257, 1021, 2053, 4099)


@userfun
def minf(x: Float, y: Float) -> Float:
    return min(x, y)


@userfun
def sq(x: Float) -> Float:
    return x * x


@userfun
def both(x: Bool, y: Bool) -> Bool:
    return x and y


@userfun
def positive(x: Float) -> Bool:
    return x > 0.0


@userfun(associative=True)
def fewer(a: (Float, Int), b: (Float, Int)) -> (Float, Int):
    if a[0] < b[0] or (a[0] == b[0] and a[1] < b[1]):
        return (a[0], a[1])
    return (b[0], b[1])


@userfun(associative=True)
def sum_and_count(a: (Float, Int), b: (Float, Int)) -> (Float, Int):
    return (a[0] + b[0], a[1] + b[1])


argmin = fun([ArrayType(Float, N), ArrayType(Int, N)], lambda x, i: Reduce(fewer, (math.inf, -1))(Zip(x, i)))
OPS = {"mult": mult, "max": maxf, "min": minf, "add": add}
INITS = {"mult": (1.0, 2.0, 0.5, -1.0), "max": (-math.inf, 0.0, 3.0), "min": (math.inf, 0.0, -3.0),
         "add": (0.0, 5.0)}


def _derive(program, strategy, n: int):
    focus = (outermost(is_call(P.Reduce), strategy) >> lower_rest >> clean_up)(
        Focus(program, RewriteEngine(sizes={"N": n})))
    return None if focus is None else focus.program


def _from_neutral(r, strategy):
    """`strategy` at the reduction from the neutral element where `z` is not (`reduce-neutral-init`)."""
    return strategy if absorbs_itself(r.f, r.init) else rewrite("reduce-neutral-init") >> argument(0, strategy)


def _sizes():
    return st.one_of(st.sampled_from(PRIMES), st.integers(3, 5000))


def _near_one(rng, n):
    """Values whose product neither overflows nor underflows at any `n`: a random walk of logarithms."""
    return (1.0 + rng.uniform(-1.0, 1.0, n) / math.sqrt(n)).astype(np.float32)


def test_pad_reduction_pads_a_product_with_one_and_a_max_with_minus_infinity():
    for op, z in ((mult, 1.0), (maxf, -math.inf), (minf, math.inf)):
        program = fun([ArrayType(Float, N)], lambda x: Reduce(op, z)(Map(P.Id())(x)))
        padded = _derive(program, rewrite("pad-reduction", k=16), 1021)
        assert f"pad-to-multiple-16({z})" in paper(padded)
        x = np.random.default_rng(0).uniform(0.5, 1.5, 1021).astype(np.float32)
        np.testing.assert_allclose(interpret(padded, x), interpret(program, x), rtol=1e-5)


def test_a_map_is_padded_with_z_where_it_sends_z_but_not_zero_to_z():
    """`sq(0) = 0` is not 1, `sq(1) = 1` is: a product of squares pads `x` with 1."""
    program = fun([ArrayType(Float, N)], lambda x: Reduce(mult, 1.0)(Map(sq)(x)))
    assert "map-global(sq) ∘ pad-to-multiple-16(1.0)" in paper(_derive(program, rewrite("pad-reduction", k=16), 1021))
    shifted = fun([ArrayType(Float, N)], lambda x: Reduce(mult, 1.0)(Map(lambda v: add(v, 2.0))(x)))
    with pytest.raises(RuleNotApplicable, match="does not send 0.0 or 1.0 to the neutral element 1.0"):
        rule_named("pad-reduction").apply(infer(shifted).expr.body, {"k": 16})


def test_a_tuple_reduction_over_a_zip_pads_each_array_with_its_component():
    padded = _derive(argmax, rewrite("pad-reduction", k=16), 1021)
    assert "zip(pad-to-multiple-16(-inf)(x), pad-to-multiple-16(-1)(i))" in paper(padded)
    x = np.random.default_rng(1).integers(0, 9, 1021).astype(np.float32)
    assert tuple(interpret(padded, x, np.arange(1021, dtype=np.int32)).item()) == (x.max(), np.argmax(x))


def test_and_and_or_are_idempotent_so_they_pad_by_repetition():
    assert is_idempotent(both) and is_idempotent(maxf) and not is_idempotent(mult)
    program = fun([ArrayType(Float, N)], lambda x: Reduce(both, True)(Map(positive)(x)))
    lowered = default_lowering(program, {"N": 4099}).replay(program)
    assert "map-global(reduce-seq(" in paper(lowered) and "split-16 ∘ pad-to-multiple-16(clamp)" in paper(lowered)
    assert "vectorize" not in paper(lowered), "OpenCL C has no vectors of bool"
    x = np.random.default_rng(2).uniform(0.1, 1.0, 4099).astype(np.float32)
    for value in (0.5, -0.5):
        x[4098] = value
        assert bool(interpret(lowered, x)) == bool(np.all(x > 0))


def test_a_tuple_initial_value_absorbs_itself_where_the_operator_returns_it():
    assert absorbs_itself(better, argmax.body.f.init) and absorbs_itself(fewer, argmin.body.f.init)
    assert absorbs_itself(sum_and_count, P.Tuple(Literal(0.0, Float), Literal(0, Int)))
    assert not absorbs_itself(sum_and_count, P.Tuple(Literal(0.0, Float), Literal(1, Int)))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(OPS)), st.data(), _sizes(), st.booleans(), st.integers(0, 1 << 30))
def test_every_reduction_move_at_any_size_and_neutral_element_keeps_the_meaning(name, data, n, mapped, seed):
    """A product, max, min or sum from a random `z`, of `x` or of `map(sq)(x)`, at a random size: the move the
    search draws (every chunked one padded where its chunk does not divide `n`) applies and agrees with the
    program and numpy."""
    op = OPS[name]
    z = data.draw(st.sampled_from(INITS[name]))
    program = fun([ArrayType(Float, N)], lambda x: Reduce(op, z)(Map(sq)(x) if mapped else x))
    moves = reduction_moves(n, False, True, False) if mapped else array_reduction_moves(n, False, True)
    move, params, strategy = data.draw(st.sampled_from(moves))
    lowered = _derive(program, _from_neutral(infer(program).expr.body.f, strategy), n)
    assert lowered is not None, f"{move}{params} does not apply to {paper(program)} at N = {n}"
    assert not P.is_high_level(lowered.body.f)
    rng = np.random.default_rng(seed)
    x = _near_one(rng, n) if name == "mult" else rng.standard_normal(n).astype(np.float32)
    v = x.astype(np.float64) ** 2 if mapped else x.astype(np.float64)
    expected = {"mult": np.prod, "add": np.sum, "max": np.max, "min": np.min}[name](np.append(v, z))
    got = interpret(lowered, x)
    np.testing.assert_allclose(got, interpret(program, x), rtol=1e-4, atol=1e-5, err_msg=paper(lowered))
    np.testing.assert_allclose(got, [expected], rtol=1e-4, atol=1e-4, err_msg=paper(lowered))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["argmax", "argmin"]), st.data(), _sizes(), st.integers(1, 50), st.integers(0, 1 << 30))
def test_every_move_of_argmax_and_argmin_keeps_the_first_index_of_ties(name, data, n, distinct, seed):
    """(value, index) pairs reduced by any move the search proposes, at any size: numpy's value and first index,
    with many ties (`distinct` values only)."""
    program = argmax if name == "argmax" else argmin
    move, params, strategy = data.draw(st.sampled_from(array_reduction_moves(n, False, False)))
    lowered = _derive(program, strategy, n)
    assert lowered is not None, f"{move}{params} does not apply to {name} at N = {n}"
    x = np.random.default_rng(seed).integers(0, distinct, n).astype(np.float32)
    k = int(np.argmax(x) if name == "argmax" else np.argmin(x))
    assert tuple(interpret(lowered, x, np.arange(n, dtype=np.int32)).item()) == (x[k], k), paper(lowered)


@pytest.mark.parametrize("n", [17, 4099, 1_000_003])
def test_the_default_lowering_of_argmax_is_parallel(n):
    lowered = default_lowering(argmax, {"N": n}).replay(argmax)
    assert "map-global(reduce-seq(better, tuple(-inf, -1)))" in paper(lowered)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(OPS)), _sizes(), st.integers(1, 6), st.integers(0, 1 << 30))
def test_a_map_sending_nothing_to_z_has_its_results_padded_with_z(name, n, e, seed):
    """`reduce(f, z) ∘ map(λv. v + 2)`, whose map sends neither 0 nor `z` to `z` for a sum or a product
    (`pad-reduction` does not apply): `pad-reduction-result` pads its results with `z` to a multiple of `2^e`, and
    the default lowering chunks it at any size; both agree with the program and numpy."""
    assume(n % (1 << e) and 1 << e < 2 * n)  # the multiples it enumerates
    op, z = OPS[name], {"mult": 1.0, "max": -math.inf, "min": math.inf, "add": 0.0}[name]
    program = fun([ArrayType(Float, N)], lambda x: Reduce(op, z)(Map(lambda v: add(v, 2.0))(x)))
    if name in ("add", "mult"):
        with pytest.raises(RuleNotApplicable, match="does not send"):
            rule_named("pad-reduction").apply(infer(program).expr.body, {"k": 1 << e})
    padded = _derive(program, rewrite("pad-reduction-result", k=1 << e), n)
    assert f"pad-to-multiple-{1 << e}({z})" in paper(padded)
    lowered = default_lowering(program, {"N": n}).replay(program)
    rng = np.random.default_rng(seed)
    x = _near_one(rng, n) - np.float32(2) if name == "mult" else rng.standard_normal(n).astype(np.float32)
    expected = {"mult": np.prod, "add": np.sum, "max": np.max, "min": np.min}[name](x.astype(np.float64) + 2.0)
    for form in (padded, lowered):
        got = interpret(form, x)
        np.testing.assert_allclose(got, interpret(program, x), rtol=1e-4, atol=1e-5, err_msg=paper(form))
        np.testing.assert_allclose(got, [expected], rtol=1e-4, atol=1e-4, err_msg=paper(form))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["add", "mult"]), st.data(), _sizes(), st.integers(0, 1 << 30))
def test_every_reduction_move_pads_the_results_of_a_map_sending_nothing_to_z(name, data, n, seed):
    """The move the search draws at `reduce(f, z) ∘ map(λv. v + 2)` (a sum or a product, whose input no value
    pads): every chunked one, padded where its chunk does not divide `n`, pads the map's results instead, and
    agrees with the program and numpy."""
    op, z = OPS[name], {"add": 0.0, "mult": 1.0}[name]
    program = fun([ArrayType(Float, N)], lambda x: Reduce(op, z)(Map(lambda v: add(v, 2.0))(x)))
    move, params, strategy = data.draw(st.sampled_from(reduction_moves(n, False, True, False)))
    lowered = _derive(program, strategy, n)
    assert lowered is not None, f"{move}{params} does not apply to {paper(program)} at N = {n}"
    rng = np.random.default_rng(seed)
    x = _near_one(rng, n) - np.float32(2) if name == "mult" else rng.standard_normal(n).astype(np.float32)
    expected = (np.prod if name == "mult" else np.sum)(x.astype(np.float64) + 2.0)
    got = interpret(lowered, x)
    np.testing.assert_allclose(got, interpret(program, x), rtol=1e-4, atol=1e-5, err_msg=paper(lowered))
    np.testing.assert_allclose(got, [expected], rtol=1e-4, atol=1e-4, err_msg=paper(lowered))


def test_the_default_lowering_of_a_count_at_a_prime_size_chunks_the_mapped_results():
    """A Monte-Carlo count at a prime size: its hashed test sends no index to 0, so its results are padded with 0
    (`pad-reduction-result`) and counted in chunks on global work-items, not by one work-item."""
    for n in (4099, 65521):
        lowered = default_lowering(montecarlo, {"N": n}).replay(montecarlo)
        assert "pad-to-multiple-" in paper(lowered) and "map-global(reduce-seq(" in paper(lowered), paper(lowered)
        idx = np.arange(n, dtype=np.int32)
        assert interpret(lowered, idx).item() == montecarlo_reference(idx).item()
