"""Generated kernels at sizes no chunk divides (issue 17, item 2): padded reductions (`lift.rules.padding`) run
on the device and agree with numpy and the interpreter, for kernels generated at concrete and at symbolic
sizes; oclgrind finds nothing in one; an array above the device's largest allocation is refused first."""

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, MapGlb, Pad, SizeVar, fun, interpret, paper, userfun
from lift.explore.evaluation import LAUNCH, DeviceSession, TimingPolicy
from lift.explore.search_moves import map_moves, reduction_moves
from lift.ir import patterns as P
from lift.ir.program_file import load_program_file
from lift.opencl_gen.c_ast import assuming
from lift.opencl_gen.kernels import generate
from lift.opencl_gen.launch import MAX_PRIVATE_GROUP_BYTES, private_group
from lift.opencl_gen.runner import make_plan
from lift.opencl_gen.runtime import select_device
from lift.rules import RewriteEngine
from lift.rules.default_lowering import clean_up, lower, lower_rest
from lift.rules.strategy import Focus, is_call, outermost

from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind

SIZES = (1000, 1021, 4097, 65537)
FAMILIES = ("vectorize", "chunks-global", "chunks-workgroup", "lanes-global", "local-tree")


@userfun
def copy(x: Float) -> Float:
    return x


def _inputs(n: int, k: int) -> list:
    rng = np.random.default_rng(n + k)
    return [rng.uniform(-1.0, 1.0, n).astype(np.float32) for _ in range(k)]


def _padded_moves(n: int, zipped: bool) -> dict:
    """The first padded move of each family the search proposes at a reduction over `n` elements."""
    moves = {}
    for name, params, strategy in reduction_moves(n, False, True, zipped):
        if params.get("padded") and name not in moves:
            moves[name] = strategy
    return moves


def _lowered(program, strategy, sizes):
    focus = (outermost(is_call(P.Reduce), strategy) >> lower_rest >> clean_up)(Focus(program, RewriteEngine(
        sizes=sizes)))
    return None if focus is None else focus.program


@needs_device
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("stem", ("asum", "dot"))
def test_padded_moves_run_and_agree_with_numpy(examples, stem, n):
    program = examples[stem].kernels[stem]
    inputs = _inputs(n, 2 if stem == "dot" else 1)
    want = [np.abs(inputs[0]).sum(dtype=np.float64)] if stem == "asum" else \
        [np.dot(inputs[0].astype(np.float64), inputs[1])]
    ran = set()
    for name, strategy in _padded_moves(n, stem == "dot").items():
        lowered = _lowered(program, strategy, {"N": n})
        if lowered is None:
            continue
        assert "pad-to-multiple" in paper(lowered)
        got = lift.compile(lowered, sizes={"N": n})(*inputs)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)
        np.testing.assert_allclose(got, interpret(lowered, *inputs), rtol=1e-4, atol=1e-4, err_msg=name)
        ran.add(name)
    assert {"chunks-global", "chunks-workgroup"} | ({"vectorize"} if n % 4 else set()) <= ran
    if n > 8 * 4096 and stem == "asum":  # the float4 lanes vectorise a map over one array
        assert {"lanes-global", "local-tree"} <= ran


@needs_device
@pytest.mark.parametrize("n", SIZES)
def test_padded_map_moves_run_and_agree_with_numpy(examples, n):
    program = examples["scal"].kernels["scal"]
    (x,) = _inputs(n, 1)
    ran = set()
    for name, params, strategy in map_moves(n, True):
        if not params.get("padded") or name in ran:
            continue
        focus = (outermost(is_call(P.Map), strategy) >> lower_rest >> clean_up)(Focus(program, RewriteEngine(
            sizes={"N": n})))
        assert "take-(N)" in paper(focus.program)
        got = lift.compile(focus.program, sizes={"N": n})(2.5, x)
        assert got.shape == (n,)
        np.testing.assert_allclose(got, 2.5 * x, rtol=1e-6, err_msg=name)
        ran.add(name)
    always = {"chunks-global", "workgroup", "vector-workgroup", "vector-chunks-global"}
    assert always | ({"global"} if n % 64 else set()) | ({"vector-global"} if n % 256 else set()) == ran


