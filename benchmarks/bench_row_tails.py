"""Row reductions at odd lengths with and without `reduce-tail`: the default lowering's kernel times, in one run.

    python -m benchmarks.bench_row_tails [--rounds 7] [--repeat 10] [--programs softmax,cross_entropy,...]

Softmax (of rows and of columns), cross-entropy, log-sum-exp of every row and attention (`examples/`) sum
`exp(x - max)` over each row, layer normalisation the squares of `x - mean`, correlation those of `x - mean` over
each column: no padding keeps these sums (`exp(0 - s)` is not their neutral 0). Where the lanes do not divide the
row (the examples' own sizes, odd, and 1001 at 4001 rows), the default lowering sums the lanes of the row's first
`8·⌊n/8⌋` elements and folds the rest after them (`row_tails=True`, `reduce-tail`), or, as before, sums the row
in scalars (`row_tails=False`). Both are compiled and checked against numpy first, then timed in turn, `--rounds`
times, the order alternating, so that both see the same load. The table gives the median and best kernel times
and the ratios without / with (above 1: the tail is faster).
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
         ("layernorm", {"R": 1001, "C": 999}), ("attention", {"S": 257, "D": 61}),
         ("correlation", {"M": 251, "N": 1001}))
"""lse_outer is not run at 4001 rows: its kernel, with or without the tail, stops PoCL 3.1 with a segmentation fault
there (each work-item holds its row of `x yᵀ`, 1001 floats, in private memory)."""


def compiled(pf, name: str, sizes: dict, tails: bool):
    program = pf.kernels[name]
    return lift.compile(default_lowering(program, sizes, row_tails=tails).replay(program), sizes=sizes, name=name)


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
        kernels = {tails: compiled(pf, name, sizes, tails) for tails in (False, True)}
        for k in kernels.values():
            got = np.asarray(k(*inputs), np.float64)
            np.testing.assert_allclose(got, want.reshape(got.shape), rtol=1e-4, atol=1e-6)
        times = {tails: [] for tails in kernels}
        for r in range(args.rounds):
            for tails in (False, True) if r % 2 == 0 else (True, False):
                times[tails].append(kernels[tails].time(*inputs, repeat=args.repeat).kernels_ms)
        rows.append((name, sizes, times))
    print(f"{'program':<14} {'sizes':<18} {'without med/best ms':>20} {'with med/best ms':>18} {'ratio med':>9} "
          f"{'ratio best':>10}")
    for name, sizes, times in rows:
        (med0, best0), (med1, best1) = ((statistics.median(times[t]), min(times[t])) for t in (False, True))
        shape = "x".join(str(v) for v in sizes.values())
        print(f"{name:<14} {shape:<18} {med0:>11.2f}/{best0:<8.2f} {med1:>9.2f}/{best1:<8.2f} {med0 / med1:>9.2f} "
              f"{best0 / best1:>10.2f}")


if __name__ == "__main__":
    main()
