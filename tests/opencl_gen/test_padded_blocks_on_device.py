"""Matrix products and column folds at sizes no block divides (issue 18), on the device: the register blockings
padded to multiples of their blocks (`lift.rules.macro_rules.register_blocked(padded=True)`) and the padded
blocked column folds (`lift.rules.column_sums.blocked_columns`) agree with numpy at prime sizes, the default
lowering blocks them, and oclgrind finds no access out of bounds in one."""

import numpy as np
import pytest

import lift
from lift import paper
from lift.rules import RewriteEngine
from lift.rules.default_lowering import lower
from lift.rules.macro_rules import register_blocked
from lift.rules.strategy import Focus

from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind

PRIMES = {"M": 257, "K": 67, "N": 251}


def _matrices(m, k, n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)


@needs_device
@pytest.mark.parametrize("h, w, vector, dims, tiles", [
    (4, 16, None, (1, 0), None), (4, 16, 4, (1, 0), None), (2, 32, 8, (0, 1), None), (8, 8, None, (1, 0), None),
    (2, 8, 4, (1, 0), (4, 4)), (1, 64, 16, (1, 0), None)])
def test_padded_register_blockings_agree_with_numpy_at_prime_sizes(examples, h, w, vector, dims, tiles):
    matmul = examples["matmul"].kernels["matmul"]
    focus = register_blocked(h, w, vector, dims, tiles, padded=True)(Focus(matmul, RewriteEngine(sizes=PRIMES)))
    assert focus is not None
    lowered = paper(focus.program)
    assert "pad-to-multiple" in lowered and "take-(N)" in lowered and "toPrivate" in lowered
    a, b = _matrices(PRIMES["M"], PRIMES["K"], PRIMES["N"])
    got = lift.compile(focus.program, sizes=PRIMES)(a, b)
    np.testing.assert_allclose(np.asarray(got).reshape(a.shape[0], b.shape[1]), a @ b, rtol=1e-4, atol=1e-4)


@needs_device
def test_the_default_lowering_register_blocks_a_matrix_product_at_prime_sizes(examples):
    matmul = examples["matmul"].kernels["matmul"]
    compiled = lift.compile(matmul, sizes=PRIMES)
    lowered = paper(compiled.lowered(PRIMES))
    assert "map-global(map-seq(id)) ∘ map(pad-to-multiple-16(clamp))(B)" in lowered, "B padded once, into a copy"
    assert "split-4 ∘ pad-to-multiple-4(clamp)(A)" in lowered and "toPrivate" in lowered
    a, b = _matrices(PRIMES["M"], PRIMES["K"], PRIMES["N"], seed=1)
    np.testing.assert_allclose(np.asarray(compiled(a, b)).reshape(a.shape[0], b.shape[1]), a @ b, rtol=1e-4,
                               atol=1e-4)


@needs_device
@pytest.mark.parametrize("stem", ("atax", "bicg"))
def test_atax_and_bicg_fold_padded_column_blocks_at_a_prime_column_count(examples, stem):
    pf = examples[stem]
    sizes = {"M": 1001, "N": 997}
    lowered = lower(pf.kernels[stem], sizes, 8)
    shown = paper(lowered)
    assert "take-(N) ∘ join ∘ map-global" in shown and "map(split-64 ∘ pad-to-multiple-64(clamp))(A)" in shown
    assert "toPrivate(reduce-seq" in shown, "the 64 accumulators private, their copy out the only guarded write"
    inputs = pf.inputs(stem, sizes, seed=0)
    got = lift.compile(lowered, sizes=sizes)(*inputs)
    if stem == "atax":
        a, x = inputs
        got, want = (got,), (a.T @ (a @ x),)
    else:
        a, r, p = inputs
        want = (a.T @ r, a @ p)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g).ravel(), w, rtol=1e-4, atol=1e-4 * np.abs(w).max())


@needs_oclgrind
def test_a_padded_register_blocking_is_in_bounds_under_oclgrind(examples, tmp_path):
    sizes = {"M": 37, "K": 5, "N": 131}
    assert "pad-to-multiple-16(clamp)" in paper(lower(examples["matmul"].kernels["matmul"], sizes))
    a, b = _matrices(37, 5, 131)
    (got,) = run_under_oclgrind(examples["matmul"].path, "matmul", sizes, [a, b], tmp_path)
    np.testing.assert_allclose(got.reshape(37, 131), a @ b, rtol=1e-4, atol=1e-4)
