"""Matrix products whose results a user function post-processes (`lift.rules.fold_splitting.product_split_off`,
`lift.rules.macro_rules.blocked_products`): the user function split off as an elementwise map, the plain product
left register-blocked. Every split and every blocking against the interpreter on random sizes and data
(Hypothesis); where the default lowering and the search block 2mm's and covariance's products; on the device
against numpy."""

import itertools
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Transpose, Zip, fun, infer, interpret, paper, userfun
from lift.explore.macro_space import macro_derivations
from lift.ir import patterns as P
from lift.rules import RewriteEngine
from lift.rules.default_lowering import default_lowering, lower
from lift.rules.fold_splitting import product_split_off
from lift.rules.macro_rules import blocked_products, column_map, register_blocked
from lift.rules.strategy import Focus, inside, is_call, mapped_body, normalize, where

from opencl_device import needs_device
from userfuns import add, mult

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from covariance import covariance, unbiased  # noqa: E402
from covariance import reference as covariance_reference  # noqa: E402
from twomm import plus_scaled, scaled, twomm  # noqa: E402
from twomm import reference as twomm_reference  # noqa: E402

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
M, K, N = SizeVar("M"), SizeVar("K"), SizeVar("N")


def Mat(rows, cols):
    return ArrayType(ArrayType(Float, cols), rows)


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


@userfun
def relu(s: ArrayType(Float, 1)) -> Float:
    return max(s[0], 0.0)


@userfun
def first_plus(s: ArrayType(Float, 1), x: Float) -> Float:
    return s[0] + x


PROGRAMS = {
    # 2mm's α · (A B): a user function of the fold and a value free in the maps
    "scaled": fun([Float, Mat(M, K), Mat(K, N)], lambda alpha, A, B: Map(
        lambda a: Map(lambda b: scaled(alpha, dot(a, b)))(Transpose()(B)))(A)),
    # 2mm's (A B) C + β D: the columns of C zipped with a row of D, the rows of A zipped with D
    "zipped": fun([Float, Mat(M, K), Mat(K, N), Mat(M, N)], lambda beta, A, B, D: Map(
        lambda ad: Map(lambda bd: plus_scaled(dot(Get(ad, 0), Get(bd, 0)), beta, Get(bd, 1)))(
            Zip(Transpose()(B), Get(ad, 1))))(Zip(A, D))),
    # a covariance's Xᵀ X / (n - 1): both operands transposed views of one matrix
    "gram": fun([Float, Mat(K, N)], lambda n, X: Map(
        lambda ci: Map(lambda cj: unbiased(dot(ci, cj), n))(Transpose()(X)))(Transpose()(X))),
    # the map of folds already on the spine, a map of the user function after it
    "spine": fun([Mat(M, K), Mat(K, N)], lambda A, B: Map(
        lambda a: Map(relu)(Map(lambda b: dot(a, b))(Transpose()(B))))(A)),
    # the element of the outer map read beside the product: split off into a new component of the zip
    "row_read": fun([Mat(M, K), Mat(K, N), ArrayType(Float, M)], lambda A, B, x: Map(
        lambda ax: Map(lambda b: first_plus(dot(Get(ax, 0), b), Get(ax, 1)))(Transpose()(B)))(Zip(A, x))),
}
REFERENCES = {
    "scaled": lambda alpha, A, B: alpha * (A.astype(np.float64) @ B),
    "zipped": lambda beta, A, B, D: A.astype(np.float64) @ B + beta * D,
    "gram": lambda n, X: X.T.astype(np.float64) @ X / (n - 1),
    "spine": lambda A, B: np.maximum(A.astype(np.float64) @ B, 0),
    "row_read": lambda A, B, x: A.astype(np.float64) @ B + x[:, None],
}


def _rand(rng, *shape):
    """Halves of small integers: every sum and product of them here is exact in float32, whatever its order."""
    return rng.integers(-4, 5, shape).astype(np.float32) / 2


