"""The default lowering's kernel time against the hand-derived kernels of `examples/`, interleaved in one run.

    python -m benchmarks.bench_default_lowering [--repeat 5]

For each program, `lift.compile(program)` (the default lowering, `lift.rules.default_lowering`) and the
hand-lowered kernel of the same file are timed in turn, `--rounds` times, on the same inputs; the table gives
the median kernel times and their ratio (default / hand; above 1 the default is slower). Explored winners
(`benchmarks.explored`) are not compared here: they need a `lift explore` run per problem.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import lift
from lift.ir.program_file import load_program_file

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PROBLEMS = [("asum", "asum", "asum_cpu", {"N": 1 << 22}), ("dot", "dot", "dot_cpu", {"N": 1 << 22}),
            ("scal", "scal", "scal_global", {"N": 1 << 22}), ("gemv", "gemv", "gemv_coalesced", {"M": 1024, "N": 1024}),
            ("blackscholes", "blackscholes", "blackscholes_global", {"N": 1 << 20}),
            ("md", "md", "md_global", {"P": 8192, "K": 64})]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'program':<14}{'sizes':<18}{'default ms':>12}{'hand ms':>10}{'ratio':>8}  hand kernel")
    for stem, high, hand, sizes in PROBLEMS:
        pf = load_program_file(EXAMPLES / f"{stem}.py")
        inputs = pf.inputs(high, sizes, seed=0)
        compiled = {k: lift.compile(pf.kernels[k], sizes=sizes, name=k) for k in (high, hand)}
        times = {k: [] for k in compiled}
        for _ in range(args.rounds):
            for k, c in compiled.items():
                times[k].append(c.time(*inputs, repeat=args.repeat).kernels_ms)
        d, h = statistics.median(times[high]), statistics.median(times[hand])
        shown = ",".join(f"{k}={v}" for k, v in sizes.items())
        print(f"{stem:<14}{shown:<18}{d:>12.3f}{h:>10.3f}{d / h:>8.2f}  {hand}")


if __name__ == "__main__":
    main()
