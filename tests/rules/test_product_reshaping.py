"""Products that a map reshapes into the shape the register blocking matches (`lift.rules.macro_rules._reshaped`):
a map of products with one right operand flattened into one product (`flatten-map`, `lift.rules.split_join`:
PolyBench's doitgen) and a product `A Bᵀ` walking the rows of `B` given a copy of `Bᵀ` (`transpose-copy-rows`,
`lift.rules.transposition`: syrk's `A Aᵀ`). Every rewrite and every blocking against the interpreter on random
sizes and data (Hypothesis); the default lowering of `examples/syrk.py` and `examples/doitgen.py` against numpy."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Transpose, Zip, fun, infer, interpret, paper
from lift.rules import RewriteEngine, RuleNotApplicable
from lift.rules import Rewrite
from lift.rules.default_lowering import default_lowering, lower
from lift.rules.macro_rules import blocked_products, register_blocked
from lift.rules.strategy import Focus

from userfuns import add, mult

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from doitgen import doitgen  # noqa: E402
from doitgen import reference as doitgen_reference  # noqa: E402
from syrk import axpby, syrk  # noqa: E402
from syrk import reference as syrk_reference  # noqa: E402

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
R, M, K, N = SizeVar("R"), SizeVar("M"), SizeVar("K"), SizeVar("N")


def Mat(rows, cols):
    return ArrayType(ArrayType(Float, cols), rows)


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


PROGRAMS = {
    # A Bᵀ: every row of A against every row of B
    "abt": (fun([Mat(M, K), Mat(N, K)], lambda A, B: Map(lambda a: Map(lambda b: dot(a, b))(B))(A)),
            lambda A, B: A.astype(np.float64) @ B.T),
    # syrk's α A Aᵀ + β C: the rows of A zipped with a row of C, A also the outer map's
    "syrk": (fun([Float, Float, Mat(N, K), Mat(N, N)], lambda alpha, beta, A, C: Map(lambda ac: Map(
        lambda bc: axpby(alpha, dot(Get(ac, 0), Get(bc, 0)), beta, Get(bc, 1)))(Zip(A, Get(ac, 1))))(Zip(A, C))),
             lambda alpha, beta, A, C: alpha * (A.astype(np.float64) @ A.T) + beta * C),
    # doitgen: every slab of a 3-D array times one matrix, through a lambda
    "slabs": (fun([ArrayType(Mat(M, K), R), Mat(K, N)], lambda X, B: Map(lambda s: Map(lambda a: Map(
        lambda b: dot(a, b))(Transpose()(B)))(s))(X)), lambda X, B: np.tensordot(X.astype(np.float64), B, (2, 0))),
    # the same point-free
    "slabs_point_free": (fun([ArrayType(Mat(M, K), R), Mat(K, N)], lambda X, B: Map(Map(lambda a: Map(
        lambda b: dot(a, b))(Transpose()(B))))(X)), lambda X, B: np.tensordot(X.astype(np.float64), B, (2, 0))),
}
RULE = {"abt": "transpose-copy-rows", "syrk": "transpose-copy-rows", "slabs": "flatten-map",
        "slabs_point_free": "flatten-map"}


def _rand(rng, *shape):
    """Halves of small integers: every sum and product of them here is exact in float32, whatever its order."""
    return rng.integers(-4, 5, shape).astype(np.float32) / 2


def _inputs(name, rng, r, m, k, n):
    return {"abt": lambda: [_rand(rng, m, k), _rand(rng, n, k)],
            "syrk": lambda: [np.float32(1.5), np.float32(0.5), _rand(rng, n, k), _rand(rng, n, n)],
            "slabs": lambda: [_rand(rng, r, m, k), _rand(rng, k, n)],
            "slabs_point_free": lambda: [_rand(rng, r, m, k), _rand(rng, k, n)]}[name]()


def _result(program, inputs):
    return np.asarray(interpret(program, *inputs), np.float64)


@SETTINGS
@given(st.sampled_from(sorted(PROGRAMS)), st.integers(1, 4), st.integers(1, 7), st.integers(1, 7),
       st.integers(1, 7), st.integers(0, 1 << 16))
def test_every_reshaping_means_what_the_program_means(name, r, m, k, n, seed):
    program, reference = PROGRAMS[name]
    inputs = _inputs(name, np.random.default_rng(seed), r, m, k, n)
    expected = _result(program, inputs)
    np.testing.assert_array_equal(expected, reference(*inputs).reshape(expected.shape))
    engine = RewriteEngine(sizes={"R": r, "M": m, "K": k, "N": n})
    places = [p for p in engine.rewrites(program) if p.rule == RULE[name]]
    assert [p.location for p in places] == ["body"]
    reshaped = engine.apply(program, places[0])
    assert infer(reshaped).type == infer(program).type
    np.testing.assert_array_equal(_result(reshaped, inputs).reshape(expected.shape), expected)


def test_the_reshaped_programs():
    engine = RewriteEngine()
    assert paper(engine.apply(PROGRAMS["abt"][0], Rewrite.of("transpose-copy-rows", "body"))) == (
        "λ A, B. (λ t_0. map(λ a. map(λ b. reduce(add, 0.0) ∘ map(mult) ∘ zip(a, b)) ∘ transpose(t_0))(A)) ∘ "
        "map(map(id)) ∘ transpose(B)")
    assert paper(engine.apply(PROGRAMS["slabs"][0], Rewrite.of("flatten-map", "body"))) == (
        "λ X, B. split-(M) ∘ map(λ a. map(λ b. reduce(add, 0.0) ∘ map(mult) ∘ zip(a, b)) ∘ transpose(B)) ∘ join(X)")


def test_no_reshaping_where_the_function_reads_its_element_or_computes_what_it_walks():
    """A batch of products of their own (each slab against its own matrix) is not one product; a row walked per
    element that the map's own element gives (`B` bound in the call) has no copy outside it."""
    own = fun([ArrayType(Mat(M, K), R), ArrayType(Mat(N, K), R)], lambda X, Y: Map(lambda p: Map(lambda a: Map(
        lambda b: dot(a, b))(Get(p, 1)))(Get(p, 0)))(Zip(X, Y)))
    for rule in ("flatten-map", "transpose-copy-rows"):
        with pytest.raises(RuleNotApplicable):
            RewriteEngine().apply(own, Rewrite.of(rule, "body"))


