"""The builder role of `lift explore` (TVM meta_schedule's `Builder`): a candidate's code, plan and build.

`Builder.prepare` checks that a candidate takes the explored program's parameters, generates its OpenCL
code and run plan, and predicts its time through a `CostModel` (`lift.explore.prediction`); a failure to
generate comes back as a `Prepared` with its `failure`, for the loop to log. `Builder.build` compiles a
prepared candidate on the `BuildPool`'s workers (`lift.explore.worker`), ahead of the device worker. The
builder logs nothing and keeps no state of the search: the loop (`lift.explore.driver`) does both.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import Mapping, Optional

from lift.errors import LiftError
from lift.explore.candidate import Candidate
from lift.explore.evaluation import GENERATE, Outcome
from lift.explore.prediction import CostModel
from lift.explore.worker import BuildPool
from lift.ir.typecheck import infer
from lift.opencl_gen.fp_contract import with_fp_contract
from lift.opencl_gen.kernels import GeneratedProgram
from lift.opencl_gen.runner import RunPlan, make_plan


@dataclass
class Prepared:
    """A candidate with its generated code, run plan and predicted time (None where generation failed, and
    then `failure` says why). `role` is the log's role (a candidate or the baseline); `origin` is the key of
    the search's candidate that `candidate` evaluates at one work-group size."""

    candidate: Candidate
    role: str
    generated: Optional[GeneratedProgram] = None
    plan: Optional[RunPlan] = None
    predicted_ms: Optional[float] = None
    origin: Optional[str] = None
    failure: Optional[Outcome] = None


class Builder:
    """Generates, plans, predicts and compiles candidates of kernel `kernel` at `sizes`, whose parameters
    have the types `param_types` (those of the explored program); with `fp_contract` False, the code forbids
    the OpenCL compiler to contract `a*b + c` (`lift.opencl_gen.fp_contract`)."""

    def __init__(self, kernel: str, sizes: Mapping[str, int], param_types: tuple, builds: BuildPool,
                 cost: CostModel, fp_contract: bool = True):
        self.kernel, self.sizes, self.param_types, self.builds, self.cost = kernel, sizes, param_types, builds, cost
        self.fp_contract = fp_contract

    def prepare(self, candidate: Candidate, role: str, origin: Optional[str] = None) -> Prepared:
        """The candidate's code, plan and predicted time, or its `failure` to generate (a `GENERATE` outcome:
        the reason of a `LiftError`, or an internal error)."""
        try:
            types = infer(candidate.program).param_types
            if types != self.param_types:
                raise LiftError(f"the candidate takes ({', '.join(map(str, types))}), the program "
                                f"({', '.join(map(str, self.param_types))})")
            generated = with_fp_contract(candidate.generate(self.kernel, self.sizes), self.fp_contract)
            plan = make_plan(generated, self.sizes)
        except LiftError as e:
            return Prepared(candidate, role, origin=origin, failure=Outcome(GENERATE, str(e)))
        except Exception as e:
            return Prepared(candidate, role, origin=origin,
                            failure=Outcome(GENERATE, f"internal error: {type(e).__name__}: {e}"))
        return Prepared(candidate, role, generated, plan, self.cost.predict(generated), origin)

    def build(self, item: Prepared, timeout_s: float) -> Future:
        """A future `Outcome` of compiling `item` on a build worker within `timeout_s` (`BuildPool.submit`)."""
        return self.builds.submit(item.plan.source, timeout_s)
