"""Candidates measured per minute on a Ray cluster of this machine, with one and two device actors.

    python -m benchmarks.bench_cluster [--candidates 24] [--size 4096]

The same candidates of asum (the rewrite search's first ones, each at the driver's work-group size) are
measured by a local `lift explore` (one device worker, no Ray), then on a local Ray cluster of one node (one
PoCL device actor) and of two nodes on this machine (two actors of the same device, sharing one search),
each in a fresh folder, in two settings: as a search meets new candidates (every build compiled, PyOpenCL's
and PoCL's binary caches off; 10 timed runs each), and with the work per candidate made small (binaries
cached by a warm-up run; two timed runs each), where what remains per candidate is the search's own work and
the scheduling: the build task, the round trips through Ray and the scheduler's loop against the local
worker's pipes. The rate counts the candidates measured between the first and the last result (the set-up
— the cluster, the actors, the reference — and the final round left out). The two actors share the
machine's two cores with each other, the builds and the driver, which bounds their speed-up.
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
COLD = {"PYOPENCL_NO_CACHE": "1", "POCL_KERNEL_CACHE": "0"}  # every build compiles, as a new candidate's does
SETTINGS = (("new candidates: builds compiled, 10 runs each", COLD, TimingPolicy(10, 10, 10.0)),
            ("small work: builds cached, 2 runs each", {}, TimingPolicy(2, 2, 10.0)))
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


def run(label: str, search, candidates: list, sizes: dict, folder: Path, timing: TimingPolicy, **where) -> float:
    """Measure `candidates` (locally, or on the cluster `where` names); seconds per candidate."""
    clock = Clock()
    options = dict(budget_s=1800, out_dir=folder / label, max_candidates=len(candidates), timing=timing,
                   bandwidth=BANDWIDTH, work_group_sizes=(None,), tuning_database=TuningDatabase(folder / label / "db"),
                   progress=False,
                   callbacks=(clock,))
    if where:
        from lift.explore.cluster import explore_cluster

        [result] = explore_cluster(search, "asum", sizes, lambda: list(candidates), **where, **options)
    else:
        result = explore(search, "asum", sizes, candidates, **options)
    assert result.evaluated == len(candidates) and all(r.ok for r in result.ranked), (label, result.summary())
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
    pf = load_program_file(ASUM)
    sizes = {"N": args.size}
    candidates = list(itertools.islice(RewriteSearch(pf.kernel("asum")[1], sizes, 0), args.candidates))
    print(f"{len(candidates)} candidates of asum at N={args.size}, each at the driver's work-group size")
    for title, env, timing in SETTINGS:
        print(f"\n{title}")
        os.environ.update(env)
        for name in COLD.keys() - env.keys():
            os.environ.pop(name, None)
        with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
            folder = Path(tmp)
            if not env:
                run("warm-up (not counted)", pf, candidates, sizes, folder, timing)
            local = run("local explore (no Ray)", pf, candidates, sizes, folder, timing)
            per = {}
            for actors in (1, 2):
                started = time.monotonic()
                with LocalCluster(workers=actors - 1) as cluster:
                    up = time.monotonic() - started
                    per[actors] = run(f"cluster, {actors} device actor{'s' if actors > 1 else ''}", pf, candidates,
                                      sizes, folder, timing, cluster=cluster.address)
                print(f"{'':<26} (the {actors}-node cluster took {up:.1f} s to start)")
        print(f"2 actors / 1 actor: {per[1] / per[2]:.2f}x the candidates per minute; 1 actor / local: "
              f"{local / per[1]:.2f}x; time per candidate, 1 actor minus local: {(per[1] - local) * 1e3:+.1f} ms "
              "(below 0: the actor's queue of jobs + 1 overlaps the driver's work with the device's)")


if __name__ == "__main__":
    main()
