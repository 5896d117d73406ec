"""A pipeline of named passes, each a pure function from one compilation state to the next (Futhark's
`Pipeline`, Lift's `OpenCLGenerator`).

In debug mode a validator checks the state after every pass, so that a pass that breaks an invariant
is named where it does, not where a later pass trips over it. Debug mode is the `debug` argument, or
else the environment variable `LIFT_DEBUG_PASSES` (set, and not `0`); the tests run in debug mode.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Optional

from lift.errors import LiftCodegenError


@dataclass(frozen=True)
class Pass:
    """A named step: `run(state) -> state`."""

    name: str
    run: Callable


@dataclass(frozen=True)
class Pipeline:
    """Passes run in order; `validate(state, pass_name)` raises `LiftCodegenError` where a state is invalid."""

    passes: tuple
    validate: Callable

    @property
    def names(self) -> tuple:
        return tuple(p.name for p in self.passes)

    def run(self, state, debug: Optional[bool] = None):
        if debug is None:
            debug = os.environ.get("LIFT_DEBUG_PASSES", "0") not in ("", "0")
        for p in self.passes:
            state = p.run(state)
            if debug:
                try:
                    self.validate(state, p.name)
                except LiftCodegenError as e:
                    raise LiftCodegenError(f"invalid program after pass {p.name}: {e}") from e
        return state
