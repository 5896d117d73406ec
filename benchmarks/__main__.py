"""The paper's applications against numpy, CLBlast, hand-written OpenCL and the device's streaming rate.

    python -m benchmarks [--paper | --smoke] [--only asum,dot] [--device cpu] [--runs 20] [--budget 90s]

For scal, asum, dot, gemv, BlackScholes and MD (the paper's Section 5), at sizes scaled to a small
machine by default (the paper's small sizes), at the paper's sizes (7.2) with `--paper`, or tiny with
`--smoke`: the kernel `lift explore` found (reused from `lift-out/<kernel>/` when it holds a winner for
this device and size, else explored within `--budget` per problem), the paper's hand-derived
kernels, hand-written OpenCL, CLBlast and numpy, each checked against lift's interpreter on the
high-level program before it is timed (median of `--runs` runs; kernel times exclude transfers, as in
the paper, a second column includes them), and the device's streaming copy and read rates at the
problem's size. Writes `results.md`, `results.csv` and `speedups.png` to
`benchmarks/results/<device>/` (`paper/` or `smoke/` below it for the other sizes), and prints the
table and the floors.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from lift.errors import LiftError
from lift.explore import parse_budget
from lift.opencl_gen import runtime

from benchmarks import reporting
from benchmarks.applications import APPLICATIONS, load_pyclblast
from benchmarks.explored import ExploreSettings
from benchmarks.measure import Unavailable
from benchmarks.suite import Settings, run_suite

RESULTS = Path(__file__).resolve().parent / "results"
MIN_RUNS = 10


def device_slug(device) -> str:
    """A folder name for a device: its name, lower case, runs of other characters as one dash."""
    return re.sub(r"[^a-z0-9]+", "-", device.name.strip().lower()).strip("-")


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument("--paper", action="store_const", dest="size_set", const="paper", default="default",
                       help="the paper's sizes: scal, asum, dot at 16M and 128M, gemv at 4096x4096 and 16384x8192")
    sizes.add_argument("--smoke", action="store_const", dest="size_set", const="smoke",
                       help="tiny sizes, to check the machinery in seconds")
    parser.add_argument("--only", default=None, metavar="NAMES",
                        help=f"comma-separated applications ({', '.join(a.name for a in APPLICATIONS)})")
    parser.add_argument("--device", default=None, help="OpenCL device: a name substring or #index (lift devices)")
    parser.add_argument("--runs", type=int, default=20, help=f"timed runs per contender (at least {MIN_RUNS})")
    parser.add_argument("--budget", default="90s", help="explore budget per problem without a stored winner")
    parser.add_argument("--no-explore", action="store_true", help="only reuse stored winners, never explore")
    parser.add_argument("--max-candidates", type=int, default=None, help="stop each exploration after this many")
    parser.add_argument("--explore-dir", type=Path, default=Path("lift-out"), help="explore's output folders")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default: benchmarks/results/DEVICE)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the inputs and of the search")
    args = parser.parse_args(argv)
    if args.runs < MIN_RUNS:
        parser.error(f"--runs must be at least {MIN_RUNS}, got {args.runs}")
    return args


def select_apps(only) -> list:
    if only is None:
        return list(APPLICATIONS)
    names = [n.strip().lower() for n in only.split(",") if n.strip()]
    known = {a.name: a for a in APPLICATIONS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise LiftError(f"--only: no application {', '.join(unknown)}; there are {', '.join(known)}")
    return [known[n] for n in names]


def clblast_line() -> str:
    try:
        load_pyclblast()
    except Unavailable as e:
        return f"CLBlast: skipped: {e}"
    from importlib.metadata import version
    return f"CLBlast: pyclblast {version('pyclblast')}"


def load_line() -> str:
    """The load average before the run, with a warning when other processes keep the cores busy: their
    load slows the contenders unevenly. (During the run, the run itself loads the cores.)"""
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    busy = ": other processes are running, expect noise" if load > 0.5 * cores else ""
    return f"Load average {load:.1f} on {cores} cores before the run{busy}"


def main(argv=None) -> int:
    args = parse_args(argv)
    start = time.perf_counter()
    try:
        apps = select_apps(args.only)
        device = runtime.select_device(args.device)
        budget_s = 0.0 if args.no_explore else parse_budget(args.budget)
    except LiftError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    label = runtime.device_label(device)
    out = args.out or RESULTS / device_slug(device) / ("" if args.size_set == "default" else args.size_set)
    settings = Settings(args.device, args.runs, ExploreSettings(args.explore_dir, budget_s, args.max_candidates,
                                                                args.seed), args.seed)
    notes = f"{clblast_line()}. {load_line()}."
    print(f"device: {label}\n{notes}\n")
    results = run_suite(apps, args.size_set, settings)
    elapsed = time.perf_counter() - start
    command = " ".join(["python -m benchmarks", *(sys.argv[1:] if argv is None else argv)])
    header = [f"# Benchmarks on {label}", "",
              f"`{command}`: {args.size_set} sizes, {elapsed / 60:.1f} minutes, "
              f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC. Kernel times are medians of {args.runs} runs, "
              "transfers excluded (the next column includes them); every output was checked against "
              "lift.interpret on the high-level program before it was timed. Explore budget: "
              f"{'none (stored winners only)' if budget_s == 0 else f'{budget_s:g} s per problem'}. "
              f"{notes}"]
    paths = write(results, out, header, f"speedup over numpy on {label}")
    print(f"wrote {', '.join(map(str, paths))} in {elapsed / 60:.1f} minutes")
    return 0


def write(results: list, out: Path, header: list, title: str) -> list:
    """Write and print the results page; write the CSV and the chart; return the three paths."""
    out.mkdir(parents=True, exist_ok=True)
    table = reporting.rows(results)
    page = reporting.markdown(table, header, reporting.floors(results), results)
    print("\n" + page)
    (out / "results.md").write_text(page)
    return [out / "results.md", reporting.write_csv(table, out / "results.csv"),
            reporting.chart(results, out / "speedups.png", title)]


if __name__ == "__main__":
    sys.exit(main())
