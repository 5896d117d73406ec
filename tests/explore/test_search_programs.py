"""The rewrite search on programs beyond the paper's, written as a new user would (`examples/normalise.py`,
`colsum.py`, `transpose.py`, `jacobi.py`): the moves the rules give them are proposed, placed by selectors, and their candidates
compute what the interpreter computes."""

import itertools
import re

import numpy as np
import pytest

import lift
from lift import interpret
from lift.explore.bandwidth import StreamingBandwidth
from lift.explore.driver import explore
from lift.explore.evaluation import TimingPolicy
from lift.explore.rewrite_search import RewriteSearch
from lift.opencl_gen.compiled import compile

from opencl_device import HAVE_DEVICE, needs_device

# (file, kernel, sizes, a pattern of the paper-notation text that only the new moves give)
PROGRAMS = [
    ("normalise", "normalise", {"N": 4096},
     r"reduce-seq\(add, 0\.0\) ∘ join ∘ (asScalar ∘ )?map-(global|workgroup)\("),  # the sum in parallel chunks
    ("colsum", "colsum", {"M": 64, "N": 32},
     r"transpose ∘ map-global\(join ∘ transpose ∘ reduce-seq\("),  # chunks of rows folded into partial sums
    ("transpose", "transpose", {"M": 64, "N": 32},
     r"map-global\(map\(join\) ∘ transpose ∘ map-seq\(map-seq\(map-seq"),  # tiles
    ("jacobi", "jacobi2d", {"L": 1, "N": 64, "M": 16},
     r"map-global\[1\]\(join ∘ map-global\("),  # blocks of a row on dimension 0, rows on dimension 1
    ("jacobi", "jacobi2d", {"L": 1, "N": 64, "M": 16},
     r"map-global\(λ nb\. reduce-seq\(.*\) ∘ join ∘ map-seq\(reduce-seq\("),  # windows folded row by row
    ("jacobi", "jacobi1d", {"L": 256},
     r"map\(split-\d+\) ∘ transpose ∘ slide\(3, 1\)"),  # blocks of results from shifted rows of the grid
    ("jacobi", "jacobi1d", {"L": 256},
     r"map-global\(.*asScalar.*reduce-seq-unroll\(.*asVector-\d+ ∘ transpose\) ∘ split-\d+ ∘ slide"),  # vector windows
    ("jacobi", "jacobi1d", {"L": 200},  # 200 is no multiple of 16: blocks of 8 (or 4) windows
     r"map-global\(.*reduce-seq-unroll\(.*asVector-8 ∘ transpose\) ∘ split-8 ∘ slide"),
    ("jacobi", "jacobi2d", {"L": 1, "N": 64, "M": 13},
     r"map-global\[1\]\(join ∘ map-global\(.*reduce-seq-unroll\(.*asVector-\d+"),  # vector windows in rows
    ("jacobi", "jacobi1d", {"L": 201},  # 201 is odd: vector windows over windows padded to a multiple of the block
     r"take-\(L\) ∘ join ∘ map-global\(.*reduce-seq-unroll\(.*asVector-\d+ ∘ transpose\) ∘ split-\d+ "
     r"∘ pad-to-multiple"),
    ("jacobi", "jacobi2d", {"L": 1, "N": 37, "M": 5},  # rows of 37 windows padded to a multiple of the block
     r"map-global\[1\]\(take-\(N\) ∘ join ∘ map-global\(.*reduce-seq-unroll\(.*asVector-\d+"
     r".*pad-to-multiple"),
    ("jacobi", "jacobi2d", {"L": 1, "N": 41, "M": 12},  # stencil row blocks, rows of 41 windows padded
     r"map-global\[1\]\(transpose ∘ .*map-seq-unswitch\(map-seq-unroll\(λ nb\. reduce-seq-unroll\(.*"
     r"pad-to-multiple"),
    ("jacobi", "jacobi2d", {"L": 1, "N": 67, "M": 61},  # column strips, rows extended, walked by map-seq-slide
     r"take-\(N\) ∘ join ∘ map\(transpose\) ∘ map-global\(map-seq-slide\(.*asVector-\d+ ∘ transpose "
     r"∘ slide\(3, 1\)"),
    ("stencils", "jacobi2d5_high", {"N": 64, "M": 16},  # column strips in blocks of rows
     r"map-global\(join ∘ map-global\[1\]\(map-seq-slide\(.*asVector-\d+ ∘ transpose ∘ slide\(3, 1\)"),
]


