"""The programs of a new user (`examples/pdist.py`, `kmeans.py`, `softmax.py`, `cross_entropy.py`: user functions
of rows, per-row reductions; `conv2d.py`: a convolution over channels) under oclgrind: no data race, no uninitialised or out-of-bounds access, and numpy's result."""

import numpy as np
import pytest

from opencl_device import needs_oclgrind, run_under_oclgrind

RNG = np.random.default_rng(23)


def _f32(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


@needs_oclgrind
@pytest.mark.parametrize("name, sizes, inputs", [
    ("pdist", {"N": 7, "M": 5}, lambda: [_f32(7, 3), _f32(5, 3)]),
    ("kmeans", {"N": 13, "K": 3}, lambda: [_f32(13, 4), _f32(3, 4)]),
    ("softmax", {"R": 5, "C": 7}, lambda: [_f32(5, 7)]),
    ("cross_entropy", {"R": 5, "C": 7}, lambda: [_f32(5, 7), np.array([0, 6, 3, 1, 6], np.int32), np.float32(5)]),
    ("conv2d", {"C": 2, "K": 2, "H": 5, "W": 19}, lambda: [_f32(2, 5, 19), _f32(2, 2, 3, 3)]),
])
def test_user_programs_under_oclgrind(examples, tmp_path, name, sizes, inputs):
    """`conv2d`'s flattened windows are indexed by `i / 9` and `i % 9`: built unoptimised (`run_under_oclgrind`)."""
    pf = examples[name]
    arrays = inputs()
    (got,) = run_under_oclgrind(pf.path, name, sizes, arrays, tmp_path, unoptimised=name == "conv2d")
    np.testing.assert_allclose(got, pf.namespace["reference"](*arrays), rtol=1e-5, atol=1e-6)


MAX_ABS_DIFF = '''
import math
from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Zip, fun, userfun
N = SizeVar("N")

@userfun
def maxf(x: Float, y: Float) -> Float:
    return max(x, y)

maxdiff = fun([ArrayType(Float, N), ArrayType(Float, N)],
              lambda x, y: Reduce(maxf, -math.inf)(Map(lambda p: abs(Get(p, 0) - Get(p, 1)))(Zip(x, y))))
'''


@needs_oclgrind
def test_a_max_padded_with_its_last_elements_under_oclgrind(tmp_path):
    """`max(|x - y|)` from `-inf` at a prime size, chunked over inputs padded with copies of their last element
    (`pad-reduction-repeat`): the clamped vector reads stay inside the arrays."""
    path = tmp_path / "maxdiff.py"
    path.write_text(MAX_ABS_DIFF)
    x, y = _f32(67), _f32(67)
    (got,) = run_under_oclgrind(path, "maxdiff", {"N": 67}, [x, y], tmp_path)
    assert got == np.abs(x - y).max()
