"""The macro rules of matrix multiply (`lift.rules.tiling`, `interchange`, `register_blocking`, `macro_rules`):
each rule against the interpreter on random sizes and data (Hypothesis), and every composition the macro space
proposes against numpy."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lift import (ArrayType, AsScalar, AsVector, Float, Get, Join, Literal, Map, MapGlb, MapSeq, Reduce, ReduceSeq, SizeVar,
                  Split, Transpose, Vectorize, Zip, fun, infer, interpret, paper)
from lift.ir.nodes import FunCall, Lambda, Param
from lift.explore.macro_space import MAX_ACCUMULATORS, macro_derivations, parameters
from lift.rules import RewriteEngine
from lift.rules.macro_rules import block_columns, block_rows, global_2d, register_blocked, vectorised_block
from lift.rules.registry import rule_named
from lift.rules.rule import RuleNotApplicable
from lift.rules.strategy import StrategyFailed, derive

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from blas import add, mult  # noqa: E402
from matmul import matmul  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
ENGINE = RewriteEngine()


def _rand(rng, *shape):
    return rng.integers(-4, 5, shape).astype(np.float32) / 2


def _rewritten(program, rule, at=None, **params):
    """`program` with `rule` applied at its location `at` (or at the only place it applies), type-checked."""
    places = [rw for rw in ENGINE.rewrites(program) if rw.rule == rule and (at is None or rw.location == at)
              and all(dict(rw.params).get(k) == v for k, v in params.items())]
    assert places, f"{rule} does not apply to {paper(program)}"
    new = ENGINE.apply(program, places[0])
    assert infer(new).type == infer(program).type
    return new


@SETTINGS
@given(st.integers(1, 5), st.sampled_from([2, 3, 4]), st.integers(1, 3), st.integers(0, 1 << 16))
def test_split_transpose(k, n, chunks, seed):
    rng = np.random.default_rng(seed)
    program = fun([ArrayType(ArrayType(Float, n * chunks), k)], lambda b: Split(n)(Transpose()(b)))
    x = _rand(rng, k, n * chunks)
    np.testing.assert_array_equal(interpret(_rewritten(program, "split-transpose"), x), interpret(program, x))


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(0, 1 << 16))
def test_map_map_interchange_of_matrix_multiply(m, k, n, seed):
    rng = np.random.default_rng(seed)
    a, b = _rand(rng, m, k), _rand(rng, k, n)
    new = _rewritten(matmul, "map-map-interchange")
    assert paper(new).startswith("λ A, B. transpose ∘ map(λ b.")
    np.testing.assert_array_equal(interpret(new, a, b), interpret(matmul, a, b))


def test_map_map_interchange_needs_an_independent_inner_array():
    program = fun([ArrayType(ArrayType(Float, 3), 2)], lambda x: Map(lambda r: Map(lambda v: add(v, v))(r))(x))
    with pytest.raises(RuleNotApplicable, match="depends on the outer element"):
        rule_named("map-map-interchange").check(program.body, None, {})


folds = {
    "zip": lambda m, k: fun([ArrayType(ArrayType(Float, k), m), ArrayType(Float, k)], lambda R, y: Map(
        lambda r: ReduceSeq(lambda acc, t: add(acc, mult(Get(t, 0), Get(t, 1))), 0.0)(Zip(y, r)))(R)),
    "row": lambda m, k: fun([ArrayType(ArrayType(Float, k), m), ArrayType(Float, k)], lambda R, y: Map(
        lambda r: ReduceSeq(lambda acc, v: add(acc, mult(v, v)), 1.0)(r))(R)),
    "point-free": lambda m, k: fun([ArrayType(ArrayType(Float, k), m), ArrayType(Float, k)], lambda R, y: Map(
        ReduceSeq(lambda acc, v: add(acc, mult(v, v)), 1.0))(R)),
}


@SETTINGS
@given(st.sampled_from(sorted(folds)), st.integers(1, 4), st.integers(1, 5), st.integers(0, 1 << 16))
def test_map_reduce_seq_interchange(kind, m, k, seed):
    rng = np.random.default_rng(seed)
    program = folds[kind](m, k)
    R, y = _rand(rng, m, k), _rand(rng, k)
    new = _rewritten(program, "map-reduce-seq-interchange")
    np.testing.assert_array_equal(interpret(new, R, y), interpret(program, R, y))


def test_map_reduce_seq_interchange_of_array_accumulators():
    """Applied after `map-reduce-interchange`, the accumulators form a block (`block_rows`)."""
    sizes = {"M": 4, "K": 3, "N": 6}
    rng = np.random.default_rng(3)
    a, b = _rand(rng, 4, 3), _rand(rng, 3, 6)
    blocked = derive(block_columns(3) >> block_rows(2), matmul, sizes)
    assert [s.rule for s in blocked.steps][-2:] == ["map-fission", "map-reduce-seq-interchange"]
    np.testing.assert_array_equal(interpret(blocked.replay(matmul), a, b), interpret(matmul, a, b))


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 4), st.integers(0, 1 << 16))
def test_private_accumulator(m, n, k, seed):
    """The column sums of each matrix of a stack, one matrix per work-item, accumulated in private memory."""
    rng = np.random.default_rng(seed)
    program = fun([ArrayType(ArrayType(ArrayType(Float, k), n), m)], lambda X: MapGlb(
        lambda rows: ReduceSeq(lambda acc, row: MapSeq(lambda e: add(Get(e, 0), Get(e, 1)))(Zip(acc, row)),
                               Literal(0.0, ArrayType(Float, k)))(rows))(X))
    x = _rand(rng, m, n, k)
    new = _rewritten(program, "private-accumulator")
    assert "toPrivate(reduce-seq" in paper(new)
    np.testing.assert_array_equal(interpret(new, x), interpret(program, x))


def test_private_accumulator_copies_the_initial_value_in():
    program = fun([ArrayType(ArrayType(ArrayType(Float, 3), 2), 4)], lambda X: MapGlb(
        lambda rows: ReduceSeq(lambda acc, row: MapSeq(lambda e: add(Get(e, 0), Get(e, 1)))(Zip(acc, row)),
                               Literal(1.5, ArrayType(Float, 3)))(rows))(X))
    new = _rewritten(program, "private-accumulator")
    assert "toPrivate(reduce-seq(" in paper(new) and "map-seq(id)(1.5)" in paper(new)
    x = _rand(np.random.default_rng(1), 4, 2, 3)
    np.testing.assert_array_equal(interpret(new, x), x.sum(axis=1, keepdims=True) + 1.5)


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 1 << 16))
def test_map_seq_unroll(m, k, seed):
    program = fun([ArrayType(ArrayType(Float, k), m)], lambda x: MapGlb(MapSeq(lambda v: mult(v, v)))(x))
    x = _rand(np.random.default_rng(seed), m, k)
    new = _rewritten(program, "map-seq-unroll")
    assert "map-global(map-seq-unroll(" in paper(new)
    np.testing.assert_array_equal(interpret(new, x), interpret(program, x))
    assert not [rw for rw in ENGINE.rewrites(new) if rw.rule == "map-seq-unroll"]


def test_map_seq_unroll_needs_a_constant_length():
    program = fun([ArrayType(ArrayType(Float, SizeVar("K")), 4)], lambda x: MapGlb(MapSeq(lambda v: mult(v, v)))(x))
    assert not [rw for rw in ENGINE.rewrites(program) if rw.rule == "map-seq-unroll"]


def test_private_accumulator_only_in_a_work_item():
    program = fun([ArrayType(ArrayType(Float, 3), 4)], lambda x: ReduceSeq(
        lambda acc, row: MapSeq(lambda e: add(Get(e, 0), Get(e, 1)))(Zip(acc, row)),
        Literal(0.0, ArrayType(Float, 3)))(x))
    assert not [rw for rw in ENGINE.rewrites(program) if rw.rule == "private-accumulator"]


@SETTINGS
@given(st.integers(1, 3), st.sampled_from([1, 2, 3]), st.sampled_from([2, 4, 8]), st.sampled_from([1, 2]),
       st.integers(1, 3), st.integers(1, 3), st.integers(0, 1 << 16))
def test_vector_accumulator_of_register_blocks(row_blocks, h, lanes, vectors, col_blocks, k, seed):
    """Matrix multiply's vectorised register blocks (`vectorised_block`) keep their accumulators as vectors: the
    fold's accumulator type becomes one of vectors, and the result is the interpreter's, at every block shape."""
    w = lanes * vectors
    sizes = {"M": h * row_blocks, "K": k, "N": w * col_blocks}
    rng = np.random.default_rng(seed)
    a, b = _rand(rng, sizes["M"], k), _rand(rng, k, sizes["N"])
    blocks = block_columns(w) >> block_rows(h) if h > 1 else block_columns(w)
    vectorised = derive(blocks >> vectorised_block(lanes), matmul, sizes).replay(matmul)
    new = _rewritten(vectorised, "vector-accumulator")
    inits = [str(s.f.init.t) for s in infer(new).expr.subterms() if isinstance(s, FunCall) and isinstance(s.f, ReduceSeq)]
    assert inits and all(f"Float{lanes}" in t for t in inits), inits
    np.testing.assert_array_equal(interpret(new, a, b), interpret(matmul, a, b))


def _row_fold(body, width=8, rows=3):
    return fun([ArrayType(ArrayType(Float, width), rows)],
               lambda X: ReduceSeq(body, Literal(0.5, ArrayType(Float, width)))(X))


vadd = Vectorize(4, add)


def test_vector_accumulator_of_one_row():
    """A fold of rows into one row: the accumulator `[float]8` becomes `[float4]2`, its result scalarised once."""
    program = _row_fold(lambda acc, x: AsScalar()(Map(lambda e: vadd(Get(e, 0), Get(e, 1)))(
        Zip(AsVector(4)(acc), AsVector(4)(x)))))
    new = _rewritten(program, "vector-accumulator")
    assert paper(new).startswith("asScalar ∘ reduce-seq(λ acc, x. map(") and "zip(acc, asVector-4(x)), asVector-4(0.5))" in paper(new)
    x = _rand(np.random.default_rng(2), 3, 8)
    np.testing.assert_array_equal(interpret(new, x), interpret(program, x))
    np.testing.assert_array_equal(interpret(new, x)[0], x.sum(axis=0) + 0.5)


@pytest.mark.parametrize("body, why", [
    (lambda acc, x: Map(lambda e: add(Get(e, 0), Get(e, 1)))(Zip(acc, x)), "reads no vectors"),
    (lambda acc, x: AsScalar()(Map(lambda e: vadd(Get(e, 0), Get(e, 1)))(
        Zip(AsVector(4)(Map(lambda e: add(Get(e, 0), Get(e, 1)))(Zip(acc, x))), AsVector(4)(x)))),
     "zips a row of the accumulator with its scalars"),
    (lambda acc, x: AsScalar()(Map(lambda e: vadd(Get(e, 0), Get(e, 1)))(
        Zip(AsVector(4)(acc), AsVector(4)(Join()(Split(2)(acc)))))), "other than as 4-lane vectors"),
    (lambda acc, x: Map(lambda e: add(Get(e, 0), Get(e, 1)))(Zip(x, AsScalar()(Map(
        lambda e: vadd(Get(e, 0), Get(e, 1)))(Zip(AsVector(4)(acc), AsVector(4)(x)))))), "not asScalar"),
])
def test_vector_accumulator_needs_rows_read_and_written_as_vectors(body, why):
    program = infer(_row_fold(body)).expr
    with pytest.raises(RuleNotApplicable, match=why):
        rule_named("vector-accumulator").check(program.body, None, {})


def test_vector_accumulator_refuses_a_tuple_of_its_rows_read_whole():
    """`e` holds a row of the accumulator: bound whole by a let, it would hold vectors where `q` is read as scalars."""
    q = Param("q")
    program = fun([ArrayType(ArrayType(ArrayType(Float, 8), 2), 3)], lambda X: ReduceSeq(
        lambda acc, x: Map(lambda e: AsScalar()(Map(lambda u: vadd(Get(u, 0), Get(u, 1)))(
            Zip(FunCall(Lambda((q,), AsVector(4)(Get(q, 0))), (e,)), AsVector(4)(Get(e, 1))))))(Zip(acc, x)),
        Literal(0.0, ArrayType(ArrayType(Float, 8), 2)))(X))
    with pytest.raises(RuleNotApplicable, match="other than as 4-lane vectors"):
        rule_named("vector-accumulator").check(infer(program).expr.body, None, {})


def test_parameters_are_constrained():
    ps = parameters()
    assert len(ps) == len(set(ps)) and all(h * w <= MAX_ACCUMULATORS for h, w, _, _, _ in ps)
    assert all(v is None or (w % v == 0 and v < w) for _, w, v, _, _ in ps)


def test_packed_versions_follow_each_choice_on_a_cpu_and_come_last_on_a_gpu():
    cpu, gpu = parameters(16), parameters(1)
    assert [p[4] for p in cpu[:4]] == [False, True, False, True] and cpu[1][:4] == cpu[0][:4]
    packed = [p[4] for p in gpu]
    assert not any(packed[:len(gpu) // 2]) and all(packed[len(gpu) // 2:])


@SETTINGS
@given(st.integers(1, 3), st.sampled_from([1, 2, 3]), st.sampled_from([1, 2, 4]), st.integers(1, 3),
       st.integers(1, 4), st.sampled_from([None, (1, 0)]), st.integers(0, 1 << 16))
def test_pack_copy(row_blocks, h, w, col_blocks, k, dims, seed):
    """The blocks of columns of a blocked product copied once, contiguous (`pack-copy`): the result is the
    interpreter's at every block shape, lowered (`dims`) or not; the copy is let-bound outside the map over rows."""
    sizes = {"M": h * row_blocks, "K": k, "N": w * col_blocks}
    rng = np.random.default_rng(seed)
    a, b = _rand(rng, sizes["M"], k), _rand(rng, k, sizes["N"])
    blocks = block_columns(w) >> block_rows(h) if h > 1 else block_columns(w)
    if dims:
        blocks = blocks >> global_2d(*dims)
    blocked = derive(blocks, matmul, sizes).replay(matmul)
    new = _rewritten(blocked, "pack-copy")
    assert f"map(map(map(id))) ∘ transpose ∘ map(split-{w})(B)" in paper(new)
    np.testing.assert_array_equal(interpret(new, a, b), interpret(matmul, a, b))


