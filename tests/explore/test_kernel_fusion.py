"""Kernel fusion of the Table 1 sequences: the fusion graph read off the routines, one lowered program per
partition (the DP's choice and one kernel group per call) equal to numpy, fewer kernels where the rules
fuse, and `lift explore` on a program of calls writing one `.cl` that runs from its manifest alone."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import lift
from lift import CallGraph
from benchmarks.bench_kernel_fusion import table4
from lift.explore.fusion_graph import KernelFusionError, fusion_graph
from lift.explore.fusion_lowering import lower, unfused_blocks
from lift.explore.sequence_search import DP, FUSE_NOTHING, implementations
from lift.explore import partition as part
from lift.explore import partition_search as search
from lift.ir.program_file import load_program_file
from lift.opencl_gen.compiled import compile

from opencl_device import MANIFEST_HOST, needs_device
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEQUENCES = load_program_file(EXAMPLES / "sequences.py")
NUMPY = SEQUENCES.namespace["NUMPY"]
SIZES = {"K": 256, "M": 16, "N": 32}
CHUNK = 4
NAMES = ("axpydot", "atax", "bicgk", "sgemv", "sgemvt", "sscal", "gemver", "gesummv", "madd", "vadd", "waxpby")
FUSED_KERNELS = {"axpydot": (2, 4), "vadd": (1, 3), "waxpby": (1, 3), "bicgk": (2, 3), "gemver": (6, 8),
                 "gesummv": (2, 3)}


def graph(name):
    return CallGraph.of(SEQUENCES.kernels[name])


def inputs(name, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for p in lift.infer(SEQUENCES.kernels[name]).expr.params:
        t, shape = p.t, []
        while isinstance(t, lift.ArrayType):
            shape.append(t.length.substitute(SIZES).value)
            t = t.elem
        out.append(rng.standard_normal(shape).astype(np.float32) if shape else np.float32(rng.standard_normal()))
    return out


def spaces(name):
    g = fusion_graph(graph(name), SIZES)
    return [(op.name, op.space, op.reduction) for op in g.ops]


def test_fusion_graph_reads_spaces_and_reductions_off_the_routines():
    assert spaces("axpydot") == [("copy%0", ("vector", 256), False), ("axpy%1", ("vector", 256), False),
                                 ("dot%2", ("vector", 256), True)]
    assert spaces("bicgk") == [("gemv%0", ("rows", 16, 32), False), ("gemvt%1", ("rows", 16, 32), True)]
    rows, n, m = ("rows", 16, 32), ("vector", 32), ("vector", 16)
    assert spaces("gemver") == [("matcopy%0", rows, False), ("ger%1", rows, False), ("ger%2", rows, False),
                                ("gemvt%3", rows, True), ("axpy%4", n, False), ("gemv%5", rows, False),
                                ("scal%6", m, False)]
    assert [op.whole for op in fusion_graph(graph("gemver"), SIZES).ops] == [
        set(), {"v1"}, {"v2"}, {"%2", "y"}, set(), {"%4"}, set()]
    assert [op.whole for op in fusion_graph(graph("bicgk"), SIZES).ops] == [{"p"}, {"A", "r"}]
    g = fusion_graph(graph("axpydot"), SIZES)
    assert dict(g.ops[1].reads) == {"v": 1024, "%0": 1024} and dict(g.ops[1].writes) == {"%1": 1024}
    assert dict(g.ops[2].reads) == {"%1": 1024, "u": 1024} and dict(g.ops[2].writes) == {"%2": 4}
    assert g.outputs == {"%1", "%2"}
    assert g.ops[0].flops == 0 and g.ops[1].flops == 2 * 256 and g.ops[2].flops == 2 * 256  # copy: idf


def test_the_partitioner_fuses_what_one_space_allows():
    best = search.optimal_partition(fusion_graph(graph("gemver"), SIZES))
    assert best.blocks == {frozenset({"matcopy%0", "ger%1", "ger%2"}), frozenset({"gemvt%3"}),
                           frozenset({"axpy%4"}), frozenset({"gemv%5"}), frozenset({"scal%6"})}
    impls = implementations(graph("axpydot"), SIZES, (4, 8))
    assert [(i.blocks, i.chunk) for i in impls][:2] == [(((0, 1, 2),), 4), (((0, 1, 2),), 8)]
    assert DP in impls[0].roles and FUSE_NOTHING in impls[-1].roles and len(impls) == 8
    cpu = part.FusionCostModel(bandwidth_gbps=50.0, peak_gflops=64.0, vector_width=16)
    impls = implementations(graph("bicgk"), {"M": 1024, "N": 1024}, (16, 64), model=cpu, widths=(1, 4, 8))
    assert [(i.chunk, i.width) for i in impls[:2]] == [(16, 8), (64, 8)] and impls[0].blocks == ((0, 1),)
    assert [i.predicted_ms for i in impls] == sorted(i.predicted_ms for i in impls)
    assert impls[-1].width == 1


def test_a_partition_that_cannot_be_ordered_or_misses_a_call_is_a_one_line_error():
    with pytest.raises(KernelFusionError, match="every call"):
        lower(graph("axpydot"), [(0,)], CHUNK, SIZES)
    with pytest.raises(KernelFusionError, match="at least 1"):
        lower(graph("axpydot"), [(0, 1, 2)], 0, SIZES)
    with pytest.raises(KernelFusionError, match="cannot be launched in any order"):
        lower(graph("axpydot"), [(0, 2), (1,)], CHUNK, SIZES)
    with pytest.raises(KernelFusionError, match=r"does not lower: vectorize-zip-map: parameters \{n=3\}"):
        lower(graph("axpydot"), [(0, 1, 2)], CHUNK, SIZES, width=3)


def test_table4_measures_the_chosen_implementations_at_once_and_ranks_them():
    impls = implementations(graph("axpydot"), SIZES, (4, 8))
    seen = []

    def measure(lowered):
        seen.append([low.program for low in lowered])
        return [None if i == 1 else abs(i - 2) + 1.0 for i in range(len(lowered))]

    row = table4("axpydot", graph("axpydot"), SIZES, measure, budget=4, chunks=(4, 8))
    assert len(seen) == 1 and len(seen[0]) == 5  # the first 4 predicted, and fuse-nothing (the last)
    assert (row.implementations, row.measured, row.best_rank) == (len(impls), 4, 3)
    assert (row.first_quality, row.worst) == (1.0 / 3.0, 1.0 / 3.0)
    assert [t for _, _, t in row.times] == [3.0, 1.0, 2.0, 3.0]
    assert (row.dp_ms, row.fuse_nothing_ms) == (3.0, 3.0)


def dp_blocks(name):
    return next(i.blocks for i in implementations(graph(name), SIZES, (CHUNK,)) if DP in i.roles)


@needs_device
@pytest.mark.parametrize("width", (1, 4))
@pytest.mark.parametrize("name", NAMES)
def test_every_sequence_fused_and_unfused_equals_numpy(name, width):
    cg = graph(name)
    xs = inputs(name)
    want = NUMPY[name](*xs)
    want = want if isinstance(want, tuple) else (want,)
    counts = []
    for blocks in (dp_blocks(name), unfused_blocks(cg)):
        lowered = lower(cg, blocks, CHUNK, SIZES, width)
        compiled = compile(lowered.program, sizes=SIZES, name=name)
        got = compiled(*xs)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.reshape(g, np.shape(w)), w, rtol=1e-4, atol=1e-3)
        counts.append(len(compiled.manifest["kernels"]))
    if name in FUSED_KERNELS and width == 1:
        assert tuple(counts) == FUSED_KERNELS[name]
        assert counts[0] < counts[1]
    else:
        assert counts[0] <= counts[1]


@needs_device
def test_explore_on_a_program_of_calls_writes_one_cl_that_runs_from_its_manifest(tmp_path, device):

    k = 4096
    result = subprocess.run([sys.executable, "-m", "lift.cli", "explore", str(EXAMPLES / "sequences.py"), "--kernel",
                             "axpydot", "--device", lift.opencl_gen.runtime.device_spec(device), "--budget", "2m", "--size", f"K={k}", "--max-candidates",
                             "2", "--out", str(tmp_path)], capture_output=True, text=True, timeout=400)
    assert result.returncode == 0, result.stderr
    assert "partition: {" in result.stdout
    manifest = json.loads((tmp_path / "axpydot.json").read_text())
    assert len(manifest["kernels"]) in (2, 3)
    assert [o["shape"] for o in manifest["outputs"]] == [[str(k)], ["1"]]
    derivation = json.loads((tmp_path / "axpydot.derivation.json").read_text())
    assert "partition" in derivation["params"] and "partition" in derivation["steps"][0]
    a, (w, v, u) = np.float32(0.5), np.random.default_rng(3).standard_normal((3, k)).astype(np.float32)
    np.savez(tmp_path / "inputs.npz", a=a, w=w, v=v, u=u)
    subprocess.run([sys.executable, str(MANIFEST_HOST), str(tmp_path / "axpydot.cl"),
                    str(tmp_path / "axpydot.json"), str(tmp_path / "inputs.npz"), str(tmp_path / "out.npz")],
                   capture_output=True, text=True, check=True)
    z, r = NUMPY["axpydot"](a, w, v, u)
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_allclose(out["out0"], z, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out["out1"], r, rtol=2e-4, atol=2e-3)
