"""`lift explore` on a reduction from a value that is not neutral: every candidate its search builds is correct,
and the check against the reference rejects the lowering that reduced `z` once per chunk (issue 18 follow-up)."""

from pathlib import Path

from lift import ArrayType, Float, Join, MapGlb, ReduceSeq, SizeVar, Split, fun
from lift.explore.bandwidth import StreamingBandwidth
from lift.explore.candidate import Candidate
from lift.explore.driver import explore
from lift.explore.evaluation import TimingPolicy
from lift.explore.search_strategy import search_for
from lift.ir.program_file import load_program_file
from opencl_device import needs_device

pytestmark = needs_device

SOURCE = '''
from lift import ArrayType, Float, Reduce, SizeVar, fun, userfun

N = SizeVar("N")
SIZES = {"N": 4096}


@userfun
def add(x: Float, y: Float) -> Float:
    return x + y


sum5 = fun([ArrayType(Float, N)], lambda x: Reduce(add, 5.0)(x))
'''
FAST = TimingPolicy(min_runs=2, max_runs=5, max_s=0.1)
KNOWN_BANDWIDTH = StreamingBandwidth(copy_gbps=10.0, read_gbps=10.0, launch_ms=0.002, nbytes=0)


def _program_file(tmp_path: Path):
    path = tmp_path / "sum5.py"
    path.write_text(SOURCE)
    return load_program_file(path)


def test_every_candidate_of_a_sum_from_five_is_correct(tmp_path):
    pf = _program_file(tmp_path)
    result = explore(pf, "sum5", {"N": 4096}, search_for(pf.kernels["sum5"], {"N": 4096}), budget_s=240,
                     out_dir=tmp_path / "search", timing=FAST, bandwidth=KNOWN_BANDWIDTH, max_candidates=12,
                     progress=False)
    assert len(result.ranked) > 3 and all(r.ok for r in result.ranked), [(r.expression, r.reason) for r in
                                                                         result.ranked if not r.ok]
    assert any("map-global" in r.expression or "map-workgroup" in r.expression for r in result.ranked)


def test_the_check_rejects_a_lowering_that_reduces_five_once_per_chunk(tmp_path):
    pf = _program_file(tmp_path)
    add, n = pf.namespace["add"], SizeVar("N")
    wrong = fun([ArrayType(Float, n)], lambda x: (
        ReduceSeq(add, 5.0) @ Join() @ MapGlb(ReduceSeq(add, 5.0)) @ Split(64))(x))
    candidate = Candidate(wrong)
    result = explore(pf, "sum5", {"N": 4096}, [candidate], budget_s=120, out_dir=tmp_path / "wrong",
                     timing=FAST, bandwidth=KNOWN_BANDWIDTH, progress=False)
    record = {r.key: r for r in result.ranked}[candidate.key]
    assert record.status == "wrong" and "elements differ" in record.reason
