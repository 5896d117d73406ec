"""Candidates measured per minute on a Ray cluster of this machine, with one and two device actors.

    python -m benchmarks.bench_cluster [--candidates 24] [--size 4096]

The same candidates of asum (the rewrite search's first ones, each at the driver's work-group size, each
timed over 10 runs, every build compiled: no binary cache) are measured three times, each in a fresh folder: by a local `lift explore` (one device worker, no Ray), on a
local Ray cluster of one node (one PoCL device actor) and of two nodes on this machine (two actors of the
same device, sharing one search). The rate counts the candidates measured between the first and the last
result (the set-up — the cluster, the actors, the reference — and the final round left out). The
scheduling overhead per candidate is what one actor takes per candidate beyond the local worker: the build
task, the round trips through Ray and the scheduler's loop. The second actor shares the machine's cores with
the first, the builds and the driver, so its speed-up is bounded by them, not by the scheduler.
"""

from __future__ import annotations

import argparse
import itertools
import os
import tempfile
import time
from pathlib import Path

from lift.explore.bandwidth import StreamingBandwidth
from lift.explore.driver import explore
from lift.explore.evaluation import TimingPolicy
from lift.explore.rewrite_search import RewriteSearch
from lift.explore.tuning_database import TuningDatabase
from lift.ir.program_file import load_program_file

ASUM = Path(__file__).resolve().parents[1] / "examples" / "asum.py"
TIMING = TimingPolicy(min_runs=10, max_runs=10, max_s=10.0)  # the same work per candidate, however noisy
COLD = {"PYOPENCL_NO_CACHE": "1", "POCL_KERNEL_CACHE": "0"}  # every build compiles, as a new candidate's does
BANDWIDTH = StreamingBandwidth(copy_gbps=10.0, read_gbps=10.0, launch_ms=0.002, nbytes=0)


class Clock:
    """A measure callback noting when each new evaluation was recorded."""

    def __init__(self):
        self.times: list = []

    def __call__(self, counts, measured) -> None:
        if measured is not None and counts.evaluated > len(self.times):
            self.times.append(time.monotonic())

    def per_candidate_s(self) -> float:
        return (self.times[-1] - self.times[0]) / (len(self.times) - 1)


def run(label: str, search, candidates: list, sizes: dict, folder: Path, **where) -> float:
    """Measure `candidates` (locally, or on the cluster `where` names); seconds per candidate."""
    clock = Clock()
    options = dict(budget_s=1800, out_dir=folder / label, max_candidates=len(candidates), timing=TIMING,
                   bandwidth=BANDWIDTH, work_group_sizes=(None,), tuning_database=TuningDatabase(folder / label / "db"),
                   callbacks=(clock,))
    if where:
        from lift.explore.cluster import explore_cluster

        [result] = explore_cluster(search, "asum", sizes, lambda: list(candidates), **where, **options)
    else:
        result = explore(search, "asum", sizes, candidates, **options)
    assert result.evaluated == len(candidates), (label, result.evaluated)
    seconds = clock.per_candidate_s()
    print(f"{label:<26} {60 / seconds:9.1f} candidates/min  {seconds * 1e3:8.1f} ms per candidate")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=24)
    parser.add_argument("--size", type=int, default=4096)
    args = parser.parse_args()
    try:
        from lift.explore.local_cluster import LocalCluster
    except ImportError as e:
        raise SystemExit(f"bench_cluster needs Ray ({e}): pip install 'lift[cluster]'")
    os.environ.update(COLD)
    pf = load_program_file(ASUM)
    sizes = {"N": args.size}
    candidates = list(itertools.islice(RewriteSearch(pf.kernel("asum")[1], sizes, 0), args.candidates))
    print(f"{len(candidates)} candidates of asum at N={args.size}, each at the driver's work-group size")
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        folder = Path(tmp)
        local = run("local explore (no Ray)", pf, candidates, sizes, folder)
        per_actor = {}
        for actors in (1, 2):
            started = time.monotonic()
            with LocalCluster(workers=actors - 1) as cluster:
                up = time.monotonic() - started
                per_actor[actors] = run(f"cluster, {actors} device actor{'s' if actors > 1 else ''}", pf, candidates,
                                        sizes, folder, cluster=cluster.address)
            print(f"{'':<26} (the {actors}-node cluster took {up:.1f} s to start)")
    print(f"2 actors / 1 actor: {per_actor[1] / per_actor[2]:.2f}x the candidates per minute")
    print(f"1 actor / local: {local / per_actor[1]:.2f}x the candidates per minute; scheduling overhead "
          f"{(per_actor[1] - local) * 1e3:+.1f} ms per candidate")


if __name__ == "__main__":
    main()
