"""The paper's derivations, replayed: Figure 2, Figure 8 line by line, Figure 9 (a), (b), (c), gemv, a two-kernel sum.

Each starts from a high-level program of `examples/` (Figure 5) and ends in the expected low-level
expression, compared up to the names of lambda parameters, and evaluated against numpy. The examples
write Figure 9's fused operator as one user function, `abs_and_add`; derivations produce the fusion
of rule 3(f), `λ acc, x. add(acc, absf(x))`, so the expected expressions are the examples' with that
lambda in its place.
"""

import re

import numpy as np
import pytest

from lift import (Id, Iterate, Join, Lambda, MapGlb, MapLcl, MapSeq, MapWrg, Param, ReduceSeq, ReorderStride, Split,
                  ToGlobal, ToLocal, Vectorize, Zip, fun, interpret, paper)
from lift.rules import alpha_equal
from lift.rules import paper_derivations as pd
from lift.rules.location import map_children

RNG = np.random.default_rng(3)

# Figure 8, lines (1)-(8), as printed in the paper (with `x` for the input vector).
FIGURE_8 = [
    "reduce(+,0) ∘ map(abs, x)",
    "reduce(+,0) ∘ join ∘ map(part-red(+,0)) ∘ split^n ∘ map(abs, x)",
    "reduce(+,0) ∘ join ∘ map(part-red(+,0)) ∘ split^n ∘ join ∘ map(map(abs)) ∘ split^n(x)",
    "reduce(+,0) ∘ join ∘ map(part-red(+,0)) ∘ map(map(abs)) ∘ split^n(x)",
    "reduce(+,0) ∘ join ∘ map(part-red(+,0) ∘ map(abs)) ∘ split^n(x)",
    "reduce(+,0) ∘ join ∘ map(part-red(+,0) ∘ map-seq(abs)) ∘ split^n(x)",
    "reduce(+,0) ∘ join ∘ map(reduce-seq(+,0) ∘ map-seq(abs)) ∘ split^n(x)",
    "reduce(+,0) ∘ join ∘ map(reduce-seq(λ acc,x: acc+abs(x), 0)) ∘ split^n(x)",
]


def _in_lift_notation(line: str) -> str:
    """A Figure 8 line as lift prints it: its user functions and constants, n = 128, part-red's m, no `(x)`."""
    for paper_text, lift_text in [("λ acc,x: acc+abs(x)", "λ acc, x. add(acc, absf(x))"), ("(+,0)", "(add, 0.0)"),
                                  ("part-red(add, 0.0)", "part-red(add, 0.0, 1)"), ("abs, x)", "abs)"),
                                  ("(abs)", "(absf)"), (", 0))", ", 0.0))"), ("split^n(x)", "split^n"),
                                  ("^n", "-128")]:
        line = line.replace(paper_text, lift_text)
    return line


@pytest.fixture(scope="module")
def asum(examples):
    return examples["asum"]


def _fused(ns, width=None):
    """Figure 9's `absAndPlus` as rule 3(f) writes it: `λ acc, x. add(acc, absf(x))`, on `width` lanes."""
    add, absf = ns["add"], ns["absf"]
    if width:
        add, absf = Vectorize(width, add), Vectorize(width, absf)
    acc, x = Param("acc"), Param("x")
    return Lambda((acc, x), add(acc, absf(x)))


def _replace(node, old, new):
    """`node` with every occurrence of the function `old` replaced by `new`."""
    return new if node == old else map_children(node, lambda child: _replace(child, old, new))


def _check_asum(program, n):
    x = RNG.uniform(-1, 1, n).astype(np.float32)
    np.testing.assert_allclose(interpret(program, x)[0], np.abs(x).sum(dtype=np.float64), rtol=1e-4)


def test_figure_2(examples):
    scal = examples["scal"].kernels
    derived = pd.FIGURE_2.replay(scal["scal"])
    assert alpha_equal(derived, scal["scal_vectorised"]), paper(derived)
    x = RNG.uniform(-1, 1, 4096).astype(np.float32)
    np.testing.assert_array_equal(interpret(derived, np.float32(3), x), interpret(scal["scal"], np.float32(3), x))


def test_figure_8_line_by_line(asum):
    trace = pd.FIGURE_8.trace(asum.kernels["asum"])
    derived = [re.sub(r"_\d+", "", paper(trace[i])) for i in pd.FIGURE_8_LINES]
    assert derived == [_in_lift_notation(line) for line in FIGURE_8]
    _check_asum(trace[-1], 1 << 12)


