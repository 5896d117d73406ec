"""The default lowering of the examples whose user functions loop, with and without `userfun-loop-unroll` (issue:
unrolling loops inside user functions), against numpy.

    python -m benchmarks.bench_userfun_unrolling [--rounds 7] [--program life pdist ...]

Each program's default lowering is compiled as derived (`default`: its user functions unrolled where their loops
fit) and, where it unrolls any, with the `userfun-loop-unroll` steps left out (`rolled`), checked against numpy,
then timed in `--rounds` interleaved rounds (the kernels' time, the best of 3 launches, inputs on the device; numpy
on the host: the file's `reference`, or the interpreter's numpy where it has none, as mandelbrot). Prints best and
median times and the ratios rolled / unrolled and numpy / unrolled.
"""

from __future__ import annotations

import argparse
import os
import statistics

import lift
from benchmarks.bench_new_user import EXAMPLES, timed_lowerings
from lift.ir.program_file import load_program_file
from lift.rules.default_lowering import default_lowering
from lift.rules.derivation import Derivation

PROGRAMS = ("life", "pdist", "spmv_ell", "kmeans", "mandelbrot", "sobel", "conv5x5", "gauss_sep", "maxpool")


def bench(name: str, rounds: int) -> list:
    """Rows `(program, contender, sizes, error, best ms, median ms)`, `default` first; no `rolled` row where nothing
    unrolls."""
    pf = load_program_file(EXAMPLES / f"{name}.py")
    program, sizes = pf.kernels[name], pf.bind()
    inputs = pf.inputs(name, sizes)
    reference = pf.namespace.get("reference") or (lambda *xs: lift.interpret(program, *xs))
    want = reference(*inputs)
    unrolled = default_lowering(program, sizes)
    rolled = Derivation(tuple(s for s in unrolled.steps if s.rule != "userfun-loop-unroll"), unrolled.sizes)
    lowerings = {"default": unrolled} if rolled.steps == unrolled.steps else {"default": unrolled, "rolled": rolled}
    errors, times = timed_lowerings(program, sizes, name, lowerings, inputs, reference, want, rounds)
    text = ", ".join(f"{k}={v}" for k, v in sizes.items())
    return [(name, label, text, errors.get(label, 0.0), min(ts), statistics.median(ts)) for label, ts in times.items()]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--program", nargs="*", default=list(PROGRAMS), choices=PROGRAMS)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'program':11} {'contender':9} {'sizes':22} {'rel. error':>10} {'best ms':>9} {'median ms':>9} "
          f"{'x/default best':>15} {'median':>7}")
    for name in args.program:
        rows = bench(name, args.rounds)
        best, median = rows[0][4], rows[0][5]
        for row in rows:
            print(f"{row[0]:11} {row[1]:9} {row[2]:22} {row[3]:10.1e} {row[4]:9.3f} {row[5]:9.3f} "
                  f"{row[4] / best:15.2f} {row[5] / median:7.2f}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
