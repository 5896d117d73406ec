"""The kernel `lift explore` found for a problem: reused from its output folder, or explored now.

The folder is `<root>/<kernel>` (where `lift explore` writes by default) for the program file's own
sizes, and `<root>/<kernel>-<NAME><VALUE>...` for others. A winner there found on the same device at
the same sizes is reused; otherwise `lift.explore.explore` searches within the budget, resuming from
the folder's log. The winner's program is rebuilt by replaying its derivation
(`<kernel>.derivation.json`, as `lift derive --steps` does) on the high-level program, and checked
by its structural key to be the program that was measured.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from lift.errors import LiftError
from lift.explore import explore
from lift.explore.candidate import program_key
from lift.explore.report import winner_paths
from lift.explore.rewrite_search import RewriteSearch
from lift.ir.nodes import Lambda
from lift.rules import Derivation

from benchmarks.applications import Problem
from benchmarks.measure import Unavailable


@dataclass(frozen=True)
class ExploreSettings:
    """Where explore's output folders live, and the search's budget per problem (0: reuse only)."""

    root: Path = Path("lift-out")
    budget_s: float = 90.0
    max_candidates: Optional[int] = None
    seed: int = 0


@dataclass(frozen=True)
class Winner:
    """The explored program, where it came from, and its expression in the paper's notation."""

    program: Lambda
    folder: Path
    expression: str
    note: str


def out_dir(problem: Problem, root: Path) -> Path:
    """The explore output folder of `problem` (see the module docstring)."""
    name = problem.app.name
    if dict(problem.sizes) == problem.program_file.bind():
        return root / name
    return root / f"{name}-{'-'.join(f'{k}{v}' for k, v in problem.sizes.items())}"


def explored(problem: Problem, device_label: str, device_spec: Optional[str], settings: ExploreSettings,
             log: Callable[[str], None] = print) -> Winner:
    """The winner for `problem` on the device labelled `device_label` (see the module docstring);
    `Unavailable` when there is none."""
    folder = out_dir(problem, settings.root)
    found = _stored(problem, folder, device_label)
    if found is not None:
        log(f"  explored kernel: reused {folder}")
        return _replayed(problem, folder, found, "reused")
    if settings.budget_s <= 0:
        raise Unavailable(f"no explored kernel for this device and size in {folder}, and exploring is off")
    log(f"  exploring {problem.app.name} for up to {settings.budget_s:g} s into {folder} ...")
    name, program = problem.app.name, problem.program_file.kernels[problem.app.name]
    try:
        result = explore(problem.program_file, name, problem.sizes,
                         RewriteSearch(program, problem.sizes, settings.seed), budget_s=settings.budget_s,
                         out_dir=folder, device=device_spec, max_candidates=settings.max_candidates,
                         seed=settings.seed, progress=False)
    except LiftError as e:
        raise Unavailable(f"lift explore found nothing: {e}") from None
    for line in result.summary():
        log(f"    {line}")
    found = _stored(problem, folder, device_label)
    if found is None:
        raise Unavailable(f"lift explore found no working candidate in {settings.budget_s:g} s")
    return _replayed(problem, folder, found,
                     f"explored now: {result.evaluated} candidates evaluated ({result.stopped})")


def _stored(problem: Problem, folder: Path, device_label: str) -> Optional[dict]:
    """The winner's record in `folder` when it was found on this device at these sizes."""
    path = winner_paths(folder, problem.app.name)["derivation"]
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text())
    except ValueError as e:
        raise Unavailable(f"{path} is not JSON ({e}): remove the folder to explore again") from None
    if stored.get("device") != device_label or stored.get("sizes") != dict(problem.sizes):
        return None
    return stored


def _replayed(problem: Problem, folder: Path, stored: dict, how: str) -> Winner:
    """The winner's program, rebuilt by replaying its derivation; its key must be the one measured."""
    path = winner_paths(folder, problem.app.name)["derivation"]
    try:
        derivation = Derivation.from_json(json.dumps(stored))
    except (KeyError, TypeError, ValueError) as e:
        raise Unavailable(f"{path} is not a derivation lift can replay ({type(e).__name__}: {e}); "
                          "remove the folder to explore again") from None
    program = derivation.replay(problem.program_file.kernels[problem.app.name])
    if program_key(program) != stored["key"]:
        raise Unavailable(f"replaying {path} gives another program than the one it measured")
    return Winner(program, folder, stored["expression"],
                  f"{how}; {len(derivation.steps)} rewrite steps; {stored['time_ms']:.4g} ms when explored")
