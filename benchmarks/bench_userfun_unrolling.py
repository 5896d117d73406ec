"""The default lowering of the examples whose user functions loop, with and without `userfun-loop-unroll` (issue:
unrolling loops inside user functions), against numpy; with `--rule userfun-sincos`, of the DFT with and without
its sine and cosine computed by one call; with `--rule userfun-composition`, of weighted sums (stencils, gemv, dot)
with and without their folds' steps `add(acc, mult(x, w))` composed into multiply-adds.

    python -m benchmarks.bench_userfun_unrolling [--rounds 7] [--rule userfun-sincos] [--program life pdist ...]

Each program's default lowering is compiled as derived (`default`: its user functions unrolled where their loops
fit) and, where it unrolls any, with the `userfun-loop-unroll` steps left out (`rolled`; `sin, cos` for the steps
of `userfun-sincos`), checked against numpy,
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
RULES = {"userfun-loop-unroll": ("rolled", PROGRAMS), "userfun-sincos": ("sin, cos", ("dft",)),
         "userfun-composition": ("add, mult", ("conv5x5", "box27", "gauss_sep", "gemv", "dot"))}
"""Each rule: the label of the lowering without it, and the programs it applies to by default."""


def bench(name: str, rounds: int, rule: str = "userfun-loop-unroll") -> list:
    """Rows `(program, contender, sizes, error, best ms, median ms)`, `default` first, then the default lowering
    without `rule`'s steps, unless it has none."""
    pf = load_program_file(EXAMPLES / f"{name}.py")
    program, sizes = pf.kernels[name], pf.bind()
    inputs = pf.inputs(name, sizes)
    reference = pf.namespace.get("reference") or (lambda *xs: lift.interpret(program, *xs))
    want = reference(*inputs)
    derived = default_lowering(program, sizes)
    without = Derivation(tuple(s for s in derived.steps if s.rule != rule), derived.sizes)
    lowerings = {"default": derived} if without.steps == derived.steps else \
        {"default": derived, RULES[rule][0]: without}
    errors, times = timed_lowerings(program, sizes, name, lowerings, inputs, reference, want, rounds)
    text = ", ".join(f"{k}={v}" for k, v in sizes.items())
    return [(name, label, text, errors.get(label, 0.0), min(ts), statistics.median(ts)) for label, ts in times.items()]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rule", default="userfun-loop-unroll", choices=sorted(RULES))
    parser.add_argument("--program", nargs="*", default=None,
                        choices=sorted({p for _, programs in RULES.values() for p in programs}))
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'program':11} {'contender':9} {'sizes':22} {'rel. error':>10} {'best ms':>9} {'median ms':>9} "
          f"{'x/default best':>15} {'median':>7}")
    for name in args.program or RULES[args.rule][1]:
        rows = bench(name, args.rounds, args.rule)
        best, median = rows[0][4], rows[0][5]
        for row in rows:
            print(f"{row[0]:11} {row[1]:9} {row[2]:22} {row[3]:10.1e} {row[4]:9.3f} {row[5]:9.3f} "
                  f"{row[4] / best:15.2f} {row[5] / median:7.2f}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
