"""How well the cost model ranks explored candidates: Spearman's rank correlation of predicted and measured times
per program (issue 18's floor: at least +0.5 on each).

    python -m benchmarks.bench_cost_model measure [--only asum,gemv] [--budget 90] [--max-candidates 60]
                                                  [--scale 4] [--out /tmp/lift-cost-model]
    python -m benchmarks.bench_cost_model rank [--only ...] [--out /tmp/lift-cost-model]

`measure` explores each program of `benchmarks.contender_cases` (at its sizes divided by `--scale` in each size
variable, a modest size) for `--budget` seconds, in a new temporary tuning database, and saves the working
candidates it measured (derivation, work-group size, measured and predicted time) with the device's facts to
`<out>/<program>.json`. `rank` needs no device time: it replays each saved derivation, predicts its time with
the current cost model (`lift.explore.cost_model`) for the saved device, and prints per program the number of
candidates, the Spearman correlation of the predictions made when measured ("then") and of today's ("now"),
and the measured time of the candidate today's model ranks first against the fastest one's. So the model can be
changed and judged again without measuring anything again.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from lift.explore import explore
from lift.explore.candidate import LOCAL_SIZE, Candidate
from lift.explore.cost_model import DeviceModel, predict, profile, spearman
from lift.explore.rewrite_search import RewriteSearch
from lift.explore.tuning_database import TuningDatabase
from lift.explore.worker import device_facts
from lift.ir.program_file import load_program_file
from lift.opencl_gen import runtime
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
    timed = [r for r in result.ranked if r.ok and r.predicted_ms is not None]
    saved = {"case": case.name, "sizes": sizes, "load": os.getloadavg()[0],
             "device": dict(kind=facts.kind, compute_units=facts.compute_units,
                            bandwidth_gbps=result.bandwidth.gbps, launch_ms=result.bandwidth.launch_ms,
                            local_mem_bytes=facts.local_mem_bytes, max_work_group_size=facts.max_work_group_size,
                            vector_width=facts.vector_width),
             "candidates": [dict(key=r.key, derivation=list(r.derivation), params=dict(r.params), time_ms=r.time_ms,
                                 predicted_ms=r.predicted_ms, expression=r.expression) for r in timed]}
    path = out / f"{case.name.replace(' ', '-')}.json"
    path.write_text(json.dumps(saved, indent=1))
    return path


def predicted_now(saved: dict) -> list:
    """Today's model's prediction for each saved candidate (None where it cannot profile it)."""
    case = next(c for c in CASES if c.name == saved["case"])
    pf = load_program_file(EXAMPLES / case.file)
    program, sizes = pf.kernels[case.kernel], saved["sizes"]
    model = DeviceModel.for_device(**saved["device"])
    out = []
    for c in saved["candidates"]:
        lowered = Derivation.from_json(json.dumps({"sizes": sizes, "steps": c["derivation"]})).replay(program)
        generated = Candidate(lowered, local_size=c["params"].get(LOCAL_SIZE)).generate(case.kernel, sizes)
        try:
            out.append(predict(profile(generated), model))
        except ValueError:
            out.append(None)
    return out


def rank(path: Path) -> str:
    """One line: the program, its sizes and candidates, then and now correlations, and the model's first pick."""
    saved = json.loads(path.read_text())
    cands = saved["candidates"]
    if not cands:
        return f"{saved['case']:<22}no working candidate was measured"
    now = predicted_now(saved)
    both = [(p, c["time_ms"]) for p, c in zip(now, cands) if p is not None]
    then = spearman([c["predicted_ms"] for c in cands], [c["time_ms"] for c in cands]) if len(cands) > 1 else None
    rho = spearman(*zip(*both)) if len(both) > 1 else None
    fastest = min(range(len(cands)), key=lambda i: cands[i]["time_ms"])
    picked = min((i for i in range(len(cands)) if now[i] is not None), key=lambda i: now[i])
    sizes = ",".join(f"{k}={v}" for k, v in saved["sizes"].items())
    fmt = (lambda x: "  n/a" if x is None else f"{x:+.2f}")
    return (f"{saved['case']:<22}{sizes:<24}{len(cands):>4}{fmt(then):>7}{fmt(rho):>7}"
            f"  pick {cands[picked]['time_ms']:.3g} ms / best {cands[fastest]['time_ms']:.3g} ms"
            f" = {cands[fastest]['time_ms'] / cands[picked]['time_ms']:.2f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_cost_model", description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=("measure", "rank"))
    parser.add_argument("--only", help="comma-separated case names (asum, gemv, matmul 1024x1024x1024, ...)")
    parser.add_argument("--budget", type=float, default=90.0, help="explore seconds per program")
    parser.add_argument("--max-candidates", type=int, default=60)
    parser.add_argument("--scale", type=int, default=4, help="divide each size variable by this")
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
    print(f"{'program':<22}{'sizes':<24}{'n':>4}{'then':>7}{'now':>7}  model's pick / fastest measured")
    for case in cases:
        path = args.out / f"{case.name.replace(' ', '-')}.json"
        if path.is_file():
            print(rank(path), flush=True)


if __name__ == "__main__":
    main()
