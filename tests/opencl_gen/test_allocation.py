"""Memory is allocated by a pass before emission (`allocate-memory`): each result with no destination gets
its space, element type and size, one slice per work-item or work-group that needs its own; the emitter
only names what the pass allocated (issue 16)."""

import numpy as np
import pytest

import lift
from lift import (ArrayType, Float, Get, Join, MapAccumSeq, MapGlb, MapLcl, MapSeq, MapWrg, SizeVar, Split, ToGlobal,
                  ToLocal, ToPrivate, Tuple, UserFun, fun, interpret)
from lift.opencl_gen.allocation import Allocation
from lift.opencl_gen.compiled import compile
from lift.opencl_gen.kernels import PIPELINE, Compilation, generate, specialise
from lift.opencl_gen.pipeline import Pipeline
from lift.types.arith import Cst

F = Float
N = SizeVar("N")
neg = UserFun("neg", ("x",), "return -x;", (F,), F, python=np.negative)
add = UserFun("add", ("x", "y"), "return x + y;", (F, F), F, python=lambda x, y: x + y)

# Work-groups of 16: a global temporary (one slice per work-group), a local one (one per work-group, in its
# own local memory), and per work-item a private array of 4.
SPACES = fun([ArrayType(F, N)], lambda x: (Join() @ MapWrg(
    Join() @ MapLcl(MapSeq(neg) @ ToPrivate(MapSeq(neg))) @ Split(4)
    @ ToLocal(MapLcl(neg)) @ ToGlobal(MapLcl(neg))) @ Split(16))(x))


def _allocations(program, sizes) -> dict:
    upto = PIPELINE.names.index("allocate-memory") + 1
    state = Pipeline(PIPELINE.passes[:upto], PIPELINE.validate).run(
        Compilation("k", specialise(program, sizes), dict(sizes), {}, None), debug=True)
    return state.allocations


def test_each_space_is_sized_for_the_ids_that_need_their_own_copy():
    found = _allocations(SPACES, {"N": 64})
    by_space = {a.space: a for a in found.values()}
    assert set(by_space) == {"global", "local", "private"} and len(found) == 3
    assert by_space["global"].size == Cst(16 * 4), "16 floats per work-group, 4 work-groups"
    assert by_space["local"].size == Cst(16), "a work-group's own local memory"
    assert by_space["private"].size == Cst(4), "a work-item's own private array"
    g = generate(SPACES, "k", {"N": 64})
    (k,) = g.kernels
    assert [(m.space, m.size) for m in g.temporaries + k.locals] == [("global", Cst(64)), ("local", Cst(16))]
    assert "float pmem_" in g.source and "[4];" in g.source


def test_the_allocated_program_computes_what_the_interpreter_does(device):
    x = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    np.testing.assert_allclose(compile(SPACES, device, sizes={"N": 64})(x), interpret(SPACES, x), rtol=1e-6)


def test_a_kernel_result_and_the_open_component_of_a_tuple_get_memory():
    step = lambda acc, e: Tuple(neg(e), add(acc, e))
    two_kernels = fun([ArrayType(F, N)], lambda x: (
        MapSeq(neg) @ Join() @ MapGlb(lambda r: Get(MapAccumSeq(step, 0.0)(r), 0)) @ Split(4))(x))
    found = _allocations(two_kernels, {"N": 16})
    kernel_result = [a for a in found.values() if isinstance(a, Allocation)]
    assert [(a.space, a.size) for a in kernel_result] == [("global", Cst(16))], "the first kernel's result"
    (holes,) = [a for a in found.values() if isinstance(a, tuple)]
    assert holes[0] is None and (holes[1].space, holes[1].size) == ("private", Cst(1)), "the sum of each row"


def test_a_private_array_of_symbolic_size_is_refused_by_the_pass():
    program = fun([ArrayType(ArrayType(F, N), 8)], lambda rows: MapGlb(MapSeq(neg) @ ToPrivate(MapSeq(neg)))(rows))
    with pytest.raises(lift.LiftCodegenError, match="the private array at .* has the symbolic size N"):
        _allocations(program, {})
