"""Generated kernels run on the OpenCL CPU device and agree with the reference interpreter."""

import json
import re
import subprocess
import sys

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, Join, MapGlb, MapLcl, MapSeq, MapWrg, SizeVar, Split, ToLocal, fun, interpret
from lift.opencl_gen.compiled import compile
from lift.opencl_gen.kernels import generate
from lift.opencl_gen.manifest import write_cl

from opencl_device import MANIFEST_HOST, needs_device, needs_oclgrind, run_under_oclgrind

# (program file, kernel, list of size bindings); sizes not a multiple of a launch size where the expression allows.
LOWERED = [
    ("scal", "scal_vectorised", [{"N": 1024}, {"N": 8192}]),
    ("scal", "scal_global", [{"N": 1000}, {"N": 4099}]),
    ("asum", "asum_nvidia", [{"N": 262144}, {"N": 3 * 262144}]),
    ("asum", "asum_amd", [{"N": 2048}, {"N": 5 * 2048}]),
    ("asum", "asum_intel", [{"N": 32768}, {"N": 7 * 32768}]),
    ("dot", "dot_cpu", [{"N": 8192 * 8192 // 1024}, {"N": 3 * 8192 * 8}]),
    ("gemv", "gemv_workgroup", [{"M": 8, "N": 64}, {"M": 37, "N": 640}]),
    ("gemv", "gemv_coalesced", [{"M": 5, "N": 128}, {"M": 64, "N": 4096}]),
    ("blackscholes", "blackscholes_global", [{"N": 1000}, {"N": 4096}]),
    ("md", "md_global", [{"P": 100, "K": 8}, {"P": 1024, "K": 32}]),
]


def _cases():
    return [pytest.param(stem, kernel, sizes, id=f"{kernel}-{'-'.join(map(str, sizes.values()))}")
            for stem, kernel, bindings in LOWERED for sizes in bindings]


def _compare(got, want):
    if want.dtype.fields:
        for name in want.dtype.fields:
            np.testing.assert_allclose(got[name], want[name], rtol=2e-4, atol=2e-4)
    else:
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-3)


@needs_device
@pytest.mark.parametrize("stem, kernel, sizes", _cases())
def test_generated_kernel_agrees_with_interpreter(examples, stem, kernel, sizes):
    pf = examples[stem]
    program = pf.kernels[kernel]
    inputs = pf.inputs(kernel, sizes, seed=3)
    want = interpret(program, *inputs, numpy_shapes=True)
    got = compile(program, sizes=sizes, name=kernel)(*inputs)
    assert got.shape == want.shape
    _compare(got, want)


@needs_device
@pytest.mark.parametrize("stem, kernel", [("scal", "scal_global"), ("md", "md_global"), ("asum", "asum_intel")])
def test_symbolic_sizes_become_kernel_arguments(examples, stem, kernel):
    pf = examples[stem]
    program = pf.kernels[kernel]
    sizes = dict(LOWERED[[k for _, k, _ in LOWERED].index(kernel)][2][0])
    compiled = compile(program, name=kernel)
    assert "const int" in compiled.source
    inputs = pf.inputs(kernel, sizes, seed=5)
    _compare(compiled(*inputs), interpret(program, *inputs, numpy_shapes=True))


@needs_device
def test_size_constraint_violation_is_reported_before_launch(examples):
    program = examples["asum"].kernels["asum_intel"]
    with pytest.raises(lift.LiftSizeError, match="multiple of 32768"):
        compile(program)(np.ones(1000, np.float32))


@needs_device
def test_launch_beyond_device_limits_is_rejected(examples):
    N = SizeVar("N")
    idf = examples["asum"].namespace["absf"]
    too_wide = fun([ArrayType(Float, N)], lambda x: (Join() @ MapWrg(MapLcl(idf)) @ Split(1 << 20))(x))
    with pytest.raises(lift.LiftDeviceError, match="exceeds the device's maximum"):
        compile(too_wide)(np.ones(1 << 20, np.float32))


@pytest.mark.parametrize("body, message", [
    (lambda x: (Join() @ MapLcl(MapSeq(lambda v: v)) @ Split(4))(x), "map-local must be inside a map-workgroup"),
    (lambda x: (Join() @ MapWrg(MapWrg(lambda v: v)) @ Split(4))(x), "map-workgroup must be outermost"),
    (lambda x: (Join() @ MapWrg(MapLcl(MapWrg(lambda v: v)) @ Split(2)) @ Split(4))(x),
     "map-workgroup must be outermost"),
    (lambda x: (Join() @ MapGlb(MapSeq(MapGlb(1)(lambda v: v)) @ Split(2)) @ Split(4))(x),
     "map-global must be outermost"),
    (lambda x: (Join() @ MapSeq(ToLocal(MapSeq(lambda v: v))) @ Split(4))(x),
     "local memory exists only inside a map-workgroup"),
    (lambda x: lift.Map(lambda v: v)(x), "is a high-level pattern: lower it first"),
])
def test_mappings_opencl_cannot_run_are_rejected(body, message):
    program = fun([ArrayType(Float, SizeVar("N"))], body)
    with pytest.raises(lift.LiftCodegenError, match=message):
        generate(program)


def test_views_emit_no_copies_and_simplify(examples):
    source = generate(examples["asum"].kernels["asum_intel"], sizes={"N": 1 << 20}).source
    assert re.search(r"vload4\(0, x \+ 32768\*wg_\d+ \+ 4\*i_\d+\)", source), "the loop counter, innermost, last"
    k0 = source.split("kernel void")[1]
    assert "for (int l_" not in k0 and "for (int wg_" not in k0, "trip counts of one are straight-line code"
    assert k0.count("for (") == 1


@needs_device
def test_standalone_cl_file_runs_from_its_manifest_alone(examples, tmp_path):
    program = examples["asum"].kernels["asum_nvidia"]
    g = generate(program, "asum", sizes={"N": 524288})
    cl_path, manifest_path = write_cl(g, tmp_path / "asum.cl")
    x = np.random.default_rng(0).uniform(-1, 1, 524288).astype(np.float32)
    np.savez(tmp_path / "inputs.npz", x=x)
    subprocess.run([sys.executable, str(MANIFEST_HOST), str(cl_path), str(manifest_path), str(tmp_path / "inputs.npz"),
                    str(tmp_path / "out.npz")], capture_output=True, text=True, check=True)
    with np.load(tmp_path / "out.npz") as out:
        assert abs(float(out["out"][0]) - float(np.abs(x).sum(dtype=np.float64))) < 1e-3 * np.abs(x).sum()
    manifest = json.loads(manifest_path.read_text())
    assert manifest["inputs"] == [{"name": "x", "dtype": "float32", "shape": ["524288"]}]
    assert [k["name"] for k in manifest["kernels"]] == ["asum_k0", "asum_k1"]
    assert cl_path.read_text().startswith("/*\n * lift kernel asum")



@needs_oclgrind
@pytest.mark.parametrize("stem, kernel, sizes", [
    ("asum", "asum_nvidia", {"N": 262144}), ("asum", "asum_amd", {"N": 4096}), ("asum", "asum_intel", {"N": 65536}),
    ("gemv", "gemv_coalesced", {"M": 4, "N": 256}), ("scal", "scal_vectorised", {"N": 2048}),
    ("md", "md_global", {"P": 64, "K": 4}), ("blackscholes", "blackscholes_global", {"N": 100}),
    ("dot", "dot_cpu", {"N": 8192 * 2}),
])
def test_kernels_are_race_free_and_in_bounds_under_oclgrind(examples, tmp_path, stem, kernel, sizes):
    """Run each kernel in oclgrind's simulator with its data-race and memory-access checks."""
    pf = examples[stem]
    program = pf.kernels[kernel]
    inputs = pf.inputs(kernel, sizes, seed=1)
    (got,) = run_under_oclgrind(pf.path, kernel, sizes, inputs, tmp_path)
    _compare(got, interpret(program, *inputs, numpy_shapes=True))


@needs_device
def test_temporaries_whose_lifetimes_do_not_overlap_share_a_buffer(examples):
    from lift.opencl_gen.memory import share_buffers

    absf = examples["asum"].namespace["absf"]
    program = fun([ArrayType(Float, SizeVar("N"))],
                  lambda x: (MapGlb(absf) @ MapGlb(absf) @ MapGlb(absf) @ MapGlb(absf))(x))
    g = generate(program, sizes={"N": 1000})
    assert len(g.kernels) == 4 and len(g.temporaries) == 3
    slots = share_buffers(g.kernels, g.temporaries, {"N": 1000})
    assert sorted(slot for slot, _ in slots.values()) == [0, 0, 1]
    x = np.linspace(-1, 1, 1000, dtype=np.float32)
    np.testing.assert_allclose(compile(program, sizes={"N": 1000})(x), np.abs(x))


@needs_device
def test_launch_can_be_overridden(examples):
    from lift.opencl_gen.launch import Launch
    from lift.types.arith import Cst

    program = examples["scal"].kernels["scal_global"]
    x = np.linspace(-1, 1, 1000, dtype=np.float32)
    compiled = compile(program, launch={0: Launch((Cst(96),), (Cst(32),))})
    assert "for (int g_" in compiled.source, "fewer work-items than elements: each one loops"
    np.testing.assert_allclose(compiled(np.float32(3.0), x), 3.0 * x, rtol=1e-6)


@needs_device
def test_generated_for_is_what_a_call_runs_where_source_shows_the_compile_time_sizes():
    from lift.opencl_gen.manifest import manifest
    from userfuns import add
    n = SizeVar("n")
    total = fun([ArrayType(Float, n)], lambda x: (lift.Reduce(add, 0.0) @ lift.Map(lambda v: v * 2.0))(x))
    program, x = lift.compile(total), np.arange(1 << 16, dtype=np.float32) / 1024
    ran = program.generated_for(x)
    assert ran is program.generated({"n": 1 << 16})
    assert manifest(ran)["sizes"] == {"n": 1 << 16} and manifest(program.generated())["sizes"] == {"n": "symbolic"}
    assert len(manifest(ran)["kernels"]) > 1  # lowered for its size: partial sums on many work-items
    np.testing.assert_allclose(program(x), 2 * x.sum(dtype=np.float64), rtol=1e-4)