def _inputs(name, rng, m, k, n):
    return {"scaled": lambda: [np.float32(1.5), _rand(rng, m, k), _rand(rng, k, n)],
            "zipped": lambda: [np.float32(0.5), _rand(rng, m, k), _rand(rng, k, n), _rand(rng, m, n)],
            "gram": lambda: [np.float32(k + 1), _rand(rng, k, n)],
            "spine": lambda: [_rand(rng, m, k), _rand(rng, k, n)],
            "row_read": lambda: [_rand(rng, m, k), _rand(rng, k, n), _rand(rng, m)]}[name]()


def _result(program, inputs, shape):
    return np.asarray(interpret(program, *inputs)).reshape(shape)


def _shape(name, m, n):
    return (n, n) if name == "gram" else (m, n)


SPLIT = normalize(where(is_call(P.Map) & ~inside()) >> product_split_off(mapped_body(where(column_map))))
"""Every product's user function split off, where a plain product is left (its function a map over columns)."""


def _split(program, sizes):
    focus = SPLIT(Focus(program, RewriteEngine(sizes=sizes)))
    return focus.program, [s.rule for s in focus.steps]


@SETTINGS
@given(st.sampled_from(sorted(PROGRAMS)), st.integers(1, 9), st.integers(1, 9), st.integers(1, 9),
       st.integers(0, 1 << 16))
def test_every_product_split_means_what_the_program_means(name, m, k, n, seed):
    inputs = _inputs(name, np.random.default_rng(seed), m, k, n)
    program, shape = PROGRAMS[name], _shape(name, m, n)
    expected = _result(program, inputs, shape)
    np.testing.assert_allclose(expected, REFERENCES[name](*inputs), rtol=1e-6)
    split, steps = _split(program, {"M": m, "K": k, "N": n})
    assert steps and set(steps) <= {"map-subterm-fission", "map-fission"}
    assert infer(split).type == infer(program).type
    np.testing.assert_array_equal(_result(split, inputs, shape), expected)


@pytest.mark.parametrize("name, expected", [
    ("scaled", "λ alpha, A, B. map(map(λ v. scaled(alpha, v))) ∘ map(λ a. map(λ q. reduce(add, 0.0) ∘ map(mult) ∘ "
               "zip(a, q)) ∘ transpose(B))(A)"),
    ("zipped", "λ beta, A, B, D. map(λ ad. map(λ bd. plus_scaled(get-0(bd), beta, get-1(bd))) ∘ "
               "zip(get-0(ad), get-1(ad))) ∘ zip(map(λ q. map(λ q. reduce(add, 0.0) ∘ map(mult) ∘ zip(q, q)) ∘ "
               "transpose(B))(A), D)"),
    ("spine", "λ A, B. map(map(relu)) ∘ map(λ a. map(λ b. reduce(add, 0.0) ∘ map(mult) ∘ zip(a, b)) ∘ "
              "transpose(B))(A)"),
    ("row_read", "λ A, B, x. map(λ ax. map(λ v. first_plus(v, get-1(ax))) ∘ get-0(ax)) ∘ zip(map(λ q. map(λ q. "
                 "reduce(add, 0.0) ∘ map(mult) ∘ zip(q, q)) ∘ transpose(B))(A), x)"),
])
def test_the_user_function_is_an_elementwise_map_over_a_plain_product(name, expected):
    assert re.sub(r"_\d+", "", paper(_split(PROGRAMS[name], {})[0])) == expected


@userfun
def times(s: ArrayType(Float, 1), t: ArrayType(Float, 1)) -> Float:
    return s[0] * t[0]


def test_no_split_where_the_user_function_reads_the_column_beside_the_fold():
    program = fun([Mat(M, K), Mat(K, N)], lambda A, B: Map(lambda a: Map(
        lambda b: times(dot(a, b), Reduce(add, 0.0)(b)))(Transpose()(B)))(A))
    assert not _split(program, {})[1]


BLOCKS = [(1, 2), (2, 4), (4, 4), (2, 8)]


@SETTINGS
@given(st.sampled_from(sorted(PROGRAMS)), st.sampled_from(BLOCKS), st.integers(1, 3), st.integers(1, 9),
       st.integers(1, 3), st.booleans(), st.integers(0, 1 << 16))
