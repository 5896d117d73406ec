"""A stencil over time steps as one kernel the host launches per step (`iterate-host`) against the same steps
unrolled into one kernel each (`iterate-decomposition`, `iterate-once`), timed interleaved in one run.

    python -m benchmarks.bench_host_loops [--rounds 9] [--only heat3d,jacobi1d_steps]

For `examples/heat3d.py` and `examples/jacobi1d_steps.py` at the files' sizes and step counts: both lowerings
(the default lowering of the program, and of the program with its iteration unrolled first) are checked against
the file's numpy reference, then launched once per round, rounds interleaved (unrolled, host loop, unrolled, ...),
the inputs already on the device. Prints the OpenCL C bytes and the time from the first call to its result
(lowering and driver build included, the driver's and PyOpenCL's binary caches off) of each, the best and median
wall-clock time of a launch of all steps (enqueue to finish) and of the kernels alone (profiling events), and
unrolled/host (above 1: the host loop is faster).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

import lift
from lift.ir.program_file import load_program_file
from lift.rules.default_lowering import unrolled_iterations
from lift.rules.engine import RewriteEngine
from lift.rules.strategy import Focus

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def variants(stem: str) -> tuple:
    """`(sizes, inputs, reference output, {variant: (prepared run, bytes, first call s)})` of one example."""
    pf = load_program_file(EXAMPLES / f"{stem}.py")
    program, sizes = pf.kernels[stem], pf.bind()
    inputs = pf.inputs(stem, sizes, seed=0)
    want = pf.namespace["reference"](*inputs)
    unrolled = unrolled_iterations(Focus(program, RewriteEngine(sizes=sizes))).program
    found = {}
    for name, p in (("unrolled", unrolled), ("host loop", program)):
        compiled = lift.compile(p, lowering="default", name=stem)
        start = time.perf_counter()
        got = compiled(*inputs)
        first = time.perf_counter() - start
        np.testing.assert_allclose(np.ravel(got), np.ravel(want), rtol=1e-3, atol=1e-4, err_msg=f"{stem} {name}")
        run = compiled.prepare(*inputs)
        run.upload()
        found[name] = (run, len(compiled.generated_for(*inputs).source.encode()), first)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--only", default="heat3d,jacobi1d_steps")
    args = parser.parse_args()
    os.environ.update(PYOPENCL_NO_CACHE="1", POCL_KERNEL_CACHE="0")  # before the first use of OpenCL
    for stem in args.only.split(","):
        found = variants(stem)
        wall = {name: [] for name in found}
        kernels = {name: [] for name in found}
        for name, (run, _, _) in found.items():
            run.launch()  # warm: the driver's per-launch compilation
        for _ in range(args.rounds):
            for name, (run, _, _) in found.items():
                start = time.perf_counter()
                times = run.launch()
                wall[name].append((time.perf_counter() - start) * 1e3)
                kernels[name].append(sum(times))
        print(f"{stem}: {len(found['host loop'][0].plan.kernels)} launches, {args.rounds} rounds")
        print(f"  {'variant':<10}{'bytes':>10}{'first call s':>14}{'wall best':>11}{'median':>9}"
              f"{'kernels best':>14}{'median':>9}  (ms)")
        for name, (_, nbytes, first) in found.items():
            w, k = wall[name], kernels[name]
            print(f"  {name:<10}{nbytes:>10}{first:>14.2f}{min(w):>11.2f}{statistics.median(w):>9.2f}"
                  f"{min(k):>14.2f}{statistics.median(k):>9.2f}")
        ratio = {m: statistics.median(d["unrolled"]) / statistics.median(d["host loop"])
                 for m, d in (("wall", wall), ("kernels", kernels))}
        best = {m: min(d["unrolled"]) / min(d["host loop"]) for m, d in (("wall", wall), ("kernels", kernels))}
        print(f"  unrolled/host loop: wall {ratio['wall']:.2f} (best {best['wall']:.2f}), "
              f"kernels {ratio['kernels']:.2f} (best {best['kernels']:.2f})")


if __name__ == "__main__":
    main()
