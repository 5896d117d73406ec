"""Gathers in user functions (`lift.explore.userfun_cost.array_reads`, `lift.explore.cost_model`): an array argument
indexed by data (`particles[nid]`, `x[col]`) is a load per lane of its index, priced by where the array lives (a
core's own cache, the shared cache, memory); one indexed by constants and loop counters is read like any other value
(predictions only, on constructed kernels)."""

from types import SimpleNamespace

import pytest

from lift import ArrayType, Float, Int, MapGlb, SizeVar, UserFun, VectorType, Vectorize, fun, userfun
from lift.explore.candidate import Candidate
from lift.explore.cost_model import DeviceModel, predict
from lift.explore.cost_walk import profile
from lift.explore.userfun_cost import ArrayRead, array_reads
from lift.ir.userfun_body import Index, Return, Variable

N, T = SizeVar("N"), SizeVar("T")
POCL = DeviceModel.for_device("cpu", 2, 41.0, 0.004, 524288, 4096, 8, 32 << 20)
"""PoCL on this machine's EPYC: 2 cores, a 512 KB L2 each (its local memory), a 32 MB L3 (its global cache)."""


@userfun
def lookup(i: Int, table: ArrayType(Float, T)) -> Float:
    return table[i]


@userfun
def first(i: Int, table: ArrayType(Float, T)) -> Float:
    return table[0]


def test_array_reads_tell_gathers_from_reads_at_counters(examples):
    """spmv's row reads its values and column indices at its loop's counter, and gathers `x` at those columns; MD
    gathers a neighbour's float4; `vectorize-n` makes a gather `n` loads."""
    row_dot = examples["spmv_ell"].namespace["row_dot"]
    assert array_reads(row_dot) == {ArrayRead("vals", Float, 1, False): 7, ArrayRead("cols", Int, 1, False): 7,
                                    ArrayRead("x", Float, 1, True): 7}
    update_f = examples["md"].namespace["update_f"]
    assert array_reads(update_f) == {ArrayRead("particles", VectorType(Float, 4), 1, True): 1}
    assert array_reads(lookup) == {ArrayRead("table", Float, 1, True): 1}
    assert array_reads(Vectorize(8, lookup)) == {ArrayRead("table", Float, 8, True): 1}
    assert array_reads(first) == {ArrayRead("table", Float, 1, False): 1}


def test_a_vector_index_is_a_load_per_lane():
    """`x[nid]` with `nid` an int8 (8 particles in the lanes, each its own neighbour) loads 8 floats."""
    Int8, Float8 = VectorType(Int, 8), VectorType(Float, 8)
    body = (Return(Index(Variable("x", ArrayType(Float, T)), Variable("nid", Int8), Float8)),)
    gather = UserFun("gather8", ("nid", "x"), "", (Int8, ArrayType(Float, T)), Float8,
                     origin=SimpleNamespace(body=body))
    assert array_reads(gather) == {ArrayRead("x", Float8, 8, True): 1}


def _predicted(f, table: int, n: int = 1 << 20) -> float:
    program = fun([ArrayType(Int, N), ArrayType(Float, T)], lambda idx, t: MapGlb(lambda i: f(i, t))(idx))
    sizes = {"N": n, "T": table}
    return predict(profile(Candidate(program).generate("k", sizes)), POCL)


def test_a_gather_costs_what_the_level_its_array_fits_in_serves():
    """A gather from a table in a core's own cache costs its load; from the shared cache, a line through it; from
    memory, a line from memory: slower in that order, and a gather from memory far slower than streaming the
    indices (a line of 64 bytes for every 4-byte index). A read at a constant index costs a load whatever the
    table's size."""
    near, shared, far = (_predicted(lookup, t) for t in (1 << 14, 1 << 22, 1 << 26))
    assert near < shared < far and far > 5 * near
    assert _predicted(first, 1 << 14) == pytest.approx(_predicted(first, 1 << 26), rel=0.01)
    assert _predicted(first, 1 << 26) < 1.2 * near
