"""How well the cost model ranks explored candidates: Spearman's rank correlation of predicted and measured times
per program (issue 18's floor: at least +0.5 on each).

    python -m benchmarks.bench_cost_model measure [--only asum,gemv] [--budget 90] [--max-candidates 60]
                                                  [--scale 4] [--out /tmp/lift-cost-model]
    python -m benchmarks.bench_cost_model retime [--only ...] [--rounds 5] [--out /tmp/lift-cost-model]
    python -m benchmarks.bench_cost_model rank [--only ...] [--out /tmp/lift-cost-model]

`measure` explores each program of `benchmarks.contender_cases` (at its sizes divided by `--scale` in each size
variable, a modest size) for `--budget` seconds, in a new temporary tuning database, and saves the working
candidates it measured (derivation, work-group size, measured and predicted time) with the device's facts to
`<out>/<program>.json`. `rank` needs no device time: it replays each saved derivation, predicts its time with
the current cost model (`lift.explore.cost_model`) for the saved device (one saved without `cache_bytes` as a
device with no known cache, one without `near_cache_bytes` as a CPU whose core's cache is its local memory), and
prints per program the number of candidates, the Spearman correlation of the predictions made when measured
("then") and of today's ("now"), the median of today's predictions over the measured times ("now/ms", the model's
absolute error), and the measured time of the candidate today's model ranks first against the fastest one's. So
the model can be changed and judged again without measuring anything again.

A search measures each candidate once, as it comes; under load, identical kernels measured minutes apart differ
2x, more than the candidates of a program that chunks one algorithm differently do (MD, N-body). `retime` times
every saved candidate of a program again in `--rounds` interleaved rounds (round-robin: each round times each
candidate once, the median of `ROUND_TIMING`'s runs), through the explorer's device worker
(`lift.explore.worker`), and saves each one's median over the rounds as `retimed_ms`; `rank` then prints the
correlation of today's predictions with those medians too ("re-timed"), how reproducible they are (the odd rounds'
medians against the even ones', "halves"), and the model's pick among them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from lift.explore import explore
from lift.explore.candidate import LOCAL_SIZE, Candidate
from lift.explore.cost_model import DeviceModel, predict
from lift.explore.cost_walk import profile
from lift.explore.rank_correlation import spearman
from lift.explore.evaluation import TimingPolicy
from lift.explore.problem import Problem
from lift.explore.rewrite_search import RewriteSearch
from lift.explore.tuning_database import TuningDatabase
from lift.explore.worker import DEVICE, Worker, device_facts, evaluate
from lift.ir.program_file import load_program_file
from lift.opencl_gen import runtime
from lift.opencl_gen.runner import make_plan
from lift.rules import Derivation

from benchmarks.contender_cases import CASES, EXAMPLES, Case


def scaled(case: Case, scale: int) -> dict:
    """`case`'s sizes, each size variable divided by `scale` (at least the quick size)."""
    return {k: max(v // scale, case.quick[k]) for k, v in case.sizes.items()}


def measure(case: Case, sizes: dict, budget_s: float, max_candidates: int, out: Path) -> Path:
    """Explore `case` at `sizes`; save its measured candidates (see the module docstring)."""
    pf = load_program_file(EXAMPLES / case.file)
    device = runtime.select_device(None)
    facts = device_facts(device)
    with tempfile.TemporaryDirectory(prefix="lift-cost-model-") as tmp:
        result = explore(pf, case.kernel, sizes, RewriteSearch(pf.kernels[case.kernel], sizes), budget_s=budget_s,
                         out_dir=Path(tmp), max_candidates=max_candidates, progress=False,
                         tuning_database=TuningDatabase(Path(tmp) / "tuning"))
    timed = [r for r in result.ranked if r.ok and r.predicted_ms is not None and r.search_ms is not None]
    saved = {"case": case.name, "sizes": sizes, "load": os.getloadavg()[0],
             "device": dict(kind=facts.kind, compute_units=facts.compute_units,
                            bandwidth_gbps=result.bandwidth.gbps, copy_gbps=result.bandwidth.copy_gbps,
                            launch_ms=result.bandwidth.launch_ms,
                            local_mem_bytes=facts.local_mem_bytes, max_work_group_size=facts.max_work_group_size,
                            vector_width=facts.vector_width, cache_bytes=facts.cache_bytes,
                            cache_line_bytes=facts.cache_line_bytes, near_cache_bytes=facts.near_cache_bytes),
             "candidates": [dict(key=r.key, derivation=list(r.derivation), params=dict(r.params), time_ms=r.search_ms,
                                 predicted_ms=r.predicted_ms, expression=r.expression) for r in timed]}
    path = out / f"{case.name.replace(' ', '-')}.json"
    path.write_text(json.dumps(saved, indent=1))
    return path


ROUND_TIMING = TimingPolicy(min_runs=15, max_runs=15, max_s=0.0)
"""One candidate's timing in one round of `retime`: the median of fifteen runs. Of five, jacobi2d5's 50 candidates at
2048² (about 1 ms each) agreed between the odd and the even rounds at +0.16 (load 1.1), of fifteen at +0.53."""

REFERENCE_LIMIT_S = 10.0
"""`retime` checks outputs against a reference that takes at most this long to compute (seconds)."""


def generated(saved: dict) -> list:
    """Each saved candidate's generated program, replayed from its derivation."""
    case = next(c for c in CASES if c.name == saved["case"])
    program, sizes = load_program_file(EXAMPLES / case.file).kernels[case.kernel], saved["sizes"]
    return [Candidate(Derivation.from_json(json.dumps({"sizes": sizes, "steps": c["derivation"]})).replay(program),
                      local_size=c["params"].get(LOCAL_SIZE)).generate(case.kernel, sizes)
            for c in saved["candidates"]]


def predicted_now(saved: dict) -> list:
    """Today's model's prediction for each saved candidate (None where it cannot profile it)."""
    model = DeviceModel.for_device(**saved["device"])
    out = []
    for g in generated(saved):
        try:
            out.append(predict(profile(g), model))
        except ValueError:
            out.append(None)
    return out


def retime(path: Path, rounds: int, timeout_s: float = 60.0) -> Path:
    """Time the saved candidates of one program again in interleaved rounds; save their medians (see the module
    docstring). A candidate that fails in a round (a timeout under load) has that round left out. The outputs are
    checked where the reference takes at most `REFERENCE_LIMIT_S` (the search checked them all)."""
    saved = json.loads(path.read_text())
    case = next(c for c in CASES if c.name == saved["case"])
    problem = Problem.prepare(load_program_file(EXAMPLES / case.file), case.kernel, saved["sizes"], seed=0,
                              reference_limit_s=REFERENCE_LIMIT_S)
    plans = [make_plan(g, saved["sizes"]) for g in generated(saved)]
    times = [[] for _ in plans]
    with tempfile.TemporaryDirectory(prefix="lift-cost-model-") as tmp, \
            Worker(DEVICE, None, problem.save(Path(tmp) / "inputs.npz"), ROUND_TIMING) as worker:
        for _ in range(rounds):
            for plan, runs in zip(plans, times):
                outcome = evaluate(worker, plan, timeout_s)
                if outcome.ok:
                    runs.append(outcome.timing.median_ms)
    for c, runs in zip(saved["candidates"], times):
        c["retimed_ms"], c["rounds_ms"] = statistics.median(runs) if runs else None, runs
    saved["retimed"] = dict(rounds=rounds, load=os.getloadavg()[0])
    path.write_text(json.dumps(saved, indent=1))
    return path


def rank(path: Path) -> str:
    """One line: the program, its sizes and candidates, the correlations of the predictions made when measured
    ("then") and of today's ("now") with the in-search times, of today's with the re-timed medians ("re-timed")
    and of the in-search times with those ("search": how reproducible the in-search times are), of the medians of
    the odd and of the even rounds ("halves": how reproducible the re-timed ones are, the most any model can
    reach), the median over the candidates of today's prediction over the measured time ("now/ms": the model's
    absolute error; re-timed where the candidates were), and the time of the model's first pick against the
    fastest one's."""
    saved = json.loads(path.read_text())
    cands = saved["candidates"]
    if not cands:
        return f"{saved['case']:<22}no working candidate was measured"
    now = predicted_now(saved)
    measured = [c.get("retimed_ms") or c["time_ms"] for c in cands]

    def rho(xs, ys):
        both = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
        return spearman(*zip(*both)) if len(both) > 1 else None

    searched = [c["time_ms"] for c in cands]
    retimed = [c.get("retimed_ms") for c in cands]
    halves = [[statistics.median(r[k::2]) if len(r) > k else None for r in (c.get("rounds_ms", []) for c in cands)]
              for k in (0, 1)]
    ratio = statistics.median(p / t for p, t in zip(now, measured) if p is not None)
    fastest = min(range(len(cands)), key=lambda i: measured[i])
    picked = min((i for i in range(len(cands)) if now[i] is not None), key=lambda i: now[i])
    sizes = ",".join(f"{k}={v}" for k, v in saved["sizes"].items())
    fmt = (lambda x: "  n/a" if x is None else f"{x:+.2f}")
    then = rho([c["predicted_ms"] for c in cands], searched)
    return (f"{saved['case']:<22}{sizes:<24}{len(cands):>4}{fmt(then):>7}{fmt(rho(now, searched)):>7}"
            f"{fmt(rho(now, retimed)):>9}{fmt(rho(searched, retimed)):>8}{fmt(rho(*halves)):>8}{ratio:>8.2f}"
            f"  pick {measured[picked]:.3g} ms / best {measured[fastest]:.3g} ms"
            f" = {measured[fastest] / measured[picked]:.2f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_cost_model", description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=("measure", "retime", "rank"))
    parser.add_argument("--only", help="comma-separated case names (asum, gemv, matmul 1024x1024x1024, ...)")
    parser.add_argument("--budget", type=float, default=90.0, help="explore seconds per program")
    parser.add_argument("--max-candidates", type=int, default=60)
    parser.add_argument("--scale", type=int, default=4, help="divide each size variable by this")
    parser.add_argument("--rounds", type=int, default=5, help="retime: interleaved rounds")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "lift-cost-model")
    args = parser.parse_args(argv)
    names = None if args.only is None else {n.strip() for n in args.only.split(",")}
    cases = [c for c in CASES if names is None or c.name in names or c.family in names]
    if not cases:
        parser.error(f"--only: no program {args.only}; there are {', '.join(c.name for c in CASES)}")
    args.out.mkdir(parents=True, exist_ok=True)
    if args.mode == "measure":
        for case in cases:
            sizes = scaled(case, args.scale)
            print(f"{case.name} {sizes}: saved {measure(case, sizes, args.budget, args.max_candidates, args.out)} "
                  f"(load average {os.getloadavg()[0]:.2f})", flush=True)
        return
    paths = [p for p in (args.out / f"{c.name.replace(' ', '-')}.json" for c in cases) if p.is_file()]
    if args.mode == "retime":
        for path in paths:
            print(f"re-timed {retime(path, args.rounds)} (load average {os.getloadavg()[0]:.2f})", flush=True)
        return
    print(f"{'program':<22}{'sizes':<24}{'n':>4}{'then':>7}{'now':>7}{'re-timed':>9}{'search':>8}{'halves':>8}"
          f"{'now/ms':>8}  model's pick / fastest measured")
    for path in paths:
        print(rank(path), flush=True)


if __name__ == "__main__":
    main()
