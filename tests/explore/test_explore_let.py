"""`lift explore` of a normalisation `x / sum(x)`, the sum let-bound or written inside the map (issue 17, item 7):
every candidate computes the sum once, before the map that reads it, and agrees with the interpreter."""

import re

import pytest

from lift.explore.bandwidth import StreamingBandwidth
from lift.explore.driver import explore
from lift.explore.evaluation import TimingPolicy
from lift.explore.rewrite_search import RewriteSearch
from lift.ir.program_file import load_program_file

from opencl_device import needs_device

NORMALISE = '''from lift import *
N = SizeVar("N")
SIZES = {"N": 1 << 14}


@userfun
def add(x: Float, y: Float) -> Float:
    return x + y


@userfun
def divide_by(x: Float, total: ArrayType(Float, 1)) -> Float:
    return x / total[0]


normalise = fun([ArrayType(Float, N)], lambda x: fun(lambda s: Map(lambda v: divide_by(v, s))(x))(Reduce(add, 0.0)(x)))
inline = fun([ArrayType(Float, N)], lambda x: Map(lambda v: divide_by(v, Reduce(add, 0.0)(x)))(x))
'''


@needs_device
@pytest.mark.parametrize("kernel", ["normalise", "inline"])
def test_explore_computes_the_sum_once(tmp_path, kernel):
    (tmp_path / "normalise.py").write_text(NORMALISE)
    pf = load_program_file(tmp_path / "normalise.py")
    sizes = pf.bind()
    result = explore(pf, kernel, sizes, RewriteSearch(pf.kernels[kernel], sizes, 0), budget_s=300,
                     out_dir=tmp_path / "out", max_candidates=4, work_group_sizes=(None,), progress=False,
                     timing=TimingPolicy(min_runs=3, max_runs=10, max_s=0.3),
                     bandwidth=StreamingBandwidth(copy_gbps=10.0, read_gbps=10.0, launch_ms=0.002, nbytes=0))
    assert len(result.ranked) == 4 and all(r.ok for r in result.ranked), [r.reason for r in result.ranked]
    assert all(re.match(r"λ x\. \(λ s(_\d+)?\. ", r.expression) for r in result.ranked), [r.expression for r in result.ranked]