def test_pack_copy_needs_blocks_of_a_matrix_not_computed_in_the_call():
    """Blocks of columns of a row of the map's own argument are walked once, not per element: nothing to pack."""
    program = fun([ArrayType(ArrayType(ArrayType(Float, 4), 3), 2)], lambda X: Map(
        lambda x: Map(lambda c: Reduce(add, 0.0)(Join()(c)))(Transpose()(Map(Split(2))(x))))(X))
    with pytest.raises(RuleNotApplicable, match="no blocks of columns"):
        rule_named("pack-copy").check(infer(program).expr.body, None, {})


def test_register_blocked_packed_means_matrix_multiply_at_odd_sizes():
    sizes = {"M": 15, "K": 5, "N": 15}
    rng = np.random.default_rng(4)
    a, b = _rand(rng, 15, 5), _rand(rng, 5, 15)
    derivation = derive(register_blocked(2, 4, 2, padded=True, packed=True), matmul, sizes)
    program = derivation.replay(matmul)
    assert "map-global(map-global[1](map-seq-unroll(id))) ∘ transpose ∘ map(split-4 ∘ pad-to-multiple-4(clamp))(B)" \
        in paper(program)
    rules = [s.rule for s in derivation.steps]
    assert "pack-copy" in rules and "pad-copy" not in rules  # one copy of B, packed from the padded view
    np.testing.assert_array_equal(interpret(program, a, b)[..., 0], a @ b)


@pytest.mark.parametrize("sizes", [{"M": 8, "K": 4, "N": 16}, {"M": 6, "K": 5, "N": 12}])
def test_every_macro_derivation_means_matrix_multiply(sizes):
    rng = np.random.default_rng(5)
    a, b = _rand(rng, sizes["M"], sizes["K"]), _rand(rng, sizes["K"], sizes["N"])
    found = list(macro_derivations(matmul, sizes))
    assert found and all("register-blocked" in p for _, _, p in found)
    for program, derivation, _ in found:
        np.testing.assert_array_equal(interpret(derivation.replay(matmul), a, b)[..., 0], a @ b)
        assert derivation.replay(matmul) == program


def test_macro_rules_find_no_place_in_other_programs():
    dot = fun([ArrayType(Float, 8), ArrayType(Float, 8)], lambda x, y: (Reduce(add, 0.0) @ Map(mult))(Zip(x, y)))
    assert not list(macro_derivations(dot, {}))
    with pytest.raises(StrategyFailed):
        derive(register_blocked(2, 4), dot)
