"""Stencils as a user writes them, compiled with the default lowering alone (`lift.compile`, no search), against
numpy's sum of shifted slices of the padded grid, timed interleaved in one run.

    python -m benchmarks.bench_default_stencils [--rounds 9] [--size 1001x999] [--grid3d 99x101x103]

The 2-D 5-point Jacobi (clamped edges), a 3x3 9-point stencil of random weights (mirrored edges) and the 3-D
7-point Jacobi (clamped) of `examples/stencils.py`, at sizes that are no multiple of anything by default. Each
is checked against numpy (float64) first, then timed once per round with numpy's own expression, rounds
interleaved (wall clock around a synchronous kernel call, the inputs already on the device). Prints best and
median times and numpy/lift (above 1: lift is faster), and the default lowering's expression.
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import lift
from lift.ir.program_file import load_program_file
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import CompiledProgram

from benchmarks.bench_odd_sizes import EXAMPLES
from benchmarks.measure import checked_and_timed

NUMPY_MODE = {"clamp": "edge", "mirror": "symmetric", "wrap": "wrap"}


def shifted_sum(a: np.ndarray, k: np.ndarray, boundary: str) -> np.ndarray:
    """numpy's stencil: the weighted sum of `a`'s padded grid shifted by every offset of `k` (zeros skipped)."""
    p = np.pad(a, 1, mode=NUMPY_MODE[boundary])
    return sum(k[o] * p[tuple(slice(j, j + n) for j, n in zip(o, a.shape))] for o in np.ndindex(*k.shape) if k[o])


def _jacobi7() -> np.ndarray:
    k = np.zeros((3, 3, 3), np.float32)
    k[1, 1, 1] = 0.4
    for o in ((0, 1, 1), (2, 1, 1), (1, 0, 1), (1, 2, 1), (1, 1, 0), (1, 1, 2)):
        k[o] = 0.1
    return k


def stencils(size: tuple, grid3d: tuple, rng) -> dict:
    """name → (program, sizes, grid shape, weights, boundary)."""
    ns = load_program_file(EXAMPLES / "stencils.py").namespace
    m, n = size
    cross = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], np.float32) / 5
    return {
        "jacobi2d-5pt-clamp": (ns["jacobi2d_high_program"]("clamp"), {"M": m, "N": n}, size, cross, "clamp"),
        "stencil2d-9pt-mirror": (ns["conv2d_high_program"]("mirror"), {"M": m, "N": n}, size,
                                 rng.uniform(-1, 1, (3, 3)).astype(np.float32), "mirror"),
        "jacobi3d-7pt-clamp": (ns["jacobi3d_high_program"]("clamp"), dict(zip("OMN", grid3d)), grid3d, _jacobi7(),
                               "clamp"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--size", default="1001x999", help="the 2-D grid, MxN")
    parser.add_argument("--grid3d", default="99x101x103", help="the 3-D grid, OxMxN")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    device = runtime.select_device(None)
    shape = lambda text: tuple(int(x) for x in text.split("x"))  # noqa: E731
    for name, (program, sizes, grid, k, boundary) in stencils(shape(args.size), shape(args.grid3d), rng).items():
        a = rng.uniform(-1, 1, grid).astype(np.float32)
        weights = k.reshape(-1) if k.ndim == 3 else k
        compiled = CompiledProgram(lift.compile(program, sizes=sizes).lowered(sizes), device, sizes)
        prepared = compiled.prepare(a, weights)
        prepared.upload()
        numpy = (lambda a=a, k=k, b=boundary: shifted_sum(a, k, b))
        calls = {"lift": (prepared.launch, lambda p=prepared: np.asarray(p.download()[0])), "numpy": (numpy, numpy)}
        times = checked_and_timed(calls, shifted_sum(a.astype(np.float64), k.astype(np.float64), boundary),
                                  args.rounds, indent="  ")
        line = "  ".join(f"{who} best {min(ts):.2f} median {statistics.median(ts):.2f} ms" for who, ts in times.items())
        if "lift" in times:
            line += (f"  numpy/lift best {min(times['numpy']) / min(times['lift']):.2f}x, median "
                     f"{statistics.median(times['numpy']) / statistics.median(times['lift']):.2f}x")
        print(f"{name} {grid}: {line}\n  {lift.paper(compiled.program)[:200]}", flush=True)


if __name__ == "__main__":
    main()
