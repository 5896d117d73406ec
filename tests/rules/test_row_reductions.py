"""The default lowering of maps of reductions over rows (row sums, row maxima, gemv, a batched dot): a work-item
per row, reducing it in float4 lanes (its input padded to a multiple of 4 where 4 does not divide the row), the
rows not padded to whole work-groups; compared with numpy at sizes that do and do not divide."""

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Zip, fun, interpret, paper
from lift.rules.default_lowering import lower

from opencl_device import needs_device
from userfuns import add, maxf, mult

RNG = np.random.default_rng(17)
M, N = SizeVar("M"), SizeVar("N")


MATRIX = ArrayType(ArrayType(Float, N), M)
batched_dot = fun([MATRIX, MATRIX], lambda A, B: Map(
    lambda ab: (Reduce(add, 0.0) @ Map(mult))(Zip(Get(ab, 0), Get(ab, 1))))(Zip(A, B)))
row_sums = fun([MATRIX], lambda A: Map(lambda row: Reduce(add, 0.0)(row))(A))
row_maxima = fun([MATRIX], lambda A: Map(lambda row: Reduce(maxf, float("-inf"))(row))(A))
gemv = fun([MATRIX, ArrayType(Float, N)], lambda A, x: Map(lambda row: (Reduce(add, 0.0) @ Map(mult))(Zip(row, x)))(A))

PROGRAMS = {
    "batched_dot": (batched_dot, 2, lambda A, B: np.einsum("ij,ij->i", A.astype(np.float64), B)),
    "row_sums": (row_sums, 1, lambda A: A.astype(np.float64).sum(axis=1)),
    "row_maxima": (row_maxima, 1, lambda A: A.max(axis=1)),
    "gemv": (gemv, 1, lambda A, x: A.astype(np.float64) @ x),
}
SIZES = [(37, 53), (4099, 31), (64, 1024), (5, 1023), (37, 3)]


def _inputs(name, m, n):
    program, matrices, _ = PROGRAMS[name]
    arrays = [RNG.uniform(-1, 1, (m, n)).astype(np.float32) for _ in range(matrices)]
    return arrays + ([RNG.uniform(-1, 1, n).astype(np.float32)] if name == "gemv" else [])


def test_a_batched_dot_over_rows_4_does_not_divide_reduces_padded_float4_lanes_unpadded_rows():
    """The shape `lift explore` finds for a batched dot over 4099 rows of 1023: no `pad-to-multiple-64` of the
    rows (which bound-checked every element read), each row's dot product in float4 lanes padded to 1024."""
    shown = paper(lower(batched_dot, {"M": 4099, "N": 1023}))
    assert shown == ("λ A, B. map-global(λ ab. reduce-seq(add, 0.0) ∘ asScalar ∘ reduce-seq(λ acc_0, x_1. "
                     "vectorize-4(add_mult)(acc_0, get-0(x_1), get-1(x_1)), vectorize-4(0.0)) ∘ zip(asVector-4 ∘ "
                     "pad-to-multiple-4(0.0) ∘ get-0(ab), asVector-4 ∘ pad-to-multiple-4(0.0) ∘ get-1(ab))) "
                     "∘ zip(A, B)")


def test_row_sums_reduce_float4s_of_their_rows_and_short_rows_stay_scalars_padded_to_work_groups():
    """4099 rows of 1023: each row's float4s padded with zeros to 1024, the rows in blocks of 4 over the rows padded
    with copies of the last to 4100 (`lift.rules.block_choice.row_padding`), not to whole work-groups."""
    assert paper(lower(row_sums, {"M": 4099, "N": 1023})) == (
        "take-(M) ∘ join ∘ map-global(map-seq-unroll(reduce-seq(add, 0.0) ∘ asScalar) ∘ transpose ∘ "
        "map-seq-unroll(map-seq-unroll(id)) ∘ toPrivate(reduce-seq(λ acc_8, t_9. map-seq-unroll(λ e_10. "
        "vectorize-4(add)(get-0(e_10), vectorize-4(id) ∘ get-1(e_10))) ∘ zip(acc_8, t_9), map-seq-unroll(id)(0.0))) "
        "∘ transpose ∘ map(asVector-4 ∘ pad-to-multiple-4(0.0))) ∘ split-4 ∘ pad-to-multiple-4(clamp)")
    assert paper(lower(row_sums, {"M": 37, "N": 3})) == \
        "take-(M) ∘ map-global(reduce-seq(add, 0.0)) ∘ pad-to-multiple-64(0.0)"
    assert "pad-to-multiple-4(" not in paper(lower(row_sums, {"M": 64, "N": 1024}))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("m, n", [(37, 53), (9, 18)])
def test_the_lowered_rows_mean_what_the_program_means(name, m, n):
    program, _, reference = PROGRAMS[name]
    inputs = _inputs(name, m, n)
    got = np.asarray(interpret(lower(program, {"M": m, "N": n}), *inputs))
    np.testing.assert_allclose(got.reshape(m), reference(*inputs), rtol=1e-5, atol=1e-5)  # a reduction's [1] per row


@needs_device
@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("m, n", SIZES)
def test_maps_of_row_reductions_agree_with_numpy(name, m, n):
    program, _, reference = PROGRAMS[name]
    inputs = _inputs(name, m, n)
    got = lift.compile(program, sizes={"M": m, "N": n}, lowering="default")(*inputs)
    np.testing.assert_allclose(np.asarray(got).reshape(m), reference(*inputs), rtol=1e-4, atol=1e-4)
