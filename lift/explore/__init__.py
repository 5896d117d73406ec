"""`lift explore`: evaluate candidate lowerings of a program on a device and keep the fastest.

The rewrite search proposes `Candidate`s; `explore` generates, builds, runs, checks and times each
one in isolated worker processes within a time budget, logs every result as it comes (a re-run
resumes), orders the candidates by an analytic cost model, and writes out the winner.

- `candidate`: candidates (a program, and the work-group size of its driver-sized kernels) and their stable keys;
- `plan`: what a worker needs to run a generated program;
- `evaluation`: one evaluation on the device, the output check, adaptive timing, failure classes;
- `worker`: the worker processes (device and builds), killed and restarted on crashes and hangs;
- `log`: the JSON-lines log;
- `cost_model`: predicted times, and Spearman's rank correlation;
- `bandwidth`: the device's streaming bandwidth;
- `driver`: the explore loop, split along TVM meta_schedule's roles:
  `search_strategy` (what proposes candidates: `SearchStrategy`), `builder` (code, plan, build: `Builder`),
  `prediction` (the cost model's role: `CostModel`), `callbacks` (reactions to results: `MeasureCallback`),
  `database` (the results so far: `Database`, which `log.ResultLog` implements);
- `progress`, `report`: the live progress line, the ranking table, the winner's files, the plot;
- `problem`: the program explored, its inputs and reference;
- `cluster`: the search across the devices and hosts of a Ray cluster (`lift explore --cluster`), and
  `local_cluster`: such a cluster on this machine (tests, benchmark).
"""

from lift.explore.bandwidth import StreamingBandwidth
from lift.explore.candidate import Candidate
from lift.explore.driver import ExploreError, ExploreResult, explore, parse_budget
from lift.explore.evaluation import TimingPolicy

__all__ = ["Candidate", "ExploreError", "ExploreResult", "StreamingBandwidth", "TimingPolicy", "explore",
           "parse_budget"]
