"""`lift.arrays.tune`: `lift explore` on the program an evaluation would run; its winner serves the next ones.

Evaluations compile with `lift.compile`, which lowers a program by the tuning database's winner for it on
the device where one is known (`lift.explore.tuned_compile`), else by the default lowering. `tune(*arrays)`
explores the program that evaluating `arrays` would run now (the same structure, on their device, with
their values as inputs, each candidate checked against the interpreter) within `budget`: every candidate
measured goes to the tuning database (`lift.explore.tuning_database`, under the program's structural
hash), and the program compiled for the structure is dropped, so that the next evaluation of an equal
graph, over these arrays or others of the same shapes, compiles again with the winner. Nothing is
evaluated (but the arrays that views read, as evaluation would first: `lift.arrays.evaluation`). The
search's workers are spawned processes: a script calls `tune` under `if __name__ == "__main__":`.
"""

from __future__ import annotations

import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import Optional

from lift.arrays.config import config
from lift.arrays.evaluation import forget, plan
from lift.errors import LiftError
from lift.explore.driver import ExploreResult, explore, parse_budget
from lift.explore.search_strategy import search_for
from lift.explore.tuning_database import TuningDatabase
from lift.ir.program_file import ProgramFile
from lift.opencl_gen import runtime

KERNEL = "lift_arrays"


def tune(*arrays, budget="60s", max_candidates: Optional[int] = None, out_dir=None, seed: int = 0,
         progress: bool = False) -> ExploreResult:
    """Explore the device program that evaluating `arrays` would run (module docstring) for `budget` (seconds,
    or a duration such as "90s", "10m"), at most `max_candidates` candidates; the search's folder is `out_dir`
    (a temporary one by default: the tuning database keeps what matters). Returns `lift explore`'s result."""
    if not TuningDatabase().enabled:
        raise LiftError("lift.arrays.tune stores its winner in the tuning database, which LIFT_TUNING_DB=off "
                        "turns off")
    with config(placement="device"):
        p = plan(*arrays)
    if not p.targets:
        raise LiftError("lift.arrays.tune: nothing to tune, every array given is evaluated")
    inputs = [(n.value if n.value is not None else n.on_device.get()).reshape(n.shape or (1,))
              for n in p.structure.inputs]
    budget_s = parse_budget(budget)
    with tempfile.TemporaryDirectory(prefix="lift-tune-") if out_dir is None else nullcontext(out_dir) as folder:
        pf = ProgramFile(Path(folder) / f"{KERNEL}.py", {KERNEL: p.program}, {},
                         lambda name, sizes, rng: inputs)
        result = explore(pf, KERNEL, {}, search_for(p.program, {}, seed), budget_s=budget_s, out_dir=folder,
                         device=runtime.device_spec(p.device), max_candidates=max_candidates, seed=seed,
                         progress=progress)
    forget(p.structure)
    return result