def test_every_blocked_product_means_what_the_program_means(name, block, mh, k, nw, cut, seed):
    """Sizes the blocks divide (then every product is blocked) or one less (padded where that adds at most an
    eighth, else left as it is)."""
    h, w = block
    m, n = mh * h * 2 - cut, nw * w * 2 - cut
    inputs = _inputs(name, np.random.default_rng(seed), m, k, n)
    program, shape = PROGRAMS[name], _shape(name, m, n)
    focus = blocked_products(register_blocked(h, w, padded=True))(
        Focus(program, RewriteEngine(sizes={"M": m, "K": k, "N": n})))
    assert infer(focus.program).type == infer(program).type
    assert cut or "private-accumulator" in [s.rule for s in focus.steps]
    np.testing.assert_array_equal(_result(focus.program, inputs, shape), _result(program, inputs, shape))


def _twomm_inputs(rng, ni, nj, nk, nl):
    return [np.float32(1.5), np.float32(0.5)] + [_rand(rng, *s) for s in ((ni, nk), (nk, nj), (nj, nl), (ni, nl))]


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(25, 40), st.integers(28, 40), st.integers(1, 20), st.integers(28, 40), st.integers(0, 1 << 16))
def test_the_default_lowering_of_2mm_means_2mm(ni, nj, nk, nl, seed):
    """Both products blocked where `BLOCK`'s padding adds at most an eighth (`MAX_PADDING`), else not; either way
    the lowered program computes what 2mm does."""
    sizes = {"NI": ni, "NJ": nj, "NK": nk, "NL": nl}
    inputs = _twomm_inputs(np.random.default_rng(seed), ni, nj, nk, nl)
    expected = _result(twomm, inputs, (ni, nl))
    np.testing.assert_allclose(expected, twomm_reference(*inputs), rtol=1e-6)
    np.testing.assert_array_equal(_result(lower(twomm, sizes), inputs, (ni, nl)), expected)


def _steps(program, sizes):
    return [s.rule for s in default_lowering(program, sizes).steps]


@pytest.mark.parametrize("program, sizes, products", [
    (twomm, {"NI": 181, "NJ": 191, "NK": 211, "NL": 223}, 2), (twomm, {"NI": 29, "NJ": 31, "NK": 13, "NL": 63}, 2),
    (twomm, {"NI": 29, "NJ": 33, "NK": 13, "NL": 63}, 1),  # 33 columns: blocks of 16 would pad 15
    (covariance, {"M": 251, "N": 1001}, 1), (covariance, {"M": 31, "N": 41}, 1)])
def test_the_default_lowering_blocks_the_products_of_2mm_and_covariance(program, sizes, products):
    """`BLOCK`'s rows interchanged with its columns once per product (`block_rows`: `map-map-interchange`)."""
    steps = _steps(program, sizes)
    assert steps.count("map-map-interchange") == products and "map-subterm-fission" in steps


@pytest.mark.parametrize("program, sizes, copies", [
    (covariance, {"M": 251, "N": 1001}, 1), (covariance, {"M": 31, "N": 41}, 1),
    (twomm, {"NI": 29, "NJ": 31, "NK": 13, "NL": 63}, 0)])
def test_the_default_lowering_copies_a_transposed_left_operand_before_blocking(program, sizes, copies):
    """Covariance's `Xᵀ`, the left operand of `Xᵀ X`, copied once (`transpose-copy-argument`), the product then
    blocked over the copy's rows; 2mm's left operands are matrices in memory, not copied."""
    steps = _steps(program, sizes)
    assert steps.count("transpose-copy-argument") == copies
    if copies:
        assert steps.index("transpose-copy-argument") < steps.index("map-map-interchange")


