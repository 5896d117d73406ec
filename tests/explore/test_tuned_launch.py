"""`lift.compile` with a tuning-database winner launches it at the work-group size it was measured at, where the
device can run that size at the call's sizes, and at the driver's choice otherwise (issue 18 follow-up)."""

import json

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, Map, SizeVar, fun
from lift.explore.candidate import program_key
from lift.explore.log import Record
from lift.explore.tuning_database import TuningDatabase
from lift.opencl_gen import runtime
from lift.rules.default_lowering import default_lowering
from lift.rules.derivation import Derivation
from opencl_device import needs_device

pytestmark = needs_device

N = SizeVar("N")
scale = fun([ArrayType(Float, N)], lambda x: Map(lambda v: v * 3.0)(x))


def _store_winner(root, n: int, local_size):
    """The default lowering's derivation at N=n as the database's winner on this device, measured at `local_size`."""
    derivation = default_lowering(scale, {"N": n})
    device = runtime.device_label(runtime.select_device())
    record = Record(key="winner", device=device, kernel="scale", sizes={"N": n}, status="ok", time_ms=1.0, gbps=1.0,
                    derivation=tuple(json.loads(derivation.to_json())["steps"]), params={"local_size": local_size})
    TuningDatabase(root).append(program_key(scale), record)


@pytest.mark.parametrize("n, local_size, expected", [(4096, 16, (16,)), (4096, 32, (32,)), (4096, None, None),
                                                     (4096, 4096 * 2, None), (1024, 48, None)],
                         ids=["16", "32", "driver", "larger than the global size", "not a divisor"])
def test_the_winner_runs_at_its_work_group_size_where_it_fits(tuning_database, n, local_size, expected):
    _store_winner(tuning_database, n, local_size)
    x = np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32)
    for lowering in (None, "tuned"):
        compiled = lift.compile(scale, lowering=lowering)
        run = compiled.prepare(x)
        (kernel,) = run.plan.kernels
        assert kernel.local_size == expected, (lowering, kernel)
        np.testing.assert_allclose(compiled(x), x * 3.0, rtol=1e-6)


def test_a_derivation_keeps_its_work_group_size_in_json():
    d = Derivation.from_json(json.dumps({"sizes": {"N": 8}, "steps": [], "params": {"local_size": 64}}))
    assert d.local_size == 64 and Derivation.from_json(d.to_json()) == d
    assert Derivation.from_json(json.dumps({"steps": []})).local_size is None
