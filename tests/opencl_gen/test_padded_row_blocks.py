"""Row blocks at row counts the block does not divide (`lift.rules.row_blocking.row_blocks(h, padded=True)`, chosen
by `lift.rules.block_choice.row_padding`): the default lowerings of gemv, a dense layer (`examples/gemv_relu.py`)
and mvt's `A y1` (`examples/mvt.py`) block their rows padded to a multiple of 4 with copies of the last, agree with
numpy on the device, and oclgrind finds no access out of bounds in them at small odd sizes; their vector reads of a
clamped row are vector loads of the row (`lift.opencl_gen.views`), with no test of the row's padding."""

import re

import numpy as np
import pytest

import lift
from lift import paper
from lift.opencl_gen.kernels import generate
from lift.rules.default_lowering import lower

from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind

PADDED_ROWS = "split-4 ∘ pad-to-multiple-4(clamp)(A)"


def _gemv_inputs(sizes, seed=0):
    rng = np.random.default_rng(seed)
    m, n = sizes["M"], sizes["N"]
    return [rng.uniform(-1, 1, s).astype(np.float32) for s in ((m, n), n, m)] + [np.float32(1.5), np.float32(-0.5)]


def _inputs(examples, stem, sizes):
    return _gemv_inputs(sizes) if stem == "gemv" else examples[stem].inputs(stem, sizes, seed=0)


def _reference(examples, stem, inputs):
    if stem == "gemv":
        a, x, y, alpha, beta = inputs
        return (alpha * (a @ x) + beta * y,)
    want = examples[stem].namespace["reference"](*inputs)
    return want if isinstance(want, tuple) else (want,)


def _check(got, want):
    for g, w in zip(got if isinstance(got, (tuple, list)) else (got,), want):
        np.testing.assert_allclose(np.asarray(g).ravel(), np.ravel(w), rtol=1e-4, atol=1e-4 * np.abs(w).max())


@pytest.mark.parametrize("stem, sizes, load", [
    ("gemv", {"M": 15, "N": 32}, r"vload8\(0, A \+ 8\*i_\d+ \+ 32\*pad_\d+\)"),
    ("gemv_relu", {"M": 15, "N": 19},
     r"\(\(4\*i_\d+ < 19\) && \(4\*i_\d+ \+ 3 < 19\)\) \? vload4\(0, A \+ 4\*i_\d+ \+ 19\*pad_\d+\)")])
def test_a_padded_row_block_reads_each_clamped_row_as_vectors(examples, stem, sizes, load):
    """Each lane of a vector of a padded row brings the row index back into range by a variable of its own; the
    lanes are identified, so the row is read by vector loads at its clamped index, tested only for the padding of
    the row's own length (`gemv_relu`'s 19 floats padded to 20 with zeros), not gathered lane by lane."""
    lowered = lower(examples[stem].kernels[stem], sizes)
    assert PADDED_ROWS in paper(lowered)
    source = generate(lowered, stem, sizes).source
    assert re.search(load, source), source
    assert not re.search(r"\? vload\d+\(0, A \+ \d+\*g_", source), "no test of the row's index"


@needs_device
@pytest.mark.parametrize("stem, sizes", [("gemv", {"M": 257, "N": 256}), ("gemv", {"M": 255, "N": 256}),
                                         ("gemv_relu", {"M": 1001, "N": 999}), ("mvt", {"N": 203})])
def test_the_default_lowering_blocks_rows_padded_and_agrees_with_numpy(examples, stem, sizes):
    program = examples[stem].kernels[stem]
    lowered = lower(program, sizes)
    assert PADDED_ROWS in paper(lowered) and "toPrivate(reduce-seq(" in paper(lowered)
    inputs = _inputs(examples, stem, sizes)
    _check(lift.compile(lowered, sizes=sizes)(*inputs), _reference(examples, stem, inputs))


@needs_oclgrind
@pytest.mark.parametrize("stem, sizes", [("gemv", {"M": 15, "N": 32}), ("gemv_relu", {"M": 15, "N": 19}),
                                         ("mvt", {"N": 23})])
def test_padded_row_blocks_are_in_bounds_under_oclgrind(examples, tmp_path, stem, sizes):
    assert PADDED_ROWS in paper(lower(examples[stem].kernels[stem], sizes))
    inputs = _inputs(examples, stem, sizes)
    got = run_under_oclgrind(examples[stem].path, stem, sizes, inputs, tmp_path)
    _check(got, _reference(examples, stem, inputs))
