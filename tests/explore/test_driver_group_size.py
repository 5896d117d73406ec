"""The work-group size the cost model expects a driver to pick where a kernel leaves it (`driver_group_size`),
against the one PoCL's CPU device picks (read back from a kernel launched without a local size): PoCL runs one group
on one core, so a kernel of 24 or 48 work-items there runs on one of two cores (MD's neighbour list in chunks of 512
or 256 atoms), one of 64 or 96 on both."""

import numpy as np
import pytest

from lift.explore.cost_model import DeviceModel
from lift.explore.driver_group_size import driver_group_size
from lift.explore.worker import device_facts
from lift.opencl_gen import runtime
from opencl_device import HAVE_DEVICE, needs_device

_SOURCE = """__kernel void sizes(__global int *out) {
    size_t i = get_global_linear_id();
    out[i] = get_local_size(0) * get_local_size(1);
}"""


def _pocl_cpu():
    if not HAVE_DEVICE:
        return None
    device = runtime.select_device(None)
    facts = device_facts(device)
    return device if facts.kind == "cpu" and "Portable Computing Language" in facts.label else None


@needs_device
@pytest.mark.skipif(_pocl_cpu() is None, reason="the driver's choice is PoCL's (on a CPU)")
@pytest.mark.parametrize("global_sizes", [(16,), (24,), (48,), (56,), (64,), (96,), (192,), (12288,), (4096, 4),
                                          (24, 2), (1024, 1024)])
def test_the_group_size_the_model_expects_is_the_one_pocl_picks(global_sizes):
    import pyopencl as cl

    device = _pocl_cpu()
    facts = device_facts(device)
    model = DeviceModel.for_device(facts.kind, facts.compute_units, 10.0, 0.01, facts.local_mem_bytes,
                                   facts.max_work_group_size, facts.vector_width)
    ctx, queue = runtime.context_and_queue(device)
    program = runtime.build(_SOURCE, device)
    out = np.zeros(int(np.prod(global_sizes)), np.int32)
    buffer = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    cl.Kernel(program, "sizes")(queue, global_sizes, None, buffer)
    cl.enqueue_copy(queue, out, buffer)
    assert set(out) == {driver_group_size(global_sizes, model)}
