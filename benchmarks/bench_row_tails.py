"""Row programs at odd lengths, their reductions and elementwise maps in scalars or in vector lanes with a scalar
tail: the default lowering's kernel times, in one run.

    python -m benchmarks.bench_row_tails [--rounds 7] [--repeat 10] [--programs softmax,cross_entropy,...]

Softmax (of rows and of columns), cross-entropy, log-sum-exp of every row and attention (`examples/`) sum
`exp(x - max)` over each row, layer normalisation the squares of `x - mean`, correlation those of `x - mean` over
each column: no padding keeps these sums (`exp(0 - s)` is not their neutral 0). Where the lanes do not divide the
row (the examples' own sizes, odd, and 1001 at 4001 rows), the default lowering sums the lanes of the row's first
`8·⌊n/8⌋` elements and folds the rest after them (`row_tails=True`, `reduce-tail`), or sums the row in scalars
(`row_tails=False`); the elementwise map giving the row's result after its reductions (softmax's division, layer
normalisation's scaling) maps vectors of the row's first `8·⌊n/8⌋` elements and scalars of the rest
(`row_maps=True`, `map-tail`), or scalars (`row_maps=False`). Three lowerings are compiled and checked against
numpy first: scalar (neither), tails (`row_tails` alone, the lowering before `row_maps`) and maps (both, the
default); then timed in turn, `--rounds` times, the order rotating, so that all see the same load. The table gives
the median and best kernel times and the ratios scalar / maps and tails / maps (above 1: the maps' lanes are
faster).
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np

import lift
from lift.ir.program_file import load_program_file
from lift.rules.default_lowering import default_lowering

from benchmarks.bench_odd_sizes import EXAMPLES

CASES = (("softmax", {"R": 1001, "C": 999}), ("softmax", {"R": 4001, "C": 1001}),
         ("cross_entropy", {"R": 4001, "C": 1001}), ("lse_outer", {"M": 1009, "N": 997}),
         ("lse_outer", {"M": 1009, "N": 1001}), ("softmax_cols", {"R": 1001, "C": 999}),
         ("layernorm", {"R": 1001, "C": 999}), ("layernorm", {"R": 4001, "C": 1001}),
         ("attention", {"S": 257, "D": 61}), ("correlation", {"M": 251, "N": 1001}))
"""lse_outer is not run at 4001 rows: its kernel, with or without the tail, stops PoCL 3.1 with a segmentation fault
there (each work-item holds its row of `x yᵀ`, 1001 floats, in private memory)."""


VARIANTS = {"scalar": dict(row_tails=False, row_maps=False), "tails": dict(row_tails=True, row_maps=False),
            "maps": dict(row_tails=True, row_maps=True)}
"""The lowerings compared, by the `default_lowering` options they set."""


def compiled(pf, name: str, sizes: dict, options: dict):
    program = pf.kernels[name]
    return lift.compile(default_lowering(program, sizes, **options).replay(program), sizes=sizes, name=name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--programs", default=",".join(dict.fromkeys(name for name, _ in CASES)))
    args = parser.parse_args()
    rows = []
    for name, sizes in CASES:
        if name not in args.programs.split(","):
            continue
        pf = load_program_file(EXAMPLES / f"{name}.py")
        inputs = pf.inputs(name, sizes, seed=0)
        want = np.asarray(pf.namespace["reference"](*inputs), np.float64)
        kernels = {v: compiled(pf, name, sizes, options) for v, options in VARIANTS.items()}
        for k in kernels.values():
            got = np.asarray(k(*inputs), np.float64)
            np.testing.assert_allclose(got, want.reshape(got.shape), rtol=1e-4, atol=1e-6)
        times = {v: [] for v in kernels}
        order = list(kernels)
        for r in range(args.rounds):
            for v in order[r % len(order):] + order[:r % len(order)]:
                times[v].append(kernels[v].time(*inputs, repeat=args.repeat).kernels_ms)
        rows.append((name, sizes, times))
    print(f"{'program':<14} {'sizes':<10} " + " ".join(f"{v + ' med/best ms':>20}" for v in VARIANTS)
          + f" {'scalar/maps med':>15} {'best':>5} {'tails/maps med':>14} {'best':>5}")
    for name, sizes, times in rows:
        med, best = ({v: f(times[v]) for v in VARIANTS} for f in (statistics.median, min))
        shape = "x".join(str(v) for v in sizes.values())
        print(f"{name:<14} {shape:<10} " + " ".join(f"{med[v]:>11.2f}/{best[v]:<8.2f}" for v in VARIANTS)
              + f" {med['scalar'] / med['maps']:>15.2f} {best['scalar'] / best['maps']:>5.2f}"
              f" {med['tails'] / med['maps']:>14.2f} {best['tails'] / best['maps']:>5.2f}")


if __name__ == "__main__":
    main()