PADDED_SCAL = """
from lift import (ArrayType, AsScalar, AsVector, Float, Join, MapLcl, MapWrg, PadToMultiple, SizeVar, Split, Take,
                  Vectorize, fun, userfun)


@userfun
def mult(x: Float, y: Float) -> Float:
    return x * y


N = SizeVar("N")
SIZES = {"N": 1021}
scal = fun([Float, ArrayType(Float, N)], lambda a, x: (
    Take(N) @ Join() @ MapWrg(AsScalar() @ MapLcl(lambda xi: Vectorize(4, mult)(a, xi)) @ AsVector(4)) @ Split(32)
    @ PadToMultiple(32, 0.0))(x))
"""


@needs_oclgrind
def test_a_padded_vectorised_map_is_in_bounds_under_oclgrind(examples, tmp_path):
    strategy = next(s for name, params, s in map_moves(1021, True)
                    if name == "vector-workgroup" and params["chunk"] == 32)
    derived = (outermost(is_call(P.Map), strategy) >> lower_rest >> clean_up)(Focus(
        examples["scal"].kernels["scal"], RewriteEngine(sizes={"N": 1021}))).program
    path = tmp_path / "padded_scal.py"
    path.write_text(PADDED_SCAL)
    assert paper(load_program_file(path).kernels["scal"]) == paper(derived)
    (x,) = _inputs(1021, 1)
    (got,) = run_under_oclgrind(path, "scal", {"N": 1021}, [np.float32(2.5), x], tmp_path)
    np.testing.assert_allclose(got, 2.5 * x, rtol=1e-6)


@needs_device
def test_a_kernel_generated_for_a_symbolic_size_runs_at_every_size(examples):
    program = examples["asum"].kernels["asum"]
    lowered = _lowered(program, _padded_moves(65537, False)["chunks-global"], {})
    assert "pad-to-multiple" in paper(lowered)
    compiled = lift.compile(lowered)
    for n in SIZES + (4096,):
        (x,) = _inputs(n, 1)
        np.testing.assert_allclose(compiled(x), [np.abs(x).sum(dtype=np.float64)], rtol=1e-4)


@needs_device
def test_the_default_lowering_of_asum_at_a_prime_size_is_parallel(examples):
    n = 16_777_213
    compiled = lift.compile(examples["asum"].kernels["asum"])
    (x,) = _inputs(n, 1)
    np.testing.assert_allclose(compiled(x), [np.abs(x).sum(dtype=np.float64)], rtol=1e-4)
    generated = compiled.generated({"N": n})
    assert len(generated.kernels) >= 2 and generated.kernels[0].launch.evaluate({"N": n})[0] == (4096,)
    assert "map-global" in paper(compiled.lowered({"N": n}))
    assert "pad-to-multiple-4096(0.0)" in paper(compiled.lowered({"N": n}))


@needs_oclgrind
def test_a_padded_reduction_is_in_bounds_under_oclgrind(examples, tmp_path):
    path = examples["dot"].path
    x, y = _inputs(1021, 2)
    (got,) = run_under_oclgrind(path, "dot", {"N": 1021}, [x, y], tmp_path)
    np.testing.assert_allclose(got, [np.dot(x.astype(np.float64), y)], rtol=1e-4)


N = SizeVar("N")


def _too_big(limit: int):
    """A program of 16 input floats whose output is one float more than `limit` bytes hold (and its byte count)."""
    right = limit // 4 - 16 + 1
    return fun([ArrayType(Float, N)], lambda x: MapGlb(copy)(Pad(0, right, 0.0)(x))), 4 * (16 + right)


