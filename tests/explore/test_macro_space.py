"""The macro space in the search: `lift explore` of matrix multiply proposes register-blocked candidates first,
replayable and correct, and keeps the moves of programs of other shapes; on a GPU, staged tiles of the reduction
dimension before unstaged ones."""

import itertools
import json

import numpy as np
import pytest

from lift.explore.bandwidth import StreamingBandwidth
from lift.explore.driver import explore
from lift.explore.evaluation import TimingPolicy
from lift.explore.rewrite_search import RewriteSearch
from lift.opencl_gen.compiled import compile
from lift.rules import Derivation, alpha_equal

from opencl_device import needs_device

SIZES = {"M": 64, "K": 64, "N": 64}
FAST = TimingPolicy(min_runs=3, max_runs=10, max_s=0.2)
KNOWN_BANDWIDTH = StreamingBandwidth(copy_gbps=10.0, read_gbps=10.0, launch_ms=0.002, nbytes=0)


def _replayed(candidate, program, sizes):
    steps = [{"rule": s["rule"], "at": s["at"], "params": s["params"]} for s in candidate.derivation]
    return Derivation.from_json(json.dumps({"sizes": sizes, "steps": steps})).replay(program)


def test_matmul_candidates_start_with_the_macro_space(examples):
    program = examples["matmul"].kernels["matmul"]
    search = iter(RewriteSearch(program, SIZES))
    assert next(search).params == {"default-lowering": "yes"}  # what lift.compile runs, measured first
    first = [next(search) for _ in range(6)]
    assert all("register-blocked" in c.params for c in first)
    assert first[0].params["register-blocked"] == "h=8, w=8, vector=4, dims=10"  # the default width, 4 lanes
    assert first[1].params["register-blocked"] == "h=8, w=8, vector=4, dims=10, packed"  # on a CPU, then packed
    for c in first:
        assert alpha_equal(_replayed(c, program, SIZES), c.program)
    later = next(c for c in search if "register-blocked" not in c.params)
    assert alpha_equal(_replayed(later, program, SIZES), later.program)


def test_a_gpu_gets_scalar_blocks_first(examples):
    """A GPU's native vector width is 1: its blocks are scalars, of about `TARGET_ACCUMULATORS` results."""
    search = RewriteSearch(examples["matmul"].kernels["matmul"], SIZES)
    search.vector_width = 1
    blocked = [c for c in itertools.islice(search, 6) if "register-blocked" in c.params]
    assert blocked[0].params["register-blocked"] == "h=8, w=8, vector=1, dims=10"
    assert not any("packed" in c.params["register-blocked"] for c in blocked)  # a GPU's packed blocks come last


@pytest.mark.parametrize("stem, sizes", [("dot", {"N": 1 << 12}), ("gemv", {"M": 64, "N": 64})])
def test_other_programs_get_no_macro_candidates(examples, stem, sizes):
    some = list(itertools.islice(RewriteSearch(examples[stem].kernels[stem], sizes), 3))
    assert some and not any("register-blocked" in c.params for c in some)


@needs_device
def test_explore_of_matmul_measures_register_blocked_winners(examples, tmp_path):
    pf = examples["matmul"]
    sizes = {"M": 32, "K": 16, "N": 32}
    result = explore(pf, "matmul", sizes, RewriteSearch(pf.kernels["matmul"], sizes), budget_s=300,
                     out_dir=tmp_path, max_candidates=4, timing=FAST, bandwidth=KNOWN_BANDWIDTH, progress=False,
                     work_group_sizes=(None,))
    assert len(result.ranked) == 4 and all(r.ok for r in result.ranked)
    # measured first is the default lowering, itself register-blocked where the blocks divide; then macro candidates
    assert all("register-blocked" in r.params or r.params.get("default-lowering") == "yes" for r in result.ranked)
    assert sum("register-blocked" in r.params for r in result.ranked) == 3


@needs_device
def test_a_gpu_gets_staged_tiles_before_unstaged_ones_and_they_compute_the_product(examples):
    """With a GPU's vector width 1, the tiles staging the reduction dimension in local memory come before the
    unstaged tiles of the same blocks; the first computes the product (on this device)."""
    program = examples["matmul"].kernels["matmul"]
    search = RewriteSearch(program, SIZES)
    search.vector_width = 1
    blocked = [c.params["register-blocked"] for c in itertools.islice(search, 40) if "register-blocked" in c.params]
    staged = next(p for p in blocked if "staged" in p)
    unstaged = staged.split(", staged")[0]
    assert unstaged in blocked and blocked.index(staged) < blocked.index(unstaged)
    search = RewriteSearch(program, SIZES)
    search.vector_width = 1
    candidate = next(c for c in search if c.params.get("register-blocked") == staged)
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (64, 64)).astype(np.float32) for _ in range(2))
    got = compile(candidate.program)(a, b)
    np.testing.assert_allclose(got.reshape(64, 64), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_staged_tiles_fit_the_local_memory_and_come_last_on_a_cpu():
    from lift.explore.macro_space import parameters

    cpu, small = parameters(16), parameters(1, local_mem_bytes=1024)
    first = next(i for i, p in enumerate(cpu) if p[3][0] == "staged")
    assert all(p[3][0] == "staged" for p in cpu[first:]) and all(p[2] is None for p in cpu[first:])
    assert all((p[3][1] * p[0] + p[3][2] * p[1]) * p[3][3] * 4 <= 1024 for p in small if p[3][0] == "staged")
    assert any(p[3][0] == "staged" for p in small)
