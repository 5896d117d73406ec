"""`transpose-copy` (lift.rules.transposition), `iterate-once`, `-zero` and `-host` (lift.rules.iterate) and the
default lowering's use of them and of `map-eta-expansion` on a map of a user function of arrays: every rewrite
means what the program means (the interpreter, before and after, and numpy)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import (ArrayType, Float, Get, Iterate, Join, Map, Pad, Reduce, SizeVar, Slide, Split, Transpose, Zip,
                  fun, paper, userfun)
from lift.rules import Rewrite, RewriteEngine, RuleNotApplicable
from lift.rules.default_lowering import LoweringError, lower

from userfuns import add, avg3, halve, mult

M, N = SizeVar("M"), SizeVar("N")
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
ENGINE = RewriteEngine()


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


def _atax(A, x):
    ax = Join()(Map(lambda row: dot(row, x))(A))
    return Join()(Map(lambda col: dot(col, ax))(Transpose()(A)))


@userfun
def plus_sum(x: Float, s: ArrayType(Float, 1)) -> Float:
    return x + s[0]


def _gemvt_plus(A, x, y):
    return Map(lambda xc: plus_sum(Get(xc, 0), dot(Get(xc, 1), y)))(Zip(x, Transpose()(A)))


def _gram(A):
    cols = Transpose()(A)
    return Map(lambda a: Join()(Map(lambda b: dot(a, b))(cols)))(cols)


Mat = ArrayType(ArrayType(Float, N), M)
PROGRAMS = {
    "atax": (fun([Mat, ArrayType(Float, N)], _atax), lambda A, x: A.T @ (A @ x)),
    "gemvt": (fun([Mat, ArrayType(Float, N), ArrayType(Float, M)], _gemvt_plus), lambda A, x, y: x + A.T @ y),
    "gram": (fun([Mat], _gram), lambda A: A.T @ A),
    "colsum": (fun([Mat], lambda A: Join()(Map(Reduce(add, 0.0))(Transpose()(A)))), lambda A: A.sum(axis=0)),
}


def _inputs(name, m, n, rng):
    A = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    extra = {"atax": [(n,)], "gemvt": [(n,), (m,)]}.get(name, [])
    return [A] + [rng.uniform(-1, 1, s).astype(np.float32) for s in extra]


def _copied(program, rule="transpose-copy"):
    """`program` with `rule` applied at each place the engine finds, outermost first."""
    places = [r for r in ENGINE.rewrites(program) if r.rule == rule]
    assert places, f"{rule} does not apply to {paper(program)}"
    return [ENGINE.apply(program, r) for r in places]


@SETTINGS
@given(st.sampled_from(sorted(PROGRAMS)), st.integers(1, 9), st.integers(1, 9), st.integers(0, 1 << 16))
def test_transpose_copy_means_the_program(name, m, n, seed):
    program, reference = PROGRAMS[name]
    inputs = _inputs(name, m, n, np.random.default_rng(seed))
    want = lift.interpret(program, *inputs)
    np.testing.assert_allclose(np.ravel(want), np.ravel(reference(*inputs)), rtol=1e-4, atol=1e-5)
    for copied in _copied(program):
        np.testing.assert_array_equal(lift.interpret(copied, *inputs), want)


@SETTINGS
@given(st.sampled_from(["atax", "colsum", "gram"]), st.integers(1, 9), st.integers(1, 9), st.integers(0, 1 << 16))
def test_transpose_copy_argument_means_the_program(name, m, n, seed):
    """A map over the columns of `A` walking each (gemvt's zips them: no place) over the rows of a copy of `Aᵀ`."""
    program, reference = PROGRAMS[name]
    inputs = _inputs(name, m, n, np.random.default_rng(seed))
    want = lift.interpret(program, *inputs)
    for copied in _copied(program, "transpose-copy-argument"):
        np.testing.assert_array_equal(lift.interpret(copied, *inputs), want)
        np.testing.assert_allclose(np.ravel(lift.interpret(copied, *inputs)), np.ravel(reference(*inputs)),
                                   rtol=1e-4, atol=1e-5)


def test_transpose_copy_argument_copies_the_left_operand_only():
    """Gram's `Aᵀ A`: the outer map walks the copy's rows, its function the columns of `A` as before."""
    copied = ENGINE.apply(PROGRAMS["gram"][0], Rewrite.of("transpose-copy-argument", "body"))
    assert paper(copied) == ("λ A. (map(λ a. join ∘ map(λ b. reduce(add, 0.0) ∘ map(mult) ∘ zip(a, b)) ∘ "
                             "transpose(A))) ∘ map(map(id)) ∘ transpose(A)")
    elementwise = fun([Mat], lambda A: Map(lambda col: Map(mult)(Zip(col, col)))(Transpose()(A)))
    with pytest.raises(RuleNotApplicable, match="reduces nothing"):
        ENGINE.apply(elementwise, Rewrite.of("transpose-copy-argument", "body"))


def test_transpose_copy_lets_one_copy_of_each_transposition_and_replaces_every_use():
    copied = ENGINE.apply(PROGRAMS["gram"][0], Rewrite.of("transpose-copy", "body"))
    assert paper(copied) == ("(λ t_0. map(λ a. join ∘ map(λ b. reduce(add, 0.0) ∘ map(mult) ∘ zip(a, b))(t_0))(t_0)) "
                             "∘ map(map(id)) ∘ transpose")


def test_transpose_copy_needs_a_matrix_the_map_does_not_compute():
    per_block = fun([ArrayType(ArrayType(ArrayType(Float, 4), 3), M)],
                    lambda X: Map(lambda B: Join()(Map(lambda col: Reduce(add, 0.0)(col))(Transpose()(B))))(X))
    with pytest.raises(RuleNotApplicable):
        ENGINE.apply(per_block, Rewrite.of("transpose-copy", "body"))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_default_lowering_copies_a_transposition_walked_once_per_element(name):
    program, reference = PROGRAMS[name]
    m, n = 37, 23
    lowered = lower(program, {"M": m, "N": n})
    assert ("map-global[1](map-global(id)) ∘ transpose" in paper(lowered)) == (name == "gram")
    inputs = _inputs(name, m, n, np.random.default_rng(1))
    np.testing.assert_allclose(np.ravel(lift.interpret(lowered, *inputs)), np.ravel(reference(*inputs)),
                               rtol=1e-4, atol=1e-5)


def test_short_columns_are_not_copied():
    assert "map(map(id))" not in paper(lower(PROGRAMS["gram"][0], {"M": 5, "N": 300})).replace("-global", "")


def _step(kernels: int):
    """A step of the 3-point average: one kernel, or two (the array halved first, then averaged)."""
    if kernels == 1:
        return lambda b: Map(avg3)(Slide(3, 1)(Pad(1, 1, "clamp")(b)))
    return lambda b: Map(avg3)(Slide(3, 1)(Pad(1, 1, "clamp")(Map(halve)(b))))


@SETTINGS
@given(st.integers(0, 3), st.integers(1, 40), st.sampled_from([1, 2]), st.integers(0, 1 << 16))
def test_an_iteration_of_one_kernel_is_a_host_loop_of_two_unrolled_of_none_a_copy(steps, n, kernels, seed):
    program = fun([ArrayType(Float, N)], lambda a: Iterate(steps, _step(kernels))(a))
    x = np.random.default_rng(seed).uniform(-1, 1, n).astype(np.float32)
    want = x.astype(np.float64)
    for _ in range(steps):
        p = np.pad(want * (0.5 if kernels == 2 else 1), 1, mode="edge")
        want = (p[:-2] + p[1:-1] + p[2:]) / 3
    np.testing.assert_allclose(lift.interpret(program, x), want, rtol=1e-5, atol=1e-6)
    lowered = lower(program, {"N": n})
    if steps == 0:
        assert "iterate" not in paper(lowered) and "avg3" not in paper(lowered) and "(id)" in paper(lowered)
    elif kernels == 1:
        assert paper(lowered).startswith(f"iterate-host-{steps}(") and paper(lowered).count("avg3") == 1
    else:
        assert "iterate" not in paper(lowered) and paper(lowered).count("avg3") == steps
    np.testing.assert_allclose(lift.interpret(lowered, x), want, rtol=1e-5, atol=1e-6)


def test_iterate_once_applies_to_one_iteration_only():
    one = fun([ArrayType(Float, N)], lambda a: Iterate(1, Map(avg3) @ Slide(3, 1) @ Pad(1, 1, "clamp"))(a))
    assert paper(ENGINE.apply(one, Rewrite.of("iterate-once", "body"))) == "(map(avg3) ∘ slide(3, 1) ∘ pad(1, 1, clamp))"
    two = fun([ArrayType(Float, N)], lambda a: Iterate(2, Map(avg3) @ Slide(3, 1) @ Pad(1, 1, "clamp"))(a))
    with pytest.raises(RuleNotApplicable):
        ENGINE.apply(two, Rewrite.of("iterate-once", "body"))


def test_a_map_of_a_user_function_of_windows_copies_each_window_to_private_memory():
    program = fun([ArrayType(Float, N)], lambda a: Map(avg3)(Slide(3, 1)(Pad(1, 1, "clamp")(a))))
    assert "toPrivate(map-seq-unroll(id))" in paper(lower(program, {"N": 101}))


def test_an_iteration_too_long_to_unroll_is_one_clear_error_unless_a_host_loop():
    program = fun([ArrayType(Float, N)], lambda a: Iterate(100, _step(2))(a))
    with pytest.raises(LoweringError, match=r"iterate-100\(.*\) at body: .* from 1 to 64 \(here 100\)"):
        lower(program, {"N": 1000})
    assert paper(lower(fun([ArrayType(Float, N)], lambda a: Iterate(100, _step(1))(a)), {"N": 1000})).startswith(
        "iterate-host-100(")


@SETTINGS
@given(st.sampled_from(["atax", "colsum", "gemvt"]), st.integers(16, 40), st.sampled_from([8, 12, 16]),
       st.integers(2, 4), st.integers(0, 1 << 16))
def test_the_default_lowering_folds_blocks_of_columns_where_a_block_divides_them(name, m, w, blocks, seed):
    program, reference = PROGRAMS[name]
    n = w * blocks
    lowered = lower(program, {"M": m, "N": n})
    width = next(b for b in range(64, 7, -1) if n % b == 0 and n // b >= 2)
    assert f"map(split-{width})" in paper(lowered)  # gemvt's fold, over a zip, split off its map first
    inputs = _inputs(name, m, n, np.random.default_rng(seed))
    np.testing.assert_allclose(np.ravel(lift.interpret(lowered, *inputs)), np.ravel(reference(*inputs)),
                               rtol=1e-4, atol=1e-4)


def test_columns_are_folded_in_blocks_only_where_vectors_pay():
    program, _ = PROGRAMS["atax"]
    sizes = {"M": 64, "N": 96}
    assert "map(split-48)" in paper(lower(program, sizes, vector_width=8))
    assert "map(split-48)" not in paper(lower(program, sizes, vector_width=1))


def test_flatten_map_keeps_out_of_an_iterate_that_changes_the_length():
    """`flatten-map` splits by the row length, which an iterate that halves its array changes at every step: there
    it would split every step's rows as the first step's (found by a random draw of test_rules_properties)."""
    halving = fun([ArrayType(Float, 8)], lambda x: Iterate(2, lambda y: Join()(Map(Reduce(add, 0.0))(Transpose()(
        Map(Map(lift.Id()))(Transpose()(Split(2)(y)))))))(x))
    engine = RewriteEngine(max_factor=8)
    x = np.arange(8, dtype=np.float32)
    assert "flatten-map" not in [rw.rule for rw in engine.rewrites(halving)]
    for rw in engine.rewrites(halving):
        new = engine.apply(halving, rw)
        assert lift.infer(new).type == lift.infer(halving).type, rw
        np.testing.assert_allclose(lift.interpret(new, x), lift.interpret(halving, x), rtol=1e-6)
