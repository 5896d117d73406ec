"""Kernels of the macro rules' register-blocked matrix multiply (2-D map-global or 2-D tiles of work-groups,
private accumulator blocks in unrolled loops, vectorised updates) against numpy on the OpenCL device, a tiled one under
oclgrind; and the launch of maps nested anywhere in an outer one's function."""

import sys
from pathlib import Path

import numpy as np
import pytest

from lift import ArrayType, Float, Join, MapGlb, MapSeqUnroll, SizeVar, Split, UserFun, fun
from lift.opencl_gen.compiled import compile
from lift.opencl_gen.kernels import generate
from lift.rules.macro_rules import register_blocked
from lift.rules.strategy import derive

from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
from matmul import matmul  # noqa: E402

SIZES = {"M": 16, "K": 12, "N": 32}
N = SizeVar("N")
neg = UserFun("neg", ("x",), "return -x;", (Float,), Float, python=lambda x: -x)


def _blocked(h, w, vector=None, dims=(1, 0), sizes=SIZES, tiles=None, packed=False, padded=False):
    return derive(register_blocked(h, w, vector, dims, tiles, padded=padded, packed=packed), matmul,
                  sizes).replay(matmul)


def test_the_launch_covers_both_dimensions_of_blocks():
    kernel = generate(_blocked(4, 8), "matmul", SIZES).kernels[0]
    assert kernel.launch.evaluate(SIZES) == ((32 // 8, 16 // 4), None)
    kernel = generate(_blocked(2, 16, dims=(0, 1)), "matmul", SIZES).kernels[0]
    assert kernel.launch.evaluate(SIZES) == ((16 // 2, 32 // 16), None)
    kernel = generate(_blocked(2, 4, tiles=(4, 2)), "matmul", SIZES).kernels[0]
    assert kernel.launch.evaluate(SIZES) == ((32 // 4, 16 // 2), (2, 4))


def test_the_accumulators_are_private():
    """Private, and, in a vectorised block, vectors (`vector-accumulator`): one register each, no `vload` of them."""
    assert "float pmem" in generate(_blocked(4, 8), "matmul", SIZES).source
    source = generate(_blocked(4, 8, 4), "matmul", SIZES).source
    assert "float4 pmem" in source and "vload4(0, B" in source and "vload4(0, pmem" not in source


def test_the_loops_over_the_accumulators_are_unrolled():
    """Every loop over the private block (initial copy, update, copy out) is a `map-seq-unroll`, under
    `#pragma unroll`; the loop over the reduction's rows is not."""
    source = generate(_blocked(4, 8), "matmul", SIZES).source
    lines = [line.strip() for line in source.splitlines()]
    loops = [i for i, line in enumerate(lines) if line.startswith("for (")]
    unrolled = [i for i in loops if lines[i - 1] == "#pragma unroll"]
    assert len(loops) == 7 and len(unrolled) == 6
    (fold,) = set(loops) - set(unrolled)
    assert f"< {SIZES['K']};" in lines[fold]


@needs_device
def test_an_unrolled_map_computes_what_the_map_does():
    program = fun([ArrayType(Float, N)], lambda x: (Join() @ MapGlb(MapSeqUnroll(neg)) @ Split(4))(x))
    x = np.arange(32, dtype=np.float32)
    assert "#pragma unroll" in generate(program, "neg4", {"N": 32}).source
    np.testing.assert_array_equal(compile(program)(x), -x)


@needs_device
@pytest.mark.parametrize("h, w, vector, dims, tiles", [
    (1, 4, None, (1, 0), None), (1, 32, 8, (0, 1), None), (2, 16, None, (1, 0), None), (4, 8, 4, (1, 0), None),
    (8, 4, None, (0, 1), None), (4, 16, 16, (1, 0), None), (16, 2, None, (1, 0), None),
    (2, 4, None, (1, 0), (4, 2)), (1, 8, 4, (1, 0), (8, 4)), (4, 4, 2, (1, 0), (1, 8))])
def test_register_blocked_kernels_compute_the_product(h, w, vector, dims, tiles):
    rng = np.random.default_rng(h * 100 + w)
    a = rng.uniform(-1, 1, (SIZES["M"], SIZES["K"])).astype(np.float32)
    b = rng.uniform(-1, 1, (SIZES["K"], SIZES["N"])).astype(np.float32)
    got = compile(_blocked(h, w, vector, dims, tiles=tiles))(a, b)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_packed_blocks_are_copied_by_a_kernel_of_their_own_and_streamed():
    """`packed`: a first kernel copies the blocks of columns of B, each contiguous; the product reads its block's
    `w` floats of row `k` at `w · k` from the block's start."""
    copy, product = generate(_blocked(4, 8, 4, packed=True), "matmul", SIZES).source.split("kernel void")[1:]
    assert "B[" in copy and "B" not in product
    assert f"vload4(0, tmp_0 + {SIZES['K'] * 8}*" in product


@needs_device
@pytest.mark.parametrize("h, w, vector, dims, tiles, sizes", [
    (2, 8, 4, (1, 0), None, SIZES), (4, 16, 16, (0, 1), None, SIZES), (2, 4, None, (1, 0), (4, 2), SIZES),
    (2, 8, 8, (1, 0), (8, 1), SIZES),
    (4, 8, 8, (1, 0), (2, 2), {"M": 31, "K": 13, "N": 31}), (2, 16, 16, (1, 0), None, {"M": 61, "K": 7, "N": 127})])
def test_packed_register_blocked_kernels_compute_the_product(h, w, vector, dims, tiles, sizes):
    rng = np.random.default_rng(h * 100 + w)
    a = rng.uniform(-1, 1, (sizes["M"], sizes["K"])).astype(np.float32)
    b = rng.uniform(-1, 1, (sizes["K"], sizes["N"])).astype(np.float32)
    got = compile(_blocked(h, w, vector, dims, sizes, tiles, packed=True, padded=True))(a, b)
    np.testing.assert_allclose(got[..., 0] if got.ndim == 3 else got, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@needs_oclgrind
@pytest.mark.parametrize("strategy, sizes", [
    ("register_blocked(2, 4, 4, tiles=(2, 2))", {"M": 8, "K": 4, "N": 16}),
    ("register_blocked(1, 4, 2, tiles=(2, 2), padded=True, packed=True)", {"M": 15, "K": 5, "N": 15}),
])
def test_register_blocked_kernels_under_oclgrind(tmp_path, strategy, sizes):
    """A tiled register block, and a packed one over padded blocks: no race, no uninitialised read."""
    program = tmp_path / "blocked.py"
    program.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(EXAMPLES)!r})\n"
        "from matmul import matmul\n"
        "from lift.rules.macro_rules import register_blocked\n"
        "from lift.rules.strategy import derive\n"
        f"SIZES = {sizes!r}\n"
        f"blocked = derive({strategy}, matmul, SIZES).replay(matmul)\n")
    rng = np.random.default_rng(9)
    a = rng.uniform(-1, 1, (sizes["M"], sizes["K"])).astype(np.float32)
    b = rng.uniform(-1, 1, (sizes["K"], sizes["N"])).astype(np.float32)
    (got,) = run_under_oclgrind(program, "blocked", sizes, [a, b], tmp_path)
    np.testing.assert_allclose(got[..., 0] if got.ndim == 3 else got, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
