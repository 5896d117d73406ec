"""A reduction from an initial value that is not neutral (`reduce(+, 5)`) reduces it exactly once, however the
rules split, pad or vectorise it (issue 18 follow-up: `Reduce(add, 5.0)` over 4099 ones compiled to 5454, not
4104). The rules that reduce `z` more than once require `f(z, z) = z` (`requires_absorbing`);
`reduce-neutral-init` takes any other `z` out, `reduce(f, z) → reduce(f, z) ∘ reduce(f, e)`, and
`reduce-seq-neutral-init` folds the two back into one loop once both are sequential."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import (ArrayType, Float, Map, MapSeq, Reduce, ReduceSeq, SizeVar, UserFun, fun, infer, interpret,
                  paper)
from lift.ir.associativity import absorbs_itself, neutral_element
from lift.ir.nodes import Literal
from lift.rules import RewriteEngine, RuleNotApplicable, Rewrite
from lift.rules.default_lowering import default_lowering

from opencl_device import needs_device

F = Float
N = SizeVar("N")
add = UserFun("add", ("x", "y"), "return x + y;", (F, F), F, python=lambda x, y: x + y)
mult = UserFun("mult", ("x", "y"), "return x * y;", (F, F), F, python=lambda x, y: x * y)
maxf = UserFun("maxf", ("x", "y"), "return fmax(x, y);", (F, F), F, python=np.maximum)
absf = UserFun("absf", ("x",), "return fabs(x);", (F,), F, python=np.abs)
OPS = {"add": add, "mult": mult, "max": maxf}
ENGINE = RewriteEngine(max_factor=8)
SPLITTING = {"partial-reduction", "pad-reduction", "reduce-lanes", "reduce-join", "part-red-iterate"}


def _program(op, z, mapped: bool):
    return fun([ArrayType(F, N)], lambda x: Reduce(op, z)(Map(absf)(x) if mapped else x))


def test_f_z_z_is_z_decides_which_initial_values_may_repeat():
    assert [absorbs_itself(add, Literal(z, F)) for z in (0.0, 5.0, -0.0)] == [True, False, True]
    assert [absorbs_itself(mult, Literal(z, F)) for z in (1.0, 0.0, 2.0)] == [True, True, False]
    assert all(absorbs_itself(maxf, Literal(z, F)) for z in (3.0, -1.0, float("-inf")))
    assert not absorbs_itself(add, Literal(float("nan"), F))
    assert [getattr(neutral_element(op, F), "value", None) for op in OPS.values()] == [0.0, 1.0, None]


def test_splitting_a_reduction_from_a_non_neutral_value_is_refused_and_reduce_neutral_init_offered():
    p = fun([ArrayType(F, 64)], lambda x: Reduce(add, 5.0)(x))
    with pytest.raises(RuleNotApplicable, match=r"add\(5.0, 5.0\) is not 5.0"):
        ENGINE.apply(p, Rewrite.of("partial-reduction", "body", {"chunk": 4}))
    rules = {rw.rule for rw in ENGINE.rewrites(p)}
    assert "reduce-neutral-init" in rules and not rules & SPLITTING
    out = ENGINE.apply(p, Rewrite.of("reduce-neutral-init", "body", {}))
    assert paper(out) == "reduce(add, 5.0) ∘ reduce(add, 0.0)"
    assert "reduce-neutral-init" not in {rw.rule for rw in ENGINE.rewrites(out)}, "applies once, not again outside"


@st.composite
def reductions(draw):
    op = OPS[draw(st.sampled_from(sorted(OPS)))]
    z = draw(st.sampled_from([0.0, 1.0, -1.0, 2.0, 5.0, -2.5, 3.0]))
    n = draw(st.sampled_from([2, 3, 4, 8, 12, 16, 17, 32, 33]))
    mapped = draw(st.booleans())
    x = np.asarray(draw(st.lists(st.sampled_from([-1.0, -0.5, 0.5, 1.0, 2.0]), min_size=n, max_size=n)), np.float32)
    return fun([ArrayType(F, n)], lambda v: Reduce(op, z)(Map(absf)(v) if mapped else v)), x


def _close(got, expected, what):
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=what)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(reductions(), st.lists(st.integers(0, 1 << 16), min_size=1, max_size=5))
def test_every_rewrite_of_a_reduction_from_any_value_keeps_its_meaning(program_and_input, walk):
    """Random walks of rewrites from `reduce(f, z)` (of a map or not) with random `z`: every rewrite the engine
    offers at every step, interpreted, equals the program."""
    program, x = program_and_input
    expected, t = interpret(program, x), infer(program).type
    for choice in walk:
        rewrites = ENGINE.rewrites(program)
        if not rewrites:
            break
        for rw in rewrites:
            new = ENGINE.apply(program, rw)
            assert infer(new).type == t
            _close(interpret(new, x), expected, f"{rw} on {paper(program)}")
        program = ENGINE.apply(program, rewrites[choice % len(rewrites)])


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(OPS)), st.sampled_from([0.0, 1.0, 2.0, 5.0, -3.0]), st.booleans(),
       st.sampled_from([17, 100, 4099, 70001]))
def test_the_default_lowering_of_a_reduction_from_any_value_keeps_its_meaning(name, z, mapped, n):
    program = _program(OPS[name], z, mapped)
    lowered = default_lowering(program, {"N": n}).replay(program)
    x = _signs(n)
    _close(interpret(lowered, x), interpret(program, x), paper(lowered))
    if not absorbs_itself(OPS[name], Literal(z, F)):
        assert "reduce-seq(" + name + f", {z})" in paper(lowered) and paper(lowered).count(f"{z})") == 1


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(OPS)), st.sampled_from([0.0, 2.0, 5.0, -3.0]), st.sampled_from([1, 2, 7, 16]),
       st.booleans(), st.booleans(), st.integers(0, 1 << 16))
def test_reduce_seq_neutral_init_folds_a_fold_from_the_neutral_element(name, z, n, mapped, forwarded, seed):
    """`reduce-seq(f, z) ∘ reduce-seq(g, e)` with `g` being `f` or `λa, b. f(a, b)` (as fusion leaves it)."""
    op = OPS[name]
    e = neutral_element(op, F)
    inner = e.value if e is not None else 0.0
    g = (lambda a, b: op(a, b)) if forwarded else op
    program = fun([ArrayType(F, n)], lambda x: (ReduceSeq(op, z) @ ReduceSeq(g, inner))(
        MapSeq(absf)(x) if mapped else x))
    x = np.random.default_rng(seed).choice(np.float32([-1, -0.5, 0.5, 1, 2]), n)
    offered = [rw for rw in ENGINE.rewrites(program) if rw.rule == "reduce-seq-neutral-init"]
    assert len(offered) == (e is not None)
    for rw in offered:
        new = ENGINE.apply(program, rw)
        assert paper(new).startswith(f"reduce-seq({name}, {z})") and paper(new).count("reduce-seq") == 1
        _close(interpret(new, x), interpret(program, x), paper(new))


def _signs(n):
    """Ones and minus ones, one 2 and one 0.5: every product of a part of it is exact and far from overflowing."""
    x = np.where(np.arange(n) % 3, 1.0, -1.0).astype(np.float32)
    x[1], x[n // 2] = 2.0, 0.5
    return x


def test_the_two_final_folds_are_one():
    lowered = default_lowering(_program(add, 5.0, False), {"N": 1 << 20}).replay(_program(add, 5.0, False))
    assert paper(lowered).startswith("reduce-seq(add, 5.0) ∘ asScalar ∘ reduce-seq(vectorize-4(add)")


CASES = [(add, 5.0, lambda x: 5.0 + x.astype(np.float64).sum()),
         (mult, 2.0, lambda x: 2.0 * np.prod(x.astype(np.float64))),
         (maxf, 3.0, lambda x: max(3.0, float(x.max())))]


@needs_device
@pytest.mark.parametrize("n", [17, 4099, 1_000_003])
@pytest.mark.parametrize("op, z, reference", CASES, ids=["add-5", "mult-2", "max-3"])
def test_compiled_reductions_from_non_neutral_values_equal_numpy(op, z, reference, n):
    """Products of `_signs` stay exact; a sum of ones from 5 would be 5 too many per chunk."""
    x = np.ones(n, np.float32) if op is add else _signs(n)
    if op is maxf:
        x = np.random.default_rng(n).uniform(-5, 5, n).astype(np.float32)
    got = lift.compile(_program(op, z, False))(x)
    np.testing.assert_allclose(float(got), reference(x), rtol=1e-6)
