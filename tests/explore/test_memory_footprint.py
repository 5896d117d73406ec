"""Sizes whose arrays outgrow the host's or the device's memory are refused before anything is allocated, with
one error naming the arrays, their bytes and the limit: `lift explore` (inputs and reference on the host,
inputs on the device) and `lift.compile` (inputs, outputs and temporaries on the device)."""

from types import SimpleNamespace

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, MapGlb, SizeVar, Zip, fun
from lift.errors import LiftDeviceError, LiftMemoryError
from lift.explore import problem as problem_module
from lift.explore.evaluation import DeviceSession, TimingPolicy
from lift.explore.problem import Problem
from lift.ir.footprint import available_host_bytes, check_fits
from lift.opencl_gen.kernels import generate
from lift.opencl_gen.runner import check_device, make_plan
from lift.opencl_gen.runtime import select_device

from opencl_device import needs_device
from userfuns import add

N = SizeVar("N")
GIB = 2**30


ADD = fun([ArrayType(Float, N), ArrayType(Float, N)], lambda a, b: MapGlb(add)(Zip(a, b)))


def test_the_host_memory_is_known():
    assert available_host_bytes() > 0


def test_an_explored_problem_beyond_the_hosts_memory_is_refused_before_its_inputs_exist(examples, monkeypatch):
    monkeypatch.setattr(problem_module, "available_host_bytes", lambda: GIB)
    monkeypatch.setattr(examples["jacobi"], "inputs", lambda *a: pytest.fail("the inputs were generated"))
    with pytest.raises(LiftMemoryError) as e:
        Problem.prepare(examples["jacobi"], "jacobi2d", {"N": 4 << 20}, seed=0)
    assert str(e.value) == ("the arrays a (32.00 GiB), k (36 bytes), reference (32.00 GiB) need 2 x 64.00 GiB (the "
                            "explorer and its device worker each hold them), more than the host's available memory "
                            "(1.00 GiB): choose smaller sizes")


def test_a_problem_within_the_hosts_memory_is_prepared(examples, monkeypatch):
    monkeypatch.setattr(problem_module, "available_host_bytes", lambda: 2 * (8 * 4 + 36 + 8 * 4))
    problem = Problem.prepare(examples["jacobi"], "jacobi2d", {"M": 2, "N": 4}, seed=0)
    assert problem.reference.shape == (2, 4)


def test_an_unknown_limit_refuses_nothing():
    check_fits([("a", 10 * GIB)], None, "a memory")


def test_a_plan_beyond_the_devices_global_memory_is_refused():
    """Each array fits in one allocation, the three together not in the global memory."""
    sizes = {"N": GIB // 4}
    plan = make_plan(generate(ADD, "add", sizes), sizes)
    device = SimpleNamespace(max_mem_alloc_size=GIB, global_mem_size=2 * GIB, max_work_group_size=1024,
                             max_work_item_sizes=(1024, 1024, 1024), local_mem_size=1 << 16)
    with pytest.raises(LiftDeviceError, match=r"^the arrays .*\(1.00 GiB\), .*\(1.00 GiB\), .*\(1.00 GiB\) need "
                                              r"3.00 GiB, more than the device's global memory, "
                                              r"CL_DEVICE_GLOBAL_MEM_SIZE \(2.00 GiB\)"):
        check_device(plan, device)
    check_device(plan, SimpleNamespace(**{**vars(device), "global_mem_size": 3 * GIB}))


@needs_device
def test_lift_compile_refuses_arrays_beyond_the_devices_global_memory():
    device = select_device()
    n = device.max_mem_alloc_size // 4
    if 3 * 4 * n <= device.global_mem_size:
        pytest.skip("three of the device's largest allocations fit in its global memory")
    zeros = np.broadcast_to(np.float32(0), (n,))  # no memory behind it: the shape is what is checked
    with pytest.raises(LiftDeviceError, match="CL_DEVICE_GLOBAL_MEM_SIZE"):
        lift.compile(ADD)(zeros, zeros)


def test_the_explorers_device_session_refuses_inputs_beyond_the_devices_global_memory():
    limited = SimpleNamespace(global_mem_size=1 << 10, max_mem_alloc_size=GIB)
    with pytest.raises(LiftDeviceError, match=r"the arrays input 0 \(1024 bytes\), input 1 \(1024 bytes\) need "
                                              r"2048 bytes, more than the device's global memory"):
        DeviceSession(limited, [np.ones(256, np.float32)] * 2, None, TimingPolicy())
