"""Address spaces are an explicit pass (`infer-address-spaces`): every result that needs new memory carries
the cast the memory model gives it; the emitter and the cost model read casts and decide nothing; and
barriers follow where work-items hand new memory to each other (issue 16)."""

import numpy as np
import pytest

import lift
from lift import (ArrayType, Float, Get, Join, MapAccumSeq, MapGlb, MapLcl, MapSeq, MapWrg, SizeVar, Split, ToGlobal,
                  ToPrivate, Tuple, UserFun, Zip, fun, infer, interpret)
from lift.explore.cost_walk import profile
from lift.ir.nodes import Literal
from lift.ir.opencl_patterns import AddressSpaceCast
from lift.opencl_gen import c_ast as C
from lift.opencl_gen.compiled import compile
from lift.opencl_gen.kernels import PIPELINE, Compilation, generate, specialise
from lift.opencl_gen.pipeline import Pipeline
from lift.opencl_gen.space_inference import infer_address_spaces

F = Float
N = SizeVar("N")
add = UserFun("add", ("x", "y"), "return x + y;", (F, F), F, python=lambda x, y: x + y)
neg = UserFun("neg", ("x",), "return -x;", (F,), F, python=np.negative)
step = lambda acc, e: Tuple(neg(e), add(acc, e))

IMPLICIT_AND_EXPLICIT = {
    "a work-item's temporary is private": (
        lambda x: (Join() @ MapGlb(MapSeq(neg) @ MapSeq(neg)) @ Split(4))(x),
        lambda x: (Join() @ MapGlb(MapSeq(neg) @ ToPrivate(MapSeq(neg))) @ Split(4))(x)),
    "a work-group's temporary is global": (
        lambda x: (Join() @ MapWrg(MapLcl(neg) @ MapLcl(neg)) @ Split(16))(x),
        lambda x: (Join() @ MapWrg(MapLcl(neg) @ ToGlobal(MapLcl(neg))) @ Split(16))(x)),
    "the open component of a tuple is private": (
        lambda x: (Join() @ MapGlb(lambda r: Get(MapAccumSeq(step, 0.0)(r), 0)) @ Split(4))(x),
        lambda x: (Join() @ MapGlb(lambda r: Get(ToPrivate(MapAccumSeq(step, 0.0))(r), 0)) @ Split(4))(x)),
}


def _casts(e) -> list:
    found, stack = [], [e]
    while stack:
        n = stack.pop()
        if isinstance(n, AddressSpaceCast):
            found.append(type(n).__name__)
        stack.extend(c for _, c in n.children())
    return found


@pytest.mark.parametrize("case", IMPLICIT_AND_EXPLICIT, ids=lambda c: c.replace(" ", "-"))
def test_an_uncast_result_gets_the_cast_of_the_memory_model_and_the_same_code(case):
    implicit, explicit = (fun([ArrayType(F, N)], body) for body in IMPLICIT_AND_EXPLICIT[case])
    spaced = infer_address_spaces(infer(implicit).expr.body)
    assert _casts(spaced) == _casts(infer(explicit).expr.body) and len(_casts(spaced)) == 1
    assert infer_address_spaces(spaced) == spaced, "a result with a cast keeps it"
    code = [generate(prog, "k", {"N": 64}).source.split("\n", 1) for prog in (implicit, explicit)]
    assert code[0][1] == code[1][1], "the same code after the header, which prints the program as written"


def test_a_result_with_a_destination_gets_no_cast():
    program = fun([ArrayType(F, N)], lambda x: (Join() @ MapGlb(MapSeq(neg)) @ Split(4))(x))
    body = infer(program).expr.body
    assert infer_address_spaces(body) is body


def test_the_emitter_raises_on_a_result_that_needs_memory_and_has_no_cast():
    program = fun([ArrayType(F, N)], lambda x: (Join() @ MapGlb(MapSeq(neg) @ MapSeq(neg)) @ Split(4))(x))
    without = Pipeline(tuple(p for p in PIPELINE.passes if p.name != "infer-address-spaces"), PIPELINE.validate)
    with pytest.raises(lift.LiftCodegenError, match="internal error: the result at .* has no address space"):
        without.run(Compilation("k", specialise(program, {}), {}, {}, None))


def test_the_cost_model_reads_the_casts():
    n = 64
    private = fun([ArrayType(F, N)], lambda x: (Join() @ MapGlb(MapSeq(neg) @ MapSeq(neg)) @ Split(4))(x))
    in_global = fun([ArrayType(F, N)], lambda x: (Join() @ MapGlb(MapSeq(neg) @ ToGlobal(MapSeq(neg))) @ Split(4))(x))
    (p,), (g,) = (profile(generate(prog, "k", {"N": n})) for prog in (private, in_global))
    assert p.global_bytes == 4 * (n + n), "x read, the result written"
    assert g.global_bytes == p.global_bytes + 4 * (n + n), "and the global temporary written and read"


def test_an_array_literal_with_no_destination_is_a_view_of_its_value():
    program = fun([ArrayType(F, N)], lambda x: (
        Join() @ MapGlb(lambda r: MapSeq(add)(Zip(r, Literal(1.0, ArrayType(F, 4))))) @ Split(4))(x))
    source = generate(program, "k", {"N": 16}).source
    assert "add(x[4*g_0 + i_1], 1.0f)" in source and "pmem" not in source


def _executed_barriers(body, times: int = 1) -> int:
    n = 0
    for s in body:
        if isinstance(s, C.Barrier):
            n += times
        elif isinstance(s, (C.For, C.Block)):
            n += _executed_barriers(s.body, times * (int(s.stop) if s.kind == "iterate" else 1))
    return n


def test_asum_nvidia_waits_after_the_first_level_and_each_tree_step_only(examples):
    g = generate(examples["asum"].kernels["asum_nvidia"], "nv", {"N": 1 << 18})
    assert len(g.kernels) == 2 and g.kernels[0].launch.evaluate({})[1] == (128,)
    assert _executed_barriers(g.kernels[0].body) == 1 + 7, "no barrier after the copy into the kernel's output"
    assert profile(g)[0].barriers == 1 + 7, "the cost model counts the barriers the code has (one work-group)"


@pytest.mark.parametrize("case", IMPLICIT_AND_EXPLICIT, ids=lambda c: c.replace(" ", "-"))
def test_the_inferred_spaces_compute_what_the_interpreter_does(case, device):
    program = fun([ArrayType(F, N)], IMPLICIT_AND_EXPLICIT[case][0])
    x = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    np.testing.assert_allclose(compile(program, device, sizes={"N": 64})(x), interpret(program, x), rtol=1e-6)
