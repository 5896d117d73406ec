"""`iterate-host`: an iteration whose step is one kernel compiles to that kernel once, launched `n` times by the
host over two buffers (`lift.opencl_gen.host_loops`); heat-3d and jacobi-1d at odd sizes and step counts on the
device against numpy and the interpreter, from `lift.compile` and from the `.cl` file and its manifest alone."""

import json
import subprocess
import sys

import numpy as np
import pytest

import lift
from lift import (ArrayType, Float, Iterate, IterateHost, Join, Map, MapGlb, MapSeq, Pad, ReduceSeq, SizeVar, Slide,
                  Split, Transpose, fun)
from lift.errors import LiftCodegenError, LiftTypeError
from lift.ir.binding import to_host
from lift.opencl_gen.kernels import generate
from lift.opencl_gen.manifest import write_cl
from lift.opencl_gen.memory import INPUT, OUTPUT, TEMPORARY, Memory
from lift.opencl_gen.program import HostLoop
from lift.types.arith import Cst

from opencl_device import MANIFEST_HOST, needs_device
from userfuns import add, avg3, halve

N = SizeVar("N")
STEPS = (0, 1, 2, 3, 8)
SIZES = {"heat3d": {"O": 5, "M": 7, "N": 17}, "jacobi1d_steps": {"N": 1009}}


def _steps(pf, name: str, steps: int):
    """The example's program of `steps` steps (its step, `Iterate(T, step)(a)`), and its numpy reference for them."""
    program = pf.kernels[name]
    step = program.body.f.f
    reference = pf.namespace["reference"]

    def want(*inputs):
        saved = reference.__globals__["T"]
        reference.__globals__["T"] = steps
        try:
            return reference(*inputs)
        finally:
            reference.__globals__["T"] = saved

    return fun([program.params[0].t], lambda a: Iterate(steps, step)(a)), want


@pytest.mark.parametrize("count", [1, 2, 3, 8])
def test_the_launches_alternate_two_buffers_and_the_last_writes_the_result(count):
    first, out, tmp = (Memory(n, "global", Float, Cst(8), k) for n, k in (("a", INPUT), ("out", OUTPUT),
                                                                           ("tmp", TEMPORARY)))
    src, dst = (Memory(n, "global", Float, Cst(8), TEMPORARY) for n in ("src", "dst"))
    launches = HostLoop(Cst(count), src, dst, first, (out, tmp)).bindings({})
    assert len(launches) == count
    assert launches[0][src] is first and launches[-1][dst] is out
    for before, after in zip(launches, launches[1:]):
        assert after[src] is before[dst]
    assert all(b[src] is not b[dst] and b[dst] is not first for b in launches)


@needs_device
@pytest.mark.parametrize("steps", STEPS)
@pytest.mark.parametrize("name", sorted(SIZES))
def test_a_stencil_over_steps_is_one_kernel_launched_per_step_or_a_copy_for_none(examples, name, steps):
    pf = examples[name]
    program, reference = _steps(pf, name, steps)
    inputs = pf.inputs(name, SIZES[name], seed=steps)
    compiled = lift.compile(program, lowering="default")
    g = compiled.generated_for(*inputs)
    assert g.source.count("kernel void") == 1
    (kernel,) = g.kernels
    if steps:
        assert lift.paper(g.typed.expr).startswith(f"iterate-host-{steps}(")
        assert len(kernel.launches(SIZES[name])) == steps
    else:
        assert "iterate" not in lift.paper(g.typed.expr) and "(id)" in lift.paper(g.typed.expr)
    got = compiled(*inputs)
    np.testing.assert_allclose(got, np.reshape(reference(*inputs), got.shape), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got, lift.interpret(program, *inputs, numpy_shapes=True), rtol=1e-4, atol=1e-5)


