"""Kernel partitions of multi-call programs: legality, counts, optimality of the dynamic programme, bytes."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lift.explore.cost_model import DeviceModel
from lift.explore.partition import (DeviceLimits, Footprint, FusionCostModel, FusionGraph, Op, kernel_time_ms,
                                    legal_partition, predict, why_illegal)
from lift.explore.partition_search import enumerate_partitions, fuse_all_legal, fuse_nothing, optimal_partition

N, M = 1 << 20, 1 << 11
VEC, TILES = ("vector", N), ("tiles", M, M)
V, A, S = 4 * N, 4 * M * M, 4  # bytes of a vector, a matrix, a scalar
MV = 4 * M  # bytes of a vector of a matrix's side


def blocks(*groups):
    return frozenset(frozenset(g.split()) for g in groups)


def op(name, space, reads, writes, reduction=False, flops=0.0, fp=Footprint()):
    return Op(name, space, reads, writes, flops, reduction, fp)


# --- the paper's sequences (fusion paper, Table 1) -----------------------------------------------------

AXPYDOT = FusionGraph([
    op("axpy", VEC, {"w": V, "v": V}, {"z": V}, flops=2 * N),        # z = w - alpha v
    op("dot", VEC, {"z": V, "u": V}, {"r": S}, True, flops=2 * N),   # r = z . u
], {"z", "r"})

BICGK = FusionGraph([
    op("gemv", TILES, {"A": A, "p": MV}, {"q": MV}, True, flops=2 * M * M),    # q = A p
    op("gemvt", TILES, {"A": A, "r": MV}, {"s": MV}, True, flops=2 * M * M),   # s = A^T r
], {"q", "s"})

GEMVER = FusionGraph([
    op("ger1", TILES, {"A": A, "u1": MV, "v1": MV}, {"B1": A}, flops=2 * M * M),   # B1 = A + u1 v1^T
    op("ger2", TILES, {"B1": A, "u2": MV, "v2": MV}, {"B": A}, flops=2 * M * M),   # B = B1 + u2 v2^T
    op("gemvt", TILES, {"B": A, "y": MV}, {"t": MV}, True, flops=2 * M * M),       # t = B^T y
    op("waxpby", ("vector", M), {"t": MV, "z": MV}, {"x": MV}, flops=3 * M),      # x = beta t + z
    op("gemv", TILES, {"B": A, "x": MV}, {"w": MV}, True, flops=2 * M * M),        # w = alpha B x
], {"B", "x", "w"})

VADD = FusionGraph([
    op("add1", VEC, {"x": V, "y": V}, {"t": V}, flops=N),   # t = x + y
    op("add2", VEC, {"t": V, "z": V}, {"w": V}, flops=N),   # w = t + z
], {"w"})


@pytest.mark.parametrize("graph, count, best", [
    (AXPYDOT, 2, blocks("axpy dot")),
    (BICGK, 2, blocks("gemv gemvt")),
    (GEMVER, 4, blocks("ger1 ger2 gemvt", "waxpby", "gemv")),
    (VADD, 2, blocks("add1 add2")),
])
def test_paper_sequences_have_the_expected_partitions(graph, count, best):
    found = enumerate_partitions(graph)
    assert len(found) == count
    assert found[0].blocks == best
    assert optimal_partition(graph).blocks == best
    assert math.isclose(optimal_partition(graph).time_ms, found[0].time_ms)
    assert [p.time_ms for p in found] == sorted(p.time_ms for p in found)


def test_gemver_legal_partitions_are_exactly_these():
    # gemv reads x, which needs all of t (a reduction): it cannot join gemvt, nor any kernel gemvt's path
    # to it leaves (ger1, ger2: convexity); ger1 joins gemvt only through ger2
    assert {p.blocks for p in enumerate_partitions(GEMVER)} == {
        blocks("ger1", "ger2", "gemvt", "waxpby", "gemv"),
        blocks("ger1 ger2", "gemvt", "waxpby", "gemv"),
        blocks("ger1", "ger2 gemvt", "waxpby", "gemv"),
        blocks("ger1 ger2 gemvt", "waxpby", "gemv"),
    }


def test_vadd_bytes_fused_and_unfused_match_a_hand_count():
    fused = predict(VADD, [["add1", "add2"]])
    unfused = predict(VADD, [["add1"], ["add2"]])
    assert fused.global_bytes == 4 * V          # read x, y, z; write w (t stays on chip)
    assert unfused.global_bytes == 6 * V        # read x, y, write t; read t, z, write w
    assert [k.global_bytes for k in unfused.kernels] == [3 * V, 3 * V]
    m = FusionCostModel()
    assert math.isclose(fused.time_ms, m.launch_ms + 4 * V / m.bandwidth_gbps * 1e-6)
    assert math.isclose(unfused.time_ms, 2 * (m.launch_ms + 3 * V / m.bandwidth_gbps * 1e-6))


def test_an_input_read_by_several_fused_ops_is_read_once_and_an_output_intermediate_is_written():
    both = FusionGraph([op("a", VEC, {"x": V}, {"t": V}), op("b", VEC, {"t": V, "x": V}, {"w": V})], {"t", "w"})
    assert predict(both, [["a", "b"]]).global_bytes == 3 * V    # x once; t and w written
    assert predict(both, [["a"], ["b"]]).global_bytes == 5 * V


def test_axpydot_reduction_is_finished_by_a_final_pass():
    m = FusionCostModel()
    fused = predict(AXPYDOT, [["axpy", "dot"]]).kernels[0]
    assert fused.global_bytes == 4 * V and fused.reduction_bytes == S
    assert fused.time_ms == pytest.approx(2 * m.launch_ms + (4 * V + m.partials * S) / m.bandwidth_gbps * 1e-6
                                          + (m.partials + 1) * S / m.bandwidth_gbps * 1e-6)


# --- legality, one rule at a time ------------------------------------------------------------------------


def test_barrier_a_reduction_result_is_not_consumed_in_its_kernel():
    g = FusionGraph([op("dot", VEC, {"x": V, "y": V}, {"r": S}, True), op("scal", VEC, {"r": S, "x": V}, {"z": V})],
                    {"z"})
    assert why_illegal(g, [0, 1]) == "barrier"
    assert [p.blocks for p in enumerate_partitions(g)] == [blocks("dot", "scal")]
    assert fuse_all_legal(g).blocks == blocks("dot", "scal")


def test_barrier_an_array_read_whole_waits_for_its_producer():
    g = FusionGraph([op("ger", TILES, {"A": A, "u": MV}, {"B": A}),
                     Op("gemvt", TILES, {"B": A, "y": MV}, {"t": MV}, reduction=True, whole={"B"}),
                     op("gemv", TILES, {"B": A, "x": MV}, {"w": MV})], {"t", "w"})
    assert g.barrier(0, 1) and not g.barrier(0, 2)
    assert why_illegal(g, [0, 1]) == "barrier" and why_illegal(g, [0, 2]) is None
    assert all(frozenset({"ger", "gemvt"}) not in p.blocks for p in enumerate_partitions(g))
    assert fuse_all_legal(g).blocks == blocks("ger gemv", "gemvt")
    assert optimal_partition(g).blocks == enumerate_partitions(g)[0].blocks


def test_a_partial_reduction_fuses_with_its_producer():
    assert why_illegal(AXPYDOT, [0, 1]) is None


def test_spaces_ops_mapping_threads_differently_do_not_share_a_kernel():
    g = FusionGraph([op("rows", ("rows", M), {"x": V}, {"t": V}), op("cols", ("cols", M), {"t": V}, {"w": V})], {"w"})
    assert why_illegal(g, [0, 1]) == "space"
    assert len(enumerate_partitions(g)) == 1


def test_convexity_no_path_leaves_a_kernel_and_comes_back():
    g = FusionGraph([op("a", VEC, {"x": V}, {"t": V}), op("b", ("rows", M), {"t": V}, {"u": V}),
                     op("c", VEC, {"u": V}, {"w": V})], {"w"})
    assert why_illegal(g, [0, 2]) == "convexity"
    assert not legal_partition(g, [["a", "c"], ["b"]])
    assert len(enumerate_partitions(g)) == 1


def test_kernels_that_each_are_legal_must_also_be_orderable():
    g = FusionGraph([op("a1", VEC, {"x": V}, {"p": V}), op("b2", ("rows", M), {"y": V}, {"q": V}),
                     op("b1", ("rows", M), {"p": V}, {"r": V}), op("a2", VEC, {"q": V}, {"s": V})], {"r", "s"})
    assert why_illegal(g, [0, 3]) is None and why_illegal(g, [1, 2]) is None
    assert not legal_partition(g, [["a1", "a2"], ["b1", "b2"]])
    assert blocks("a1 a2", "b1 b2") not in {p.blocks for p in enumerate_partitions(g)}
    with pytest.raises(ValueError, match="cycle"):
        predict(g, [["a1", "a2"], ["b1", "b2"]])


@pytest.mark.parametrize("fp, limits", [
    (Footprint(local_bytes=32 * 1024), DeviceLimits(local_mem_bytes=48 * 1024)),
    (Footprint(registers=160), DeviceLimits(max_registers=255)),
    (Footprint(registers=128, work_group=1024), DeviceLimits(registers_per_unit=200 * 1024)),
])
def test_limits_a_kernel_fits_the_device(fp, limits):
    g = FusionGraph([op("a", VEC, {"x": V}, {"t": V}, fp=fp), op("b", VEC, {"t": V}, {"w": V}, fp=fp)], {"w"})
    assert why_illegal(g, [0, 1], limits) == "limits"
    assert why_illegal(g, [0, 1], DeviceLimits(1 << 20, 1024, 1024, 1 << 20, 1 << 24)) is None
    assert optimal_partition(g, limits).blocks == blocks("a", "b")
    assert len(enumerate_partitions(g, limits)) == 1


def test_an_op_that_does_not_fit_alone_is_an_error():
    g = FusionGraph([op("a", VEC, {"x": V}, {"t": V}, fp=Footprint(local_bytes=1 << 20))], {"t"})
    for search in (enumerate_partitions, optimal_partition, fuse_nothing, fuse_all_legal):
        with pytest.raises(ValueError, match="does not fit"):
            search(g)


def test_occupancy_penalty_can_make_fusion_lose():
    heavy = Footprint(local_bytes=20 * 1024, registers=64)
    g = FusionGraph([op("a", VEC, {"x": V, "y": V}, {"t": V}, fp=heavy),
                     op("b", VEC, {"x": V, "z": V}, {"w": V}, fp=heavy)], {"t", "w"})
    m = FusionCostModel(launch_ms=0.0)
    fused, apart = predict(g, [["a", "b"]], model=m), predict(g, [["a"], ["b"]], model=m)
    assert fused.global_bytes < apart.global_bytes and fused.time_ms > apart.time_ms
    assert optimal_partition(g, model=m).blocks == blocks("a", "b")


def test_graphs_out_of_order_or_with_two_writers_are_rejected():
    with pytest.raises(ValueError, match="topological"):
        FusionGraph([op("b", VEC, {"t": V}, {"w": V}), op("a", VEC, {"x": V}, {"t": V})], {"w"})
    with pytest.raises(ValueError, match="written by both"):
        FusionGraph([op("a", VEC, {"x": V}, {"t": V}), op("b", VEC, {"x": V}, {"t": V})], {"t"})


def test_device_figures_come_from_the_cost_models_device():
    dm = DeviceModel.for_device("gpu", 16, 300.0, 0.01, 49152, 1024, 1)
    m, limits = FusionCostModel.from_device_model(dm), DeviceLimits.from_device_model(dm)
    assert (m.bandwidth_gbps, m.launch_ms, m.peak_gflops) == (300.0, 0.01, 1600.0)
    assert (limits.local_mem_bytes, limits.max_work_group_size) == (49152, 1024)
    assert kernel_time_ms(0, 0, Footprint(), 0, limits, m) == 0.01


def test_a_kernel_narrower_than_the_devices_vectors_leaves_lanes_idle():
    device = DeviceModel.for_device("cpu", 2, 50.0, 0.002, 65536, 4096, 16)
    cpu = FusionCostModel.from_device_model(device)
    peak = 2 * 16 / device.op_ns  # every lane of a native vector on both cores, an operation each `op_ns`
    assert (cpu.peak_gflops, cpu.vector_width) == (pytest.approx(peak), 16)
    assert [cpu.at_width(w).peak_gflops for w in (1, 4, 16, 32)] == pytest.approx([peak / 16, peak / 4, peak, peak])
    compute_bound = [kernel_time_ms(1000, 1e7, Footprint(), 0, DeviceLimits(), cpu.at_width(w)) for w in (1, 8)]
    assert compute_bound[0] > 7 * compute_bound[1]


# --- the dynamic programme against the exhaustive search ----------------------------------------------


@st.composite
def small_graphs(draw, max_ops=7):
    n = draw(st.integers(1, max_ops))
    spaces = [("vector", N), ("rows", M), ("tiles", M, M)][:draw(st.integers(1, 3))]
    ops = []
    for i in range(n):
        earlier = [f"a{j}" for j in range(i)]
        reads = draw(st.lists(st.sampled_from(earlier), max_size=3, unique=True)) if earlier else []
        reads = {a: 4 * N for a in reads}
        if not reads or draw(st.booleans()):
            reads[f"in{draw(st.integers(0, 2))}"] = 4 * N
        reduction = draw(st.integers(0, 3)) == 0
        fp = Footprint(draw(st.sampled_from([0, 0, 8192, 20480])), draw(st.sampled_from([16, 32, 96])),
                       draw(st.sampled_from([128, 256, 512])))
        whole = draw(st.lists(st.sampled_from(sorted(reads)), max_size=1)) if draw(st.integers(0, 3)) == 0 else []
        ops.append(Op(f"op{i}", draw(st.sampled_from(spaces)), reads, {f"a{i}": 4 * (M if reduction else N)},
                      float(draw(st.integers(0, 8))) * N, reduction, fp, whole))
    read = {a for o in ops for a, _ in o.reads}
    outputs = {o.writes[0][0] for o in ops if o.writes[0][0] not in read or draw(st.booleans())}
    return FusionGraph(ops, outputs)


MODELS = st.sampled_from([FusionCostModel(), FusionCostModel(launch_ms=0.0), FusionCostModel(launch_ms=0.05, peak_gflops=500.0),
                          FusionCostModel(bandwidth_gbps=50.0, hiding_occupancy=0.9)])
LIMITS = st.sampled_from([DeviceLimits(), DeviceLimits(local_mem_bytes=32768, max_registers=128)])


def _contiguous(graph, partition):
    return all(max(graph.index[o] for o in k.ops) - min(graph.index[o] for o in k.ops) == len(k.ops) - 1
               for k in partition.kernels)


@settings(max_examples=300, deadline=None)
@given(small_graphs(), LIMITS, MODELS)
def test_dp_equals_the_exhaustive_optimum_on_random_graphs(graph, limits, model):
    every = enumerate_partitions(graph, limits, model)
    best = optimal_partition(graph, limits, model, window=len(graph.ops))
    assert legal_partition(graph, [k.ops for k in best.kernels], limits)
    assert best.time_ms == pytest.approx(every[0].time_ms, rel=1e-9)
    assert optimal_partition(graph, limits, model).time_ms == pytest.approx(every[0].time_ms, rel=1e-9)
    for p in (fuse_nothing(graph, limits, model), fuse_all_legal(graph, limits, model)):
        assert legal_partition(graph, [k.ops for k in p.kernels], limits)
        assert p.time_ms >= every[0].time_ms * (1 - 1e-9)


@settings(max_examples=200, deadline=None)
@given(small_graphs(), LIMITS, MODELS)
def test_dp_with_a_window_of_one_is_optimal_among_contiguous_partitions(graph, limits, model):
    every = enumerate_partitions(graph, limits, model)
    contiguous = min(p.time_ms for p in every if _contiguous(graph, p))
    one = optimal_partition(graph, limits, model, window=1)
    assert _contiguous(graph, one)
    assert one.time_ms == pytest.approx(contiguous, rel=1e-9)
    times = [optimal_partition(graph, limits, model, window=w).time_ms for w in range(1, len(graph.ops) + 1)]
    assert all(a >= b * (1 - 1e-9) for a, b in zip(times, times[1:]))


def test_enumeration_lists_each_legal_partition_once():
    g = FusionGraph([op(f"m{i}", VEC, {"x": V}, {f"t{i}": V}) for i in range(4)], {f"t{i}" for i in range(4)})
    found = enumerate_partitions(g)
    assert len(found) == 15 == len({p.blocks for p in found})  # Bell(4): independent maps fuse freely