BLOCKS = [(1, 2), (2, 4), (4, 4), (2, 8)]


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(sorted(PROGRAMS)), st.sampled_from(BLOCKS), st.integers(1, 3), st.integers(1, 2),
       st.integers(1, 5), st.integers(1, 2), st.booleans(), st.integers(0, 1 << 16))
def test_every_reshaped_blocked_product_means_what_the_program_means(name, block, r, mh, k, nw, cut, seed):
    """Sizes the blocks divide (then every product is blocked: `A Bᵀ` reshaped first, a map of products where a
    block of one row does not apply to it as it is) or one less (padded where that adds at most an eighth, else
    left as it is)."""
    h, w = block
    m, n = mh * h * 2 - cut, nw * w * 2 - cut
    if name == "syrk":
        m = n
    program, _ = PROGRAMS[name]
    inputs = _inputs(name, np.random.default_rng(seed), r, m, k, n)
    focus = blocked_products(register_blocked(h, w, padded=True))(
        Focus(program, RewriteEngine(sizes={"R": r, "M": m, "K": k, "N": n})))
    steps = [s.rule for s in focus.steps]
    assert infer(focus.program).type == infer(program).type
    assert cut or "private-accumulator" in steps
    assert cut or RULE[name] in steps or (name.startswith("slabs") and h == 1)
    np.testing.assert_array_equal(_result(focus.program, inputs), _result(program, inputs))


@pytest.mark.parametrize("program, reference, sizes, rule", [
    (syrk, syrk_reference, {"N": 61, "M": 13}, "transpose-copy-rows"),
    (doitgen, doitgen_reference, {"R": 3, "Q": 13, "P": 31}, "flatten-map")])
def test_the_default_lowering_blocks_syrk_and_doitgen(program, reference, sizes, rule):
    """Their products register-blocked (a naive one reads a row and a column per result: 0.12x and 0.09x numpy at
    1001x999 and 61x67x127 on PoCL), and the lowered program computes numpy's result."""
    steps = [s.rule for s in default_lowering(program, sizes).steps]
    assert rule in steps and "private-accumulator" in steps
    rng = np.random.default_rng(5)
    shapes = {"N": [(61, 13), (61, 61)], "R": [(3, 13, 31), (31, 31)]}[next(iter(sizes))]
    inputs = ([np.float32(1.5), np.float32(0.5)] if program is syrk else []) + [_rand(rng, *s) for s in shapes]
    want = reference(*inputs)
    np.testing.assert_allclose(_result(lower(program, sizes), inputs).reshape(want.shape), want, rtol=1e-6, atol=1e-6)