def test_figure_8_printed_as_in_the_paper(asum):
    text = pd.FIGURE_8.format_figure8(asum.kernels["asum"])
    lines = text.splitlines()
    assert len(lines) == len(pd.FIGURE_8.steps) + 1
    assert lines[0].strip() == "reduce(add, 0.0) ∘ map(absf)   (1)"
    assert lines[1].lstrip().startswith("=[3(d) partial-reduction(chunk=128)] reduce(add, 0.0) ∘ part-red(add, 0.0, ")
    assert lines[-1].lstrip().startswith("=[3(f) reduce-seq-map-seq-fusion] reduce(add, 0.0) ∘ join ∘ map(")
    assert len({line.index(" reduce(") for line in lines}) == 1


@pytest.mark.parametrize("derivation, kernel, width", [
    (pd.FIGURE_9A, "asum_nvidia", None), (pd.FIGURE_9B, "asum_amd", 4), (pd.FIGURE_9C, "asum_intel", 4)])
def test_figure_9(asum, derivation, kernel, width):
    ns = asum.namespace
    old = Vectorize(width, ns["abs_and_add"]) if width else ns["abs_and_add"]
    expected = _replace(asum.kernels[kernel], old, _fused(ns, width))
    derived = derivation.replay(asum.kernels["asum"])
    assert alpha_equal(derived, expected), paper(derived)
    assert not alpha_equal(derived, asum.kernels[kernel])
    _check_asum(derived, 3 << 18)


def test_figure_9a_transcribed(asum):
    """Figure 9(a) as printed in the paper, with `absAndPlus` as the fused lambda."""
    ns = asum.namespace
    plus = ns["add"]
    expected = fun([asum.kernels["asum"].params[0].t], lambda x: (
        ReduceSeq(plus, 0.0) @ Join() @ MapWrg(
            Join() @ ToGlobal(MapLcl(MapSeq(Id()))) @ Split(1)
            @ Iterate(7, Join() @ MapLcl(ReduceSeq(plus, 0.0)) @ Split(2))
            @ Join() @ ToLocal(MapLcl(ReduceSeq(_fused(ns), 0.0))) @ Split(2048) @ ReorderStride(128)
        ) @ Split(262144))(x))
    assert alpha_equal(pd.FIGURE_9A.replay(asum.kernels["asum"]), expected)


def test_two_kernel_sum(asum):
    ns = asum.namespace
    expected = fun([asum.kernels["asum"].params[0].t], lambda x: (
        ReduceSeq(ns["add"], 0.0) @ Join()
        @ MapWrg(Join() @ MapLcl(ReduceSeq(_fused(ns), 0.0)) @ Split(256)) @ Split(1024))(x))
    derived = pd.TWO_KERNEL_SUM.replay(asum.kernels["asum"])
    assert alpha_equal(derived, expected), paper(derived)
    _check_asum(derived, 1 << 14)


def test_gemv_workgroup_per_row(examples):
    gemv = examples["gemv"]
    add, mult = gemv.namespace["add"], gemv.namespace["mult"]
    source = gemv.kernels["gemv"]
    acc, xy = Param("acc"), Param("xy")
    dot_step = Lambda((acc, xy), add(acc, mult(xy)))

    def row(x, a):
        return lambda r: (ToGlobal(MapLcl(lambda v: mult(a, v)))
                          @ Iterate(6, Join() @ MapLcl(ReduceSeq(add, 0.0)) @ Split(2))
                          @ Join() @ ToLocal(MapLcl(ReduceSeq(dot_step, 0.0)))
                          @ Split(source.params[1].t.length / 64) @ ReorderStride(64))(Zip(x, r))

    expected = fun([p.t for p in source.params], lambda A, x, y, a, b: MapGlb(add)(Zip(
        Join()(MapWrg(row(x, a))(A)), MapGlb(lambda v: mult(b, v))(y))))
    derived = pd.GEMV_WORKGROUP_PER_ROW.replay(source)
    assert alpha_equal(derived, expected), paper(derived)
    m, n = 6, 1024
    a, x, y = RNG.uniform(-1, 1, (m, n)).astype(np.float32), RNG.uniform(-1, 1, n).astype(np.float32), \
        RNG.uniform(-1, 1, m).astype(np.float32)
    got = interpret(derived, a, x, y, np.float32(1.5), np.float32(-0.5))
    np.testing.assert_allclose(got, 1.5 * a @ x - 0.5 * y, rtol=1e-4, atol=1e-4)


def test_derivations_survive_json(asum):
    for derivation in (pd.FIGURE_2, pd.FIGURE_8, pd.FIGURE_9A, pd.FIGURE_9B, pd.FIGURE_9C, pd.TWO_KERNEL_SUM,
                       pd.GEMV_WORKGROUP_PER_ROW):
        assert type(derivation).from_json(derivation.to_json()) == derivation