@needs_device
def test_an_array_above_the_largest_allocation_is_refused_before_allocating():
    limit = select_device().max_mem_alloc_size
    program, nbytes = _too_big(limit)
    with pytest.raises(lift.LiftDeviceError, match=rf"the array out needs {nbytes} bytes .* "
                                                   rf"CL_DEVICE_MAX_MEM_ALLOC_SIZE = {limit} bytes"):
        lift.compile(program)(np.ones(16, np.float32))


@needs_device
def test_explore_refuses_an_array_above_the_largest_allocation():
    device = select_device()
    program, _ = _too_big(device.max_mem_alloc_size)
    plan = make_plan(generate(program, "too_big", {"N": 16}), {"N": 16})
    session = DeviceSession(device, [np.ones(16, np.float32)], np.zeros(1, np.float32), TimingPolicy())
    outcome = session.evaluate(plan)
    assert outcome.status == LAUNCH and "CL_DEVICE_MAX_MEM_ALLOC_SIZE" in outcome.reason


def test_under_the_guard_of_a_padded_vector_write_the_read_is_one_vector_load(examples):
    """The write of a whole vector is guarded by the test of its lanes, which is the padded read's: there the
    read is one plain `vload4`, no conditional (the tail's lanes are written one by one)."""
    scal = examples["scal"].kernels["scal"]
    source = generate(lower(scal, {"N": 1021}), "scal", {"N": 1021}).source
    (whole,) = [line.strip() for line in source.splitlines() if line.strip().startswith("vstore4(")]
    assert whole == "vstore4(mult_v4((float4)(a), (vload4(0, x + 4*g_0))), 0, out + 4*g_0);"
    assert source.count("out[4*g_0 + 3] = ") == 1


def test_assuming_a_condition_drops_the_conditionals_on_it():
    c = "(i < n) && (i + 3 < n)"
    assert assuming(c, f"f((({c}) ? vload4(0, x + i) : (float4)(((i < n) ? x[i] : 0.0f), 0.0f)), 2)") == \
        "f((vload4(0, x + i)), 2)"
    assert assuming(c, f"g((({c}) ? a[(i)] : b), (({c}) ? c[i] : d))") == "g((a[(i)]), (c[i]))"
    assert assuming("j < n", f"((({c}) ? v : w))") == f"((({c}) ? v : w))"


def test_a_group_the_driver_picks_holds_at_most_a_bound_of_private_memory():
    """`private_group`: the driver's choice where every work-item together fits `MAX_PRIVATE_GROUP_BYTES`, else
    the largest group along dimension 0 dividing its global size that fits."""
    assert private_group((4096,), 1024) is None and private_group((64, 64), 1024) is None
    assert private_group((4001,), 4004) == (1,)  # a prime: no group of more than one divides it
    assert private_group((4000,), 4004) == (1000,) and private_group((4000, 3), 4004) == (1000, 1)
    assert private_group((8,), MAX_PRIVATE_GROUP_BYTES * 2) == (1,)


@needs_device
def test_rows_in_private_memory_over_a_prime_number_of_rows(examples):
    """lse_outer keeps each row of 1001 floats in private memory; over 4001 rows (a prime) PoCL picked one group
    of all of them and crashed. The launch now names a group within `MAX_PRIVATE_GROUP_BYTES`."""
    sizes = {"M": 4001, "N": 1001}
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-1, 1, sizes["M"]).astype(np.float32), rng.uniform(-1, 1, sizes["N"]).astype(np.float32)
    got = np.asarray(lift.compile(examples["lse_outer"].kernels["lse_outer"], sizes=sizes)(x, y))
    v = np.outer(x, y).astype(np.float64)
    top = v.max(axis=1)
    np.testing.assert_allclose(got.ravel(), np.log(np.exp(v - top[:, None]).sum(axis=1)) + top, rtol=1e-5)
