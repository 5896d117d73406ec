"""The cost model role of `lift explore` (TVM meta_schedule's `CostModel`): a predicted time per program.

The builder (`lift.explore.builder.Builder`) asks a `CostModel` for each generated program's time; the
explore loop then runs the candidates predicted fastest first within its window. `AnalyticCostModel` is
the analytic model of `lift.explore.cost_model` (memory traffic over bandwidth plus launch costs) for one
device; another model (a learned one) only has to implement `predict`.
"""

from __future__ import annotations

import math
from typing import Optional, Protocol, runtime_checkable

from lift.explore import cost_model, cost_walk
from lift.opencl_gen.kernels import GeneratedProgram


@runtime_checkable
class CostModel(Protocol):
    """Predicts the time of a generated program on the device explored."""

    def predict(self, generated: GeneratedProgram) -> Optional[float]:
        """The predicted time in milliseconds, or None where the model cannot tell."""


class AnalyticCostModel:
    """`cost_model.predict` over `cost_walk.profile` for the device `model` describes; None where the model
    cannot profile the program (a `ValueError`) or gives no finite time."""

    def __init__(self, model: cost_model.DeviceModel):
        self.model = model

    def predict(self, generated: GeneratedProgram) -> Optional[float]:
        try:
            predicted = cost_model.predict(cost_walk.profile(generated), self.model)
        except ValueError:
            return None
        return predicted if math.isfinite(predicted) else None
