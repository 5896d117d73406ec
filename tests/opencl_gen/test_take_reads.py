"""An array the program writes through `take-n` and reads back (axpydot's `z = w - a*v`, computed padded to whole
work-groups of float4s and used by the dot product) reads as the memory it was written to: below `n`, where the
write's guard holds. Before, the read kept the write's guard with nothing to read otherwise, and axpydot compiled
by default at any size no 256 divides was refused ("asScalar of vectors that are not in memory")."""

import numpy as np
import pytest

import lift
from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind


def _inputs(n: int) -> list:
    rng = np.random.default_rng(n)
    return [np.float32(2.0)] + [rng.uniform(-1, 1, n).astype(np.float32) for _ in range(3)]


def _reference(a, w, v, u):
    z = w - a * v
    return z, z.astype(np.float64) @ u


@needs_device
@pytest.mark.parametrize("n", [67, 4099, 65537])
def test_axpydot_compiles_by_default_at_sizes_no_work_group_divides(examples, n):
    program = examples["axpydot"].kernels["axpydot"]
    compiled = lift.compile(program, lowering="default")
    assert "take-(N) ∘ " in lift.paper(compiled.lowered({"N": n}))
    inputs = _inputs(n)
    z, r = compiled(*inputs)
    expected_z, expected_r = _reference(*inputs)
    np.testing.assert_array_equal(z, expected_z)
    np.testing.assert_allclose(float(np.asarray(r).ravel()[0]), expected_r, rtol=1e-4, atol=1e-5)


@needs_oclgrind
def test_the_read_back_stays_inside_the_array_under_oclgrind(examples, tmp_path):
    inputs = _inputs(67)
    z, r = run_under_oclgrind(examples["axpydot"].path, "axpydot", {"N": 67}, inputs, tmp_path)
    expected_z, expected_r = _reference(*inputs)
    np.testing.assert_array_equal(z, expected_z)
    np.testing.assert_allclose(float(np.asarray(r).ravel()[0]), expected_r, rtol=1e-4, atol=1e-5)