def _found(program, sizes, pattern, limit=400):
    """The search's candidates up to the first whose text matches `pattern` (at most `limit`)."""
    taken = []
    for candidate in itertools.islice(RewriteSearch(program, sizes, seed=0), limit):
        taken.append(candidate)
        if re.search(pattern, lift.paper(candidate.program)):
            return taken
    pytest.fail(f"no candidate matches {pattern!r} among {len(taken)}")


@pytest.mark.parametrize("stem, kernel, sizes, pattern", PROGRAMS)
def test_the_new_moves_are_proposed(examples, stem, kernel, sizes, pattern):
    _found(examples[stem].kernels[kernel], sizes, pattern)


@needs_device
@pytest.mark.parametrize("stem, kernel, sizes, pattern", PROGRAMS)
def test_the_candidates_compute_what_the_program_means(examples, stem, kernel, sizes, pattern):
    """The first candidates and the first of the new moves, run on the device, against the interpreter."""
    pf = examples[stem]
    program = pf.kernels[kernel]
    inputs = pf.inputs(kernel, sizes, seed=2)
    want = np.ravel(interpret(program, *inputs))
    taken = _found(program, sizes, pattern)
    for candidate in taken[:4] + taken[-1:]:
        got = np.ravel(compile(candidate.program, sizes=sizes)(*inputs))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=lift.paper(candidate.program))


@needs_device
def test_explore_finds_working_column_sums(examples, tmp_path):
    """A short `lift explore` of column sums: every candidate works, partial sums among them."""
    pf = examples["colsum"]
    sizes = {"M": 256, "N": 128}
    result = explore(pf, "colsum", sizes, RewriteSearch(pf.kernels["colsum"], sizes, 0), budget_s=300,
                     out_dir=tmp_path / "out", max_candidates=6, work_group_sizes=(None,), progress=False,
                     timing=TimingPolicy(min_runs=3, max_runs=10, max_s=0.3),
                     bandwidth=StreamingBandwidth(copy_gbps=10.0, read_gbps=10.0, launch_ms=0.002, nbytes=0))
    assert len(result.ranked) == 6 and all(r.ok for r in result.ranked), [r.reason for r in result.ranked]
    assert any("partial-sums" in str(r.params) for r in result.ranked)


def test_a_convolution_over_channels_gets_the_stencil_moves(examples):
    """A map over filters, each mapping a 2-D stencil over the windows of every channel (`examples/conv2d.py`): the
    stencil's moves apply in the map's function, the map over filters on dimension 2 (`batched_moves`), and the
    candidates compute what the interpreter computes, at sizes no block divides."""
    pf = examples["conv2d"]
    program, sizes = pf.kernels["conv2d"], {"C": 3, "K": 2, "H": 8, "W": 41}
    taken = list(itertools.islice(RewriteSearch(program, sizes, seed=0), 80))
    moves = {}
    for c in taken:
        moves.setdefault(c.params.get("grids@body", "").split("(")[0], c)
    assert {"row-blocks-2d", "vector-windows-2d", "folded-rows-2d"} <= set(moves), sorted(moves)
    assert all("map-global[2](" in lift.paper(c.program) for c in moves.values() if c.params.get("grids@body"))
    inputs = pf.inputs("conv2d", sizes, seed=3)
    want = np.ravel(interpret(program, *inputs))
    np.testing.assert_allclose(np.ravel(pf.namespace["reference"](*inputs)), want, rtol=1e-4, atol=1e-4)
    if HAVE_DEVICE:
        for c in moves.values():
            got = np.ravel(compile(c.program, sizes=sizes)(*inputs))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=lift.paper(c.program))
