"""The reference interpreter's speed: the set-up time `lift explore` spends on the reference output.

    python -m benchmarks.bench_interpreter [--repeat 3]

The paper's BLAS programs (each under 1 s here), the all-pairs N-body at N = 4096 and matrix multiply
at 1024^3 (issue 17 item 8: a few seconds), each checked against numpy. Prints the best and the median of
`--repeat` timed runs after one untimed run, and the largest difference to numpy's evaluation of the same
formula (relative to its largest magnitude).

Then `lift explore`'s set-up of the reference within a budget of `--budget` seconds (`Problem.prepare`:
inputs, the timed probe, the reference), for the N-body at N = 16384 and matrix multiply at 1024^3, and
where candidates would be checked.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from lift import interpret
from lift.explore.driver import Problem
from lift.explore.reference import reference_limit
from lift.ir.program_file import load_program_file

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(ROOT / "tests"))
from numpy_references import black_scholes, md, nbody  # noqa: E402


def _matmul(A, B):
    return A @ B


CASES = [("asum", {"N": 1 << 22}, lambda x: np.abs(x).sum(dtype=np.float64)),
         ("dot", {"N": 1 << 22}, lambda x, y: np.dot(x.astype(np.float64), y)),
         ("scal", {"N": 1 << 22}, lambda a, x: a * x),
         ("gemv", {"M": 4096, "N": 4096}, lambda A, x, y, a, b: a * (A @ x) + b * y),
         ("blackscholes", {"N": 1 << 22}, black_scholes),
         ("md", {"P": 12288, "K": 128}, md),
         ("nbody", {"N": 4096}, nbody),
         ("matmul", {"M": 1024, "K": 1024, "N": 1024}, _matmul)]


def _check(stem, got, want) -> float:
    """The largest difference to numpy, relative to numpy's largest magnitude."""
    if stem == "blackscholes" or stem == "nbody":
        pairs = [(got["_0"], want[0]), (got["_1"], want[1])]
    elif stem == "md":
        pairs = [(got[:, 0, :], want)]
    else:
        pairs = [(np.reshape(got, np.shape(want)), want)]
    return max(float(np.abs(g - w).max() / max(np.abs(w).max(), 1e-30)) for g, w in pairs)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="comma-separated programs, e.g. nbody,matmul")
    parser.add_argument("--budget", type=float, default=90.0, help="explore's budget in seconds")
    args = parser.parse_args(argv)
    chosen = set(args.only.split(",")) if args.only else None
    print(f"{'program':<14}{'sizes':<26}{'best s':>9}{'median s':>10}{'rel. error':>12}")
    for stem, sizes, reference in CASES:
        if chosen is not None and stem not in chosen:
            continue
        pf = load_program_file(EXAMPLES / f"{stem}.py")
        inputs = pf.inputs(stem, sizes)
        got = interpret(pf.kernels[stem], *inputs)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            interpret(pf.kernels[stem], *inputs)
            times.append(time.perf_counter() - start)
        error = _check(stem, got, reference(*inputs))
        print(f"{stem:<14}{', '.join(f'{k}={v}' for k, v in sizes.items()):<26}{min(times):>9.3f}"
              f"{statistics.median(times):>10.3f}{error:>12.1e}")

    print(f"\nexplore's reference set-up in a budget of {args.budget:g} s (limit {reference_limit(args.budget):g} s)")
    for stem, sizes in SET_UP:
        if chosen is not None and stem not in chosen:
            continue
        pf = load_program_file(EXAMPLES / f"{stem}.py")
        start = time.perf_counter()
        problem = Problem.prepare(pf, stem, sizes, 0, reference_limit(args.budget))
        elapsed = time.perf_counter() - start
        where = problem.verified or "verified at the explored size"
        print(f"{stem:<14}{', '.join(f'{k}={v}' for k, v in sizes.items()):<26}{elapsed:>9.3f} s  {where}")


SET_UP = [("nbody", {"N": 16384}), ("matmul", {"M": 1024, "K": 1024, "N": 1024})]


if __name__ == "__main__":
    main()
