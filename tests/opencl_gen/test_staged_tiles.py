"""A matrix multiply whose reduction dimension is tiled and staged in local memory (CASES 2016), written out by hand
(`examples/matmul.py::matmul_staged`): a `reduce-seq` run by all work-items of a work-group, with `map-local`s in its
operator. Its loop is at work-group level, a barrier after each copy into local memory and one at the end of each
step, the accumulators private, each work-item holding its own block; against numpy on the OpenCL device and under
oclgrind; and the shape still refused, a work-group's fold whose accumulator is not private. The same kernels derived
by the macro rules (`register_blocked(.., staged=tk)`), on random shapes against numpy."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lift import LiftCodegenError, ToGlobal
from lift.opencl_gen.compiled import compile
from lift.opencl_gen.kernels import generate
from lift.rules.macro_rules import register_blocked
from lift.rules.strategy import StrategyFailed, derive

from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
from matmul import matmul, matmul_staged  # noqa: E402

SHAPES = [((2, 2, 4, 4, 8), {"M": 24, "K": 48, "N": 40}), ((3, 1, 2, 4, 5), {"M": 18, "K": 15, "N": 12}),
          ((1, 4, 4, 2, 6), {"M": 12, "K": 18, "N": 24})]


def _inputs(sizes, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (sizes["M"], sizes["K"])).astype(np.float32)
    b = rng.uniform(-1, 1, (sizes["K"], sizes["N"])).astype(np.float32)
    return a, b


def test_the_fold_runs_at_work_group_level_with_two_barriers_per_step():
    """The fold over the tiles outside every map-local; in each step a barrier after each of the two copies and one
    at its end, none elsewhere; the accumulator one private block of `h × w` per work-item."""
    source = generate(matmul_staged(2, 2, 4, 4, 8), "staged", SHAPES[0][1]).source
    raw = source.splitlines()
    lines = [line.strip() for line in raw]
    fold, accumulator = lines.index("for (int i_7 = 0; i_7 < 6; i_7 += 1) {"), lines.index("float pmem_2[4];")
    assert raw[fold].index("for") == raw[accumulator].index("float")
    barriers = [i for i, line in enumerate(lines) if line == "barrier(CLK_LOCAL_MEM_FENCE);"]
    assert len(barriers) == 3 and lines[barriers[-1] + 1] == "}"
    copies = [i for i, line in enumerate(lines) if line.startswith("lmem_")]
    assert len(copies) == 2 and copies[0] < barriers[0] < copies[1] < barriers[1]


@needs_device
@pytest.mark.parametrize("shape, sizes", SHAPES)
def test_staged_tiles_compute_the_product(shape, sizes):
    a, b = _inputs(sizes)
    got = compile(matmul_staged(*shape))(a, b)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@needs_oclgrind
@pytest.mark.parametrize("staged, sizes", [
    (f"matmul_staged{SHAPES[0][0]!r}", SHAPES[0][1]), (f"matmul_staged{SHAPES[1][0]!r}", SHAPES[1][1]),
    ("derive(register_blocked(2, 4, tiles=(2, 2), staged=3, padded=True, packed=True), matmul, SIZES).replay(matmul)",
     {"M": 8, "K": 9, "N": 15})])
def test_staged_tiles_under_oclgrind(tmp_path, staged, sizes):
    """No data race on the tiles (the barrier at the end of each step keeps the next copy from overwriting what
    other work-items still read), no uninitialised read: written by hand, and derived."""
    program = tmp_path / "staged.py"
    program.write_text(f"import sys\nsys.path.insert(0, {str(EXAMPLES)!r})\nfrom matmul import matmul, matmul_staged\n"
                       "from lift.rules.macro_rules import register_blocked\nfrom lift.rules.strategy import derive\n"
                       f"SIZES = {sizes!r}\nstaged = {staged}\n")
    a, b = _inputs(sizes, 3)
    (got,) = run_under_oclgrind(program, "staged", sizes, [a, b], tmp_path)
    np.testing.assert_allclose(got.reshape(sizes["M"], sizes["N"]), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_a_work_group_fold_whose_accumulator_is_not_private_is_refused():
    """In global memory, work-items would read their accumulators before others wrote them (no barrier orders the
    initial value's writes before the first step): one clear error naming the fold and the space."""
    program = matmul_staged(2, 2, 4, 4, 8, accumulator=ToGlobal)
    with pytest.raises(LiftCodegenError, match=r"reduce-seq at .* runs in all work-items of a work-group.*global memory"):
        generate(program, "staged", SHAPES[0][1])


def _staged(h, w, rows, cols, tk, sizes, **options):
    return derive(register_blocked(h, w, tiles=(rows, cols), staged=tk, **options), matmul, sizes).replay(matmul)


def test_the_macro_rules_derive_the_staged_kernel():
    """`register_blocked(.., staged=tk)`: the work-group's fold at work-group level, its two tile copies into local
    memory each followed by a barrier, one more at the end of the step, a private block per work-item."""
    sizes = SHAPES[0][1]
    source = generate(_staged(2, 2, 4, 4, 8, sizes), "staged", sizes).source
    assert source.count("local float lmem_") == 2 and source.count("barrier(CLK_LOCAL_MEM_FENCE);") == 3
    assert "float pmem_2[4];" in source and "i_7 < 6;" in source


@needs_device
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(h=st.sampled_from([1, 2, 3]), w=st.sampled_from([1, 2, 4]), rows=st.sampled_from([1, 2, 4]),
       cols=st.sampled_from([2, 4]), tk=st.sampled_from([1, 2, 3, 4]), tiles=st.tuples(*[st.integers(1, 3)] * 3),
       options=st.sampled_from([{}, {"padded": True, "packed": True}]), seed=st.integers(0, 99))
def test_staged_derivations_compute_the_product(h, w, rows, cols, tk, tiles, options, seed):
    """Derived for random blocks, tiles and sizes (multiples of them, or padded and packed at sizes one less where
    the unstaged blocks pad them), the staged product against numpy on the OpenCL device."""
    less = 1 if options else 0
    sizes = {"M": h * rows * tiles[0] - less * (h * rows > 8), "K": tk * tiles[1],
             "N": w * cols * tiles[2] - less * (w * cols > 8)}
    try:
        derive(register_blocked(h, w, tiles=(rows, cols), **options), matmul, sizes)
    except StrategyFailed:
        assume(False)
    a, b = _inputs(sizes, seed)
    got = compile(_staged(h, w, rows, cols, tk, sizes, **options))(a, b)
    np.testing.assert_allclose(got.reshape(sizes["M"], sizes["N"]), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