@needs_device
@pytest.mark.parametrize("name, steps", [("jacobi1d_steps", 3), ("jacobi1d_steps", 8), ("heat3d", 2)])
def test_the_manifest_says_how_to_launch_a_host_loop(examples, tmp_path, name, steps):
    pf = examples[name]
    program, reference = _steps(pf, name, steps)
    sizes = SIZES[name]
    inputs = pf.inputs(name, sizes, seed=1)
    lowered = lift.compile(program, lowering="default").lowered(sizes)
    cl_path, manifest_path = write_cl(generate(lowered, name, sizes), tmp_path / f"{name}.cl")
    manifest = json.loads(manifest_path.read_text())
    (kernel,) = manifest["kernels"]
    loop = kernel["host_loop"]
    assert loop["count"] == str(steps) and loop["first"] == "a" and loop["buffers"][0] == "out"
    assert {loop["reads"], loop["writes"]} <= set(kernel["args"])
    assert [t["name"] for t in manifest["temporaries"]] == ([loop["buffers"][1]] if steps > 1 else [])
    assert f"launched {steps} times" in cl_path.read_text().split("*/")[0]
    np.savez(tmp_path / "in.npz", **{p.name: np.asarray(to_host(v, p.t, p.name))
                                     for v, p in zip(inputs, program.params)})
    subprocess.run([sys.executable, str(MANIFEST_HOST), cl_path, manifest_path, tmp_path / "in.npz",
                    tmp_path / "out.npz"], capture_output=True, text=True, check=True, timeout=300)
    with np.load(tmp_path / "out.npz") as out:
        got = out["out"]
    np.testing.assert_allclose(got, np.reshape(reference(*inputs), got.shape), rtol=1e-4, atol=1e-5)


def sum3(b):
    return Join()(MapGlb(ReduceSeq(add, 0.0))(Slide(3, 1)(Pad(1, 1, "clamp")(b))))


def test_a_host_loop_cannot_write_over_its_input():
    program = fun([ArrayType(Float, N)], lambda a: IterateHost(3, sum3)(a))
    with pytest.raises(LiftCodegenError, match="iterate-host-3.* other than the input"):
        generate(program, "p", in_place="a")


def test_a_host_loop_of_two_kernels_is_one_clear_error():
    program = fun([ArrayType(Float, N)], lambda a: IterateHost(2, lambda b: sum3(sum3(b)))(a))
    with pytest.raises(LiftCodegenError, match="iterate-host-2.* the step must be one kernel"):
        generate(program, "p")


def test_a_host_loop_inside_a_map_is_one_clear_error():
    program = fun([ArrayType(ArrayType(Float, N), N)], lambda a: MapGlb(IterateHost(2, MapSeq(lambda x: add(x, x))))(a))
    with pytest.raises(LiftCodegenError, match="iterate-host-2.* a whole kernel; it cannot be inside map-global"):
        generate(program, "p")


def test_a_host_loop_keeps_its_array_type():
    with pytest.raises(LiftTypeError, match="iterate-host-2.* keeps its array's type"):
        fun([ArrayType(Float, N)],
            lambda a: IterateHost(2, lambda b: Join()(MapGlb(ReduceSeq(add, 0.0))(Split(2)(b))))(a))


def _columns_step(b):
    """A stencil down the columns of a square grid: the transposed grid's rows averaged."""
    return Map(lambda r: Map(avg3)(Slide(3, 1)(Pad(1, 1, "clamp")(r))))(Transpose()(b))


SQUARE = ArrayType(ArrayType(Float, N), N)
VIEWED = {"input transposed": (fun([SQUARE], lambda a: Iterate(3, _columns_step)(Transpose()(a))), False),
          "result transposed": (fun([SQUARE], lambda a: Transpose()(Iterate(3, _columns_step)(a))), False),
          "whole buffers": (fun([SQUARE], lambda a: Iterate(3, _columns_step)(a)), True),
          "a map of the grid itself": (fun([SQUARE], lambda a: Iterate(3, lambda b: Map(Map(halve))(b))(a)), False)}


@pytest.mark.parametrize("case", sorted(VIEWED))
def test_a_host_loop_reads_and_writes_whole_buffers_and_a_map_of_its_input_is_fused_unrolled(device, case):
    program, hosted = VIEWED[case]
    x = np.random.default_rng(2).uniform(-1, 1, (7, 7)).astype(np.float32)
    compiled = lift.compile(program, device, lowering="default")
    assert ("iterate-host" in lift.paper(compiled.lowered({"N": 7}))) == hosted
    np.testing.assert_allclose(compiled(x), lift.interpret(program, x, numpy_shapes=True), rtol=1e-5, atol=1e-6)