def test_the_search_proposes_covariance_with_and_without_its_left_operand_copied():
    sizes = {"M": 16, "N": 7}
    data = np.random.default_rng(9).uniform(-1, 1, (7, 16)).astype(np.float32)
    expected = covariance_reference(np.float32(7), data.astype(np.float64))
    found = list(itertools.islice(macro_derivations(covariance, sizes), 4))
    copied = ["left rows copied" in params["register-blocked"] for _, _, params in found]
    assert any(copied) and not all(copied)
    for (program, derivation, _), c in zip(found, copied):
        assert ("transpose-copy-argument" in [s.rule for s in derivation.steps]) == c
        np.testing.assert_allclose(_result(program, [np.float32(7), data], (16, 16)), expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("program", [twomm, covariance])
def test_the_default_lowering_splits_nothing_off_where_no_product_is_blocked(program):
    """Sizes not bound: no blocks, the columns walked through a transposed copy (`transpose-copy`) as before."""
    steps = _steps(program, {})
    assert "private-accumulator" not in steps and "map-subterm-fission" not in steps and "transpose-copy" in steps


def test_the_default_lowering_of_covariance_means_covariance():
    data = np.random.default_rng(3).uniform(-1, 1, (41, 31)).astype(np.float32)
    lowered = lower(covariance, {"M": 31, "N": 41})
    got = _result(lowered, [np.float32(41), data], (31, 31))
    np.testing.assert_allclose(got, covariance_reference(np.float32(41), data.astype(np.float64)), rtol=1e-4,
                               atol=1e-6)
    np.testing.assert_allclose(got, _result(covariance, [np.float32(41), data], (31, 31)), rtol=1e-5, atol=1e-7)


def test_the_search_proposes_2mm_with_both_products_register_blocked():
    sizes = {"NI": 16, "NJ": 16, "NK": 5, "NL": 16}
    inputs = _twomm_inputs(np.random.default_rng(7), 16, 16, 5, 16)
    expected = _result(twomm, inputs, (16, 16))
    found = list(itertools.islice(macro_derivations(twomm, sizes), 3))
    assert found and all("register-blocked" in params for _, _, params in found)
    for program, derivation, _ in found:
        assert [s.rule for s in derivation.steps].count("private-accumulator") == 2
        assert derivation.replay(twomm) == program
        np.testing.assert_array_equal(_result(program, inputs, (16, 16)), expected)


def test_the_search_proposes_a_product_over_zipped_columns_register_blocked():
    """No map over `transpose(B)` alone: its columns are zipped with a row of `D` (`zipped_columns`)."""
    sizes = {"M": 8, "K": 3, "N": 16}
    inputs = _inputs("zipped", np.random.default_rng(8), 8, 3, 16)
    expected = _result(PROGRAMS["zipped"], inputs, (8, 16))
    found = list(itertools.islice(macro_derivations(PROGRAMS["zipped"], sizes), 3))
    assert found
    for program, derivation, _ in found:
        assert "private-accumulator" in [s.rule for s in derivation.steps]
        np.testing.assert_array_equal(_result(program, inputs, (8, 16)), expected)


@needs_device
@pytest.mark.parametrize("sizes", [{"NI": 29, "NJ": 31, "NK": 13, "NL": 63}, {"NI": 181, "NJ": 191, "NK": 211,
                                                                               "NL": 223}])
def test_blocked_2mm_agrees_with_numpy_on_the_device(sizes):
    inputs = _twomm_inputs(np.random.default_rng(1), *(sizes[k] for k in ("NI", "NJ", "NK", "NL")))
    got = lift.compile(twomm, sizes=sizes, lowering="default")(*inputs)
    np.testing.assert_allclose(got, twomm_reference(*inputs), rtol=1e-5, atol=1e-3)


@needs_device
@pytest.mark.parametrize("m, n", [(31, 41), (251, 1001)])
def test_blocked_covariance_agrees_with_numpy_on_the_device(m, n):
    data = np.random.default_rng(2).uniform(-1, 1, (n, m)).astype(np.float32)
    got = lift.compile(covariance, sizes={"M": m, "N": n}, lowering="default")(np.float32(n), data)
    np.testing.assert_allclose(got, covariance_reference(np.float32(n), data.astype(np.float64)), rtol=1e-4,
                               atol=1e-5)
