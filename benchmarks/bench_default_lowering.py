"""The default lowering's kernel time against the explored winner and the hand derivations, in one run.

    python -m benchmarks.bench_default_lowering [--budget 30] [--rounds 5] [--programs asum,dot]

For each program (asum, dot, scal, gemv, BlackScholes, MD and the plain matrix multiply of `examples/`),
`lift.compile(program, lowering="default")` (`lift.rules.default_lowering`) is timed against the best
known lowering: the winner of a short `lift explore` (`--budget` seconds, into a new temporary folder and
tuning database, so that nothing measured earlier is reused; `--budget 0` skips it) and the hand-derived
kernels of the same file (`examples/*.py`). All are compiled first, then timed in turn, `--rounds` times,
on the same inputs, the order rotating from round to round (the machine may be shared: each sees the same
load). The table gives the median and the best kernel times of the default and of the best contender (by
median), their ratios default / best (1 is as fast as the best; above 1 the default is slower), and the
default lowering's expression; `same kernel` where the best contender's expression is the default's.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

import lift
from lift.explore.tuning_database import TuningDatabase
from lift.ir.program_file import load_program_file

from benchmarks.bench_odd_sizes import EXAMPLES, explored_winner

PROBLEMS = {
    "asum": ({"N": 1 << 24}, ("asum_intel", "asum_cpu")),
    "dot": ({"N": 1 << 24}, ("dot_cpu",)),
    "scal": ({"N": 1 << 24}, ("scal_global", "scal_vectorised_global")),
    "gemv": ({"M": 4096, "N": 4096}, ("gemv_workgroup", "gemv_coalesced")),
    "blackscholes": ({"N": 1 << 22}, ("blackscholes_global",)),
    "md": ({"P": 12288, "K": 128}, ("md_global",)),
    "matmul": ({"M": 512, "K": 512, "N": 512}, ()),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=30.0, help="seconds of search per program (0: no search)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--programs", default=",".join(PROBLEMS))
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="lift-default-lowering-"))
    store, bandwidth = TuningDatabase(out / "tuning"), None
    print(f"{'program':<14}{'sizes':<22}{'default ms':>11}{'best ms':>9}{'ratio':>7}{'ratio of bests':>15}"
          "  best contender")
    rows = []
    for name in args.programs.split(","):
        sizes, hand = PROBLEMS[name]
        pf = load_program_file(EXAMPLES / f"{name}.py")
        contenders = {"default": lift.compile(pf.kernels[name], sizes=sizes, name=name, lowering="default")}
        contenders.update({k: lift.compile(pf.kernels[k], sizes=sizes, name=k) for k in hand})
        expressions = {}
        if args.budget > 0:
            compiled, record, bandwidth, _ = explored_winner(pf, name, sizes, out / name, args.budget, bandwidth,
                                                             store)
            contenders["explored"], expressions["explored"] = compiled, record.expression
        inputs = pf.inputs(name, sizes, seed=0)
        times = {k: [] for k in contenders}
        order = list(contenders)
        for r in range(args.rounds):
            for k in order[r % len(order):] + order[:r % len(order)]:
                times[k].append(contenders[k].time(*inputs, repeat=args.repeat).kernels_ms)
        median = {k: statistics.median(v) for k, v in times.items()}
        shown = ",".join(f"{k}={v}" for k, v in sizes.items())
        if len(contenders) == 1:
            print(f"{name:<14}{shown:<22}{median['default']:>11.3f}  (no contender: explore with --budget)")
            continue
        best = min((k for k in median if k != "default"), key=median.get)
        same = " (same kernel)" if lift.paper(contenders[best].lowered(sizes)) == lift.paper(
            contenders["default"].lowered(sizes)) else ""
        bests = min(times["default"]) / min(times[best])
        print(f"{name:<14}{shown:<22}{median['default']:>11.3f}{median[best]:>9.3f}"
              f"{median['default'] / median[best]:>7.2f}{bests:>15.2f}  {best}{same}", flush=True)
        rows.append((name, contenders["default"].lowered(sizes), best, expressions.get(best, "")))
    print()
    for name, lowered, best, expression in rows:
        print(f"{name}: default {lift.paper(lowered)}")
        if expression:
            print(f"{name}: {best} {expression}")


if __name__ == "__main__":
    main()
