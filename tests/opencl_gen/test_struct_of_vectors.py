"""N-body computed `n` bodies per work-item, a body per lane (`lift.rules.struct_of_vectors`: struct-of-arrays,
hoist-invariant, vectorize-zip-tuple-map): the kernels of 4, 8 and 16 lanes compute numpy's step, at sizes the
width divides and at sizes it does not (the lane arrays padded), and run clean under oclgrind."""

from pathlib import Path

import numpy as np
import pytest

import lift
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.strategy import argument, body, derive
from lift.rules.struct_of_vectors import struct_of_vectors

from numpy_references import nbody as nbody_reference
from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _lanes(program, n, width):
    strategy = body(argument(0, struct_of_vectors(width, n % width != 0))) >> lower_rest >> clean_up
    return derive(strategy, program, {"N": n}).replay(program)


@needs_device
@pytest.mark.parametrize("n, width", [(256, 8), (250, 8), (256, 4), (250, 16)])
def test_nbody_on_lanes_computes_numpy_s_step(examples, n, width):
    pf = examples["nbody"]
    lowered = _lanes(pf.kernels["nbody"], n, width)
    assert f"vectorize-{width}(accelerate_soa)" in lift.paper(lowered)
    inputs = pf.inputs("nbody", {"N": n}, seed=3)
    got = lift.compile(lowered, sizes={"N": n})(*inputs)
    new_pos, new_vel = nbody_reference(*inputs)
    np.testing.assert_allclose(got["_0"], new_pos, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["_1"], new_vel, rtol=1e-4, atol=1e-5)
    want = lift.interpret(pf.kernels["nbody"], *inputs)
    for k in ("_0", "_1"):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6)


@needs_oclgrind
def test_nbody_on_lanes_is_race_free_and_in_bounds_under_oclgrind(examples, tmp_path):
    """20 bodies on 8 lanes: 3 work-items, the last one's 4 padded lanes reading copies of the last body. Built
    unoptimised: the kernel building the float4s back reads lane `i % 8` of vector `i / 8`, where LLVM's `freeze`
    stops oclgrind's uninitialised-memory plugin (`run_under_oclgrind`)."""
    program = tmp_path / "nbody_lanes.py"
    program.write_text(
        "from lift.ir.program_file import load_program_file\n"
        "from lift.rules.default_lowering import clean_up, lower_rest\n"
        "from lift.rules.strategy import argument, body, derive\n"
        "from lift.rules.struct_of_vectors import struct_of_vectors\n"
        f"_high = load_program_file({str(EXAMPLES / 'nbody.py')!r}).kernels['nbody']\n"
        "SIZES = {'N': 20}\n"
        "nbody_lanes = derive(body(argument(0, struct_of_vectors(8, True))) >> lower_rest >> clean_up, _high,\n"
        "                     SIZES).replay(_high)\n")
    inputs = examples["nbody"].inputs("nbody", {"N": 20}, seed=4)
    (got,) = run_under_oclgrind(program, "nbody_lanes", {"N": 20}, inputs, tmp_path, unoptimised=True)
    new_pos, new_vel = nbody_reference(*inputs)
    np.testing.assert_allclose(got["_0"], new_pos, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["_1"], new_vel, rtol=1e-4, atol=1e-5)
