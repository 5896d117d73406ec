"""The balanced work-group size (`lift.explore.balanced_groups`): the largest that leaves every driver-sized kernel
enough groups, and `lift explore` measuring candidates at it, their outputs checked, a rerun resuming."""

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from lift.explore.balanced_groups import BALANCED, GROUPS_PER_UNIT, balanced_group_size
from lift.explore.bandwidth import StreamingBandwidth
from lift.explore.candidate import Candidate
from lift.explore.driver import EXHAUSTED, explore
from lift.explore.evaluation import TimingPolicy
from lift.ir.program_file import load_program_file
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import compile
from lift.opencl_gen.launch import Launch, local_size_overrides
from lift.rules.default_lowering import lower
from lift.types.arith import Cst
from opencl_device import needs_device

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAST = TimingPolicy(min_runs=3, max_runs=20, max_s=0.3)
KNOWN_BANDWIDTH = StreamingBandwidth(copy_gbps=10.0, read_gbps=10.0, launch_ms=0.002, nbytes=0)

dims = st.lists(st.tuples(st.integers(0, 10), st.sampled_from([1, 3, 5])).map(lambda t: (1 << t[0]) * t[1]),
                min_size=1, max_size=3)


def _jacobi5(a):
    p = np.pad(a, 1, mode="edge")
    return np.float32(0.2) * (p[:-2, 1:-1] + p[1:-1, :-2] + p[1:-1, 1:-1] + p[1:-1, 2:] + p[2:, 1:-1])


def _kernel(global_sizes, local_sizes=None):
    local = None if local_sizes is None else tuple(Cst(n) for n in local_sizes)
    return SimpleNamespace(launch=Launch(tuple(Cst(n) for n in global_sizes), local))


def _fits(global_sizes, size, limit, least) -> bool:
    return global_sizes[0] % size == 0 and size <= limit and math.prod(global_sizes) // size >= least


@given(st.lists(dims, min_size=1, max_size=3), st.integers(1, 64), st.sampled_from([256, 1024, 4096]),
       st.sampled_from([64, 1024, 4096]))
def test_the_largest_power_of_two_leaving_every_kernel_enough_groups(sizes, units, max_group, max_item):
    kernels = [_kernel(g) for g in sizes] + [_kernel((7, 3), (7, 1))]  # a kernel sizing its own groups: ignored
    size = balanced_group_size(kernels, {}, units, max_group, (max_item, 1, 1))
    limit, least = min(max_group, max_item), GROUPS_PER_UNIT * units
    assert size & (size - 1) == 0, "a power of two"
    assert size == 1 or all(_fits(g, size, limit, least) for g in sizes)
    assert not all(_fits(g, 2 * size, limit, least) for g in sizes), "no larger one fits"


def test_kernels_that_size_their_own_groups_leave_it_at_one():
    assert balanced_group_size([_kernel((4096,), (64,))], {}, 2, 4096, (4096,)) == 1


def test_a_stencils_row_blocks_get_groups_of_their_rows():
    """The 2-D stencil whose 8 x 512 work-items PoCL runs as 2 groups on 2 cores: 512 groups of 8."""
    assert balanced_group_size([_kernel((8, 512))], {}, 2, 4096, (4096, 4096, 4096)) == 8


@needs_device
def test_a_stencil_at_its_balanced_size_computes_the_stencil():
    pf = load_program_file(EXAMPLES / "stencils.py")
    sizes = {"M": 256, "N": 512}
    program = lower(pf.kernels["jacobi2d5_high"], sizes)
    device = runtime.select_device(None)
    kernels = compile(program, device, sizes).generated(sizes).kernels
    size = balanced_group_size(kernels, sizes, 1, device.max_work_group_size, tuple(device.max_work_item_sizes))
    assert size == 8, "8 x 256 work-items: 256 groups of 8"
    a = np.random.default_rng(3).uniform(-1, 1, (256, 512)).astype(np.float32)
    out = compile(program, device, sizes, launch=local_size_overrides(kernels, size))(a)
    np.testing.assert_allclose(out, _jacobi5(a), rtol=1e-5, atol=1e-6)


@needs_device
def test_explore_measures_a_candidate_at_its_balanced_size_and_resumes(tmp_path):
    pf = load_program_file(EXAMPLES / "scal.py")
    sizes = {"N": 1 << 16}
    candidate = Candidate(pf.kernels["scal_global"], params={"kernel": "scal_global"})
    settings = dict(budget_s=300, out_dir=tmp_path, timing=FAST, bandwidth=KNOWN_BANDWIDTH, progress=False,
                    work_group_sizes=(None, BALANCED))
    result = explore(pf, "scal", sizes, [candidate], **settings)
    device = runtime.select_device(None)
    size = balanced_group_size(candidate.generate("scal", sizes).kernels, sizes, device.max_compute_units,
                               device.max_work_group_size, tuple(device.max_work_item_sizes))
    assert (result.evaluated, result.stopped) == (2, EXHAUSTED)
    assert sorted((r.params["local_size"] or 0, r.status) for r in result.ranked) == [(0, "ok"), (size, "ok")]
    assert size == 1 or 65536 // size >= GROUPS_PER_UNIT * device.max_compute_units

    log = tmp_path / "log.jsonl"
    before = log.read_text()
    resumed = explore(pf, "scal", sizes, [candidate], **settings)
    assert (resumed.evaluated, resumed.skipped) == (0, 2) and log.read_text() == before
    assert {json.loads(line)["params"]["local_size"] for line in before.splitlines()} == {None, size}
