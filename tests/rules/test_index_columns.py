"""`transpose-copy-walked-rows` (lift.rules.transposition) and the strategy `index_columns` (lift.rules.index_columns):
a map walking the rows of a matrix it maps over walks the columns of a copy of its transposition; every rewrite means
what the program means (the interpreter, before and after, and numpy), on the device too (MD, oclgrind)."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import ArrayType, Float, Int, Map, Reduce, ReduceSeq, SizeVar, Transpose, Zip, fun, paper, userfun
from lift.ir.printer import python_source
from lift.rules import Rewrite, RewriteEngine, RuleNotApplicable
from lift.rules.default_lowering import lower
from lift.rules.index_columns import index_columns
from lift.rules.strategy import derive

from userfuns import add

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind  # noqa: E402

P, K = SizeVar("P"), SizeVar("K")
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
ENGINE = RewriteEngine()
RULE = "transpose-copy-walked-rows"


@userfun
def pull(acc: Float, i: Int, x: Float, xs: ArrayType(Float, P)) -> Float:
    """A step of a fold over neighbour indices: the gathered neighbour's difference to `x`, squared."""
    return acc + (xs[i] - x) * (xs[i] - x)


@userfun
def addi(a: Int, b: Int) -> Int:
    return a + b


PROGRAMS = {
    "gather": fun([ArrayType(Float, P), ArrayType(ArrayType(Int, K), P)], lambda xs, nbr: Map(
        lambda x, ns: ReduceSeq(lambda acc, i: pull(acc, i, x, xs), 0.0)(ns))(Zip(xs, nbr))),
    "int rows": fun([ArrayType(ArrayType(Int, K), P)], lambda A: Map(Reduce(addi, 0))(A)),
    "float rows": fun([ArrayType(ArrayType(Float, K), P)], lambda A: Map(Reduce(add, 0.0))(A)),
}


def _reference(name, inputs):
    if name == "gather":
        xs, nbr = inputs
        return ((xs[nbr] - xs[:, None]) ** 2).sum(axis=1)
    return inputs[0].sum(axis=1)


def _inputs(name, p, k, rng):
    if name == "gather":
        return [rng.uniform(-1, 1, p).astype(np.float32), rng.integers(0, p, (p, k)).astype(np.int32)]
    if name == "int rows":
        return [rng.integers(-50, 50, (p, k)).astype(np.int32)]
    return [rng.uniform(-1, 1, (p, k)).astype(np.float32)]


@SETTINGS
@given(st.sampled_from(sorted(PROGRAMS)), st.integers(1, 9), st.integers(1, 9), st.integers(0, 1 << 16))
def test_walked_rows_copied_transposed_mean_the_program(name, p, k, seed):
    program = PROGRAMS[name]
    inputs = _inputs(name, p, k, np.random.default_rng(seed))
    want = lift.interpret(program, *inputs)
    np.testing.assert_allclose(np.ravel(want), np.ravel(_reference(name, inputs)), rtol=1e-4, atol=1e-5)
    places = [r for r in ENGINE.rewrites(program) if r.rule == RULE]
    assert places
    for r in places:
        np.testing.assert_array_equal(lift.interpret(ENGINE.apply(program, r), *inputs), want)


def test_the_rows_are_read_as_columns_of_one_let_bound_copy():
    copied = ENGINE.apply(PROGRAMS["gather"], Rewrite.of(RULE, "body"))
    assert paper(copied) == ("λ xs, nbr. (λ t_0. map(λ x, ns. reduce-seq(λ acc, i. pull(acc, i, x, xs), 0.0)(ns))"
                             " ∘ zip(xs, transpose(t_0))) ∘ map(map(id)) ∘ transpose(nbr)")
    with pytest.raises(RuleNotApplicable):  # already columns: the transposition it walks is not copied again
        ENGINE.apply(copied, Rewrite.of(RULE, "body.f.body"))


def test_a_map_that_walks_no_row_is_left():
    """A map whose function reduces nothing, or over a transposition (`transpose-copy-argument`'s case)."""
    Ints = ArrayType(ArrayType(Int, K), P)
    for program in (fun([Ints], lambda A: Map(Map(lambda x: addi(x, x)))(A)),
                    fun([Ints], lambda A: Map(Reduce(addi, 0))(Transpose()(A)))):
        with pytest.raises(RuleNotApplicable, match="walks no row"):
            ENGINE.apply(program, Rewrite.of(RULE, "body"))


def test_index_columns_copies_lists_of_indices_only():
    """MD's neighbour indices are copied transposed; a matrix of floats keeps its layout (the transposition rules of
    the other programs choose it)."""
    steps = [s.rule for s in derive(index_columns, PROGRAMS["int rows"], {"P": 8, "K": 4}).steps]
    assert steps == [RULE]
    float_rows = PROGRAMS["float rows"]
    assert [s.rule for s in derive(index_columns, float_rows, {"P": 8, "K": 4}).steps] == []


def _md_columns(examples, sizes):
    program = examples["md"].kernels["md"]
    return lower(derive(index_columns, program, sizes).replay(program), sizes)


@needs_device
@pytest.mark.parametrize("p", [512, 509])
def test_md_walking_its_neighbour_list_as_columns_matches_numpy(examples, p):
    from benchmarks.contender_cases import md as md_numpy
    sizes = {"P": p, "K": 16}
    lowered = _md_columns(examples, sizes)
    assert "map(map(id)) ∘ transpose(neighbours)" in paper(lowered).replace("-global", "").replace("[1]", "")
    inputs = examples["md"].inputs("md", sizes, seed=3)
    got = lift.compile(lowered, sizes=sizes)(*inputs)
    np.testing.assert_allclose(np.asarray(got).reshape(p, 4), md_numpy(*inputs), rtol=1e-4, atol=1e-4)


@needs_oclgrind
def test_md_walking_its_neighbour_list_as_columns_is_clean_under_oclgrind(examples, tmp_path):
    sizes = {"P": 40, "K": 6}
    path = tmp_path / "md_columns.py"
    path.write_text(f"from lift import *\nfrom lift.ir.patterns import *\n{examples['md'].path.read_text()}\n"
                    f"md_columns = {python_source(_md_columns(examples, sizes))}\n")
    inputs = examples["md"].inputs("md", sizes, seed=4)
    (got,) = run_under_oclgrind(path, "md_columns", sizes, inputs, tmp_path)
    np.testing.assert_allclose(np.ravel(got), np.ravel(lift.interpret(examples["md"].kernels["md"], *inputs)),
                               rtol=1e-4, atol=1e-4)
