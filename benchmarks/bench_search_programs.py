"""Programs beyond the paper's, written as a new user would, explored by `lift explore`'s rule-driven search and
timed against numpy and the device's streaming bandwidth in one run.

    python -m benchmarks.bench_search_programs [--budget 120] [--rounds 7] [--program colsum ...] [--out lift-out]

Each program of `PROGRAMS` (a kernel of `examples/`: normalisation `x / sum(x)`, column sums, transpose, 1-D and
2-D Jacobi stencils) is explored for `--budget` seconds into `lift-out/search-<kernel>/` (resuming its log), its
winner replayed from the stored derivation, checked against numpy, then timed for `--rounds` rounds interleaved
with numpy's own expression and with the hand-written streaming copy (`benchmarks.opencl_peers`) moving as many
bytes (`benchmarks.measure.interleaved`: each round prepares a fresh run, warms it up and launches it `RUNS` times,
so that the times span several placements of the buffers in memory, which alone can move a CPU's streaming rate
by 1.5x; kernel times from OpenCL's profiling events, inputs on the device; numpy's by the wall clock). Prints
best and median times, the ratio numpy/lift (above 1: lift is faster), the winner's useful GB/s (inputs read once,
output written once) as a share of the copy timed in the same rounds (best to best, median to median), of the copy
bandwidth the exploration measured and of its best streaming rate (copy or read-only), the number of candidates and the
cost model's rank correlation.
"""

from __future__ import annotations

import argparse
import json
import statistics
from functools import partial
from pathlib import Path

import numpy as np

from lift.explore import explore
from lift.explore.report import winner_paths
from lift.explore.rewrite_search import RewriteSearch
from lift.ir.program_file import load_program_file
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import CompiledProgram
from lift.opencl_gen.launch import local_size_overrides
from lift.rules import Derivation

from benchmarks.measure import HostRun, check_outputs, interleaved
from benchmarks.opencl_peers import streaming_copy

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _jacobi2d(a, k):
    p = np.pad(a, 1, mode="edge")
    return sum(k[i, j] * p[i:i + a.shape[0], j:j + a.shape[1]] for i in range(3) for j in range(3) if k[i, j])


PROGRAMS = {
    "normalise": ("normalise.py", {"N": 1 << 22}, lambda x: x / x.sum()),
    "colsum": ("colsum.py", {"M": 4096, "N": 4096}, lambda a: a.sum(axis=0)),
    "transpose": ("transpose.py", {"M": 4096, "N": 4096}, lambda a: np.ascontiguousarray(a.T)),
    "jacobi1d": ("jacobi.py", {"L": 1 << 22, "N": 1, "M": 1}, lambda a, k: k[0] * np.concatenate(([a[0]], a[:-1]))
                 + k[1] * a + k[2] * np.concatenate((a[1:], [a[-1]]))),
    "jacobi2d": ("jacobi.py", {"L": 1, "N": 2048, "M": 2048}, _jacobi2d),
}


def explored(kernel: str, budget_s: float, root: Path) -> tuple:
    """Explore `kernel`; its winner's lowered program, local size, stored record, and the explore result."""
    stem, sizes, _ = PROGRAMS[kernel]
    pf = load_program_file(EXAMPLES / stem)
    program = pf.kernels[kernel]
    folder = root / f"search-{kernel}"
    result = explore(pf, kernel, sizes, RewriteSearch(program, sizes), budget_s=budget_s, out_dir=folder,
                     progress=False)
    stored = json.loads(winner_paths(folder, kernel)["derivation"].read_text())
    lowered = Derivation.from_json(json.dumps(stored)).replay(program)
    return pf, lowered, stored["params"].get("local_size"), stored, result


RUNS = 3
"""Kernel launches per contender and round (after a warm-up, `benchmarks.measure`)."""


def bench(kernel: str, budget_s: float, rounds: int, root: Path) -> None:
    stem, sizes, reference = PROGRAMS[kernel]
    pf, lowered, local_size, stored, result = explored(kernel, budget_s, root)
    inputs = [np.asarray(x) for x in pf.inputs(kernel, sizes, 0)]
    device = runtime.select_device(None)
    generated = CompiledProgram(lowered, device, sizes).generated(sizes)
    launch = local_size_overrides(generated.kernels, local_size) if local_size else None
    compiled = CompiledProgram(lowered, device, sizes, launch=launch)
    want = reference(*[x.astype(np.float64) for x in inputs])
    nbytes = sum(x.nbytes for x in inputs) + want.size * 4
    print(f"\n{kernel} {sizes}: {len(result.ranked)} candidates ({result.stopped}); winner {stored['params']}")
    print(f"  {stored['expression'][:160]}")
    rho = result.rank_correlation
    bw = result.bandwidth
    print(f"  streaming copy {bw.copy_gbps:.1f} GB/s, read {bw.read_gbps:.1f} GB/s; cost model rank correlation "
          + ("n/a" if rho is None else f"{rho:+.2f}"))
    run = compiled.prepare(*inputs)
    run.upload()
    run.launch()
    wrong = check_outputs(run.download()[0], (want,))
    del run
    if wrong is not None:
        print(f"  lift: WRONG ({wrong}), not timed")
        return
    copy, _ = streaming_copy(device, nbytes // 2)
    times = interleaved({"copy": copy, "lift": partial(compiled.prepare, *inputs),
                         "numpy": lambda: HostRun(partial(reference, *inputs))}, rounds, RUNS)
    lift_best = min(times["lift"])
    for name, ts in times.items():
        best, median = min(ts), statistics.median(ts)
        gbps = nbytes / best / 1e6
        line = f"  {name:<6} best {best:8.3f} ms  median {median:8.3f} ms  {gbps:6.1f} GB/s"
        if name == "lift":
            copy_ms = times["copy"]
            line += (f" ({100 * min(copy_ms) / best:.0f}% of the streaming copy in the same rounds, median "
                     f"{100 * statistics.median(copy_ms) / median:.0f}%; {100 * gbps / bw.copy_gbps:.0f}% of the "
                     f"explored copy, {100 * gbps / bw.gbps:.0f}% of its best streaming rate)  "
                     f"numpy/lift {min(times['numpy']) / lift_best:.2f}x")
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", action="append", choices=sorted(PROGRAMS), help="repeatable; default all")
    parser.add_argument("--budget", type=float, default=120.0, help="explore budget per program, seconds")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path("lift-out"))
    args = parser.parse_args()
    for kernel in args.program or PROGRAMS:
        bench(kernel, args.budget, args.rounds, args.out)


if __name__ == "__main__":
    main()
