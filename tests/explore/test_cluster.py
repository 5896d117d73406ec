"""Exploration on a Ray cluster: a head and a worker node on this machine, one PoCL device actor on each.

A short search of asum at N=4096 shares its candidates between the two actors; the worker node is killed
mid-run, as a host that dies. Every candidate is still measured, once: the search hears of each once, the log
holds each evaluation once (twice for the final round's), none is a crash, and what the dead node held went
back to the queue. Run again on the head alone, the search resumes from its folder: it measures nothing.
"""

from collections import Counter
from pathlib import Path

import pytest

from lift.explore.callbacks import Counts, Measured
from lift.explore.driver import MAX_CANDIDATES
from lift.explore.evaluation import TimingPolicy
from lift.explore.log import Record
from lift.explore.rewrite_search import RewriteSearch
from lift.explore.tuning_database import TuningDatabase
from lift.ir.program_file import load_program_file
from opencl_device import needs_device

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'lift[cluster]')")

from lift.explore.cluster import explore_cluster  # noqa: E402
from lift.explore.local_cluster import LocalCluster  # noqa: E402

pytestmark = needs_device

ASUM = Path(__file__).resolve().parents[2] / "examples" / "asum.py"
SIZES = {"N": 4096}
STEADY = TimingPolicy(min_runs=3, max_runs=10 ** 6, max_s=0.5, rel_iqr=0.0)
"""Every evaluation times for half a second, so that the killed node is still running candidates."""
CANDIDATES = 8


class Heard:
    """A search strategy that notes the candidates it gives and the results it hears."""

    def __init__(self, inner):
        self.inner, self.given, self.heard = inner, {}, Counter()

    def __iter__(self):
        for candidate in self.inner:
            self.given.setdefault(candidate.key, candidate)
            yield candidate

    def observe(self, candidate, time_ms):
        self.heard[candidate.key] += 1
        self.inner.observe(candidate, time_ms)

    def use_device(self, model):
        self.inner.use_device(model)


class KillNode:
    """Kills a node of the cluster after the `after`-th measured candidate."""

    def __init__(self, cluster: LocalCluster, node: int, after: int):
        self.cluster, self.node, self.after, self.killed = cluster, node, after, False

    def __call__(self, counts: Counts, measured: Measured | None) -> None:
        if not self.killed and counts.evaluated >= self.after:
            self.cluster.kill(self.node)
            self.killed = True


def test_a_search_survives_a_dead_node(tmp_path):
    pf = load_program_file(ASUM)
    _, asum = pf.kernel("asum")
    heard = Heard(RewriteSearch(asum, SIZES, 0))

    options = dict(budget_s=120, out_dir=tmp_path / "out", max_candidates=CANDIDATES, timing=STEADY,
                   tuning_database=TuningDatabase(tmp_path / "db"))
    with LocalCluster(workers=1) as cluster:
        assert sum(n["Alive"] for n in ray.nodes()) == 2
        kill = KillNode(cluster, node=1, after=2)
        [result] = explore_cluster(pf, "asum", SIZES, lambda: heard, cluster=cluster.address, **options,
                                   callbacks=(kill,))  # both actors have the same device label: one search
        [again] = explore_cluster(pf, "asum", SIZES, lambda: list(heard.given.values()), cluster=cluster.address,
                                  **options)
    assert kill.killed
    assert result.stopped == MAX_CANDIDATES
    assert len(heard.given) == CANDIDATES and heard.heard == Counter(list(heard.given))
    assert result.requeued >= 1
    assert result.winner is not None
    assert not [r for r in result.ranked if not r.ok]
    lines = Counter(r.key for r in _lines(result.out_dir / "log.jsonl"))
    remeasured = {r.key for r in result.ranked[:result.remeasured]}
    assert {k for k, n in lines.items() if n == 2} == remeasured and max(lines.values()) <= 2
    assert len(lines) == result.evaluated
    assert (again.evaluated, again.skipped, again.stopped) == (0, result.evaluated, MAX_CANDIDATES)


def _lines(path: Path) -> list:
    """Every record of the log, each line one (`ResultLog` keeps the last of each evaluation)."""
    return [Record.from_json(line) for line in path.read_text().splitlines() if line.strip()]
