"""The explorer's reference (`lift.explore.reference`): at the explored size when it is quick enough, else at a
smaller size of the same program, where each candidate is checked before it is timed at the explored size."""

import json
from pathlib import Path

import numpy as np
import pytest

from lift import Join, MapGlb, MapLcl, MapSeq, MapWrg, ReduceSeq, Split, Vectorize, Zip, fun
from lift.explore.candidate import Candidate
from lift.explore.bandwidth import StreamingBandwidth
from lift.explore.driver import EXHAUSTED, Problem, explore
from lift.explore.evaluation import GENERATE, WRONG, TimingPolicy
from lift.explore.reference import choose_reference, reference_limit
from lift.ir.program_file import load_program_file
from numpy_references import nbody as nbody_numpy
from opencl_device import needs_device

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FAST = TimingPolicy(min_runs=3, max_runs=10, max_s=0.3)
KNOWN_BANDWIDTH = StreamingBandwidth(copy_gbps=10.0, read_gbps=10.0, launch_ms=0.002, nbytes=0)


@pytest.fixture(scope="module")
def nbody_file():
    return load_program_file(EXAMPLES / "nbody.py")


def _inputs_at(pf, name, seed=0):
    return lambda sizes: pf.inputs(name, sizes, seed)


def test_a_quick_reference_is_computed_at_the_explored_size(nbody_file):
    program = nbody_file.kernels["nbody"]
    choice = choose_reference(program, _inputs_at(nbody_file, "nbody"), {"N": 256}, limit_s=60.0)
    assert not choice.smaller and choice.note() is None and dict(choice.sizes) == {"N": 256}
    position, velocity = nbody_numpy(*choice.inputs)
    np.testing.assert_allclose(choice.output["_1"], velocity, rtol=1e-4, atol=1e-4)


def test_a_slow_reference_is_computed_at_a_smaller_size(nbody_file):
    """With no time allowed, the size of the timed probe (a sixteenth of the work: N/4) is the check's."""
    program = nbody_file.kernels["nbody"]
    choice = choose_reference(program, _inputs_at(nbody_file, "nbody"), {"N": 1024}, limit_s=0.0)
    assert choice.smaller and dict(choice.sizes) == {"N": 256} and choice.estimate_s > 0
    assert choice.note().startswith("verified at N=256 (reference at N=1024 would take ~")
    assert choice.note().endswith(" s)")
    np.testing.assert_allclose(choice.output["_1"], nbody_numpy(*choice.inputs)[1], rtol=1e-4, atol=1e-4)


def test_the_smaller_size_is_the_largest_within_the_limit(nbody_file, monkeypatch):
    """At N=2048 the probe is at N=512 (a sixteenth of the work). With its time at a microsecond per
    user-function application, N=512 takes 0.52 s, within half the limit of 1.2 s, N=1024 2.1 s, and
    N=2048 8.4 s."""
    import lift.explore.reference as reference

    ticks = iter([0.0, 512 * 1025 * 1e-6])
    monkeypatch.setattr(reference, "_clock", lambda: next(ticks))
    program = nbody_file.kernels["nbody"]
    choice = choose_reference(program, _inputs_at(nbody_file, "nbody"), {"N": 2048}, limit_s=1.2)
    assert dict(choice.sizes) == {"N": 512} and choice.inputs[0].shape == (512, 4) and choice.estimate_s == pytest.approx(2048 * 4097 * 1e-6)
    np.testing.assert_allclose(choice.output["_1"], nbody_numpy(*choice.inputs)[1], rtol=1e-4, atol=1e-4)


def test_sizes_are_not_halved_past_the_programs_constraints(examples):
    """asum_intel needs N to be a multiple of 32768: at N=65536 there is no size with a sixteenth of the work."""
    pf = examples["asum"]
    choice = choose_reference(pf.kernels["asum_intel"], _inputs_at(pf, "asum_intel"), {"N": 65536}, limit_s=0.0)
    assert not choice.smaller


def test_the_limit_is_a_share_of_the_budget():
    assert reference_limit(600) == 60 and reference_limit(10) == 2


def test_a_problem_checked_at_a_smaller_size_keeps_no_reference_at_the_explored_size(nbody_file, tmp_path):
    problem = Problem.prepare(nbody_file, "nbody", {"N": 1024}, seed=0, reference_limit_s=0.0)
    assert problem.reference is None and problem.check.sizes == {"N": 256} and problem.check.reference is not None
    assert problem.inputs[0].shape == (1024, 4) and problem.check.inputs[0].shape == (256, 4)
    assert problem.useful_bytes == 2 * 1024 * 16 + 8 + 1024 * 32
    with np.load(problem.save(tmp_path / "inputs.npz")) as stored:
        assert sorted(stored.files) == ["input_0", "input_1", "input_2", "input_3", "tolerance"]  # no reference


def _nbody_global(ns, swapped=False, chunk=None):
    """The default lowering written out (one work-item per body); `swapped` pulls each body the wrong way, and
    `chunk` groups the bodies in work-groups of `chunk`."""
    accelerate, add4, move = ns["accelerate"], ns["add4"], ns["move"]

    def body(pos, eps2, dt):
        return lambda p, v: MapSeq(lambda a: move(p, v, a, dt))(ReduceSeq(
            lambda acc, q: add4(acc, accelerate(q, p, eps2) if swapped else accelerate(p, q, eps2)),
            Vectorize(4, 0.0))(pos))

    if chunk is None:
        return fun([p.t for p in ns["nbody"].params],
                   lambda pos, vel, eps2, dt: Join()(MapGlb(body(pos, eps2, dt))(Zip(pos, vel))))
    return fun([p.t for p in ns["nbody"].params], lambda pos, vel, eps2, dt: Join()(Join()(
        MapWrg(MapLcl(body(pos, eps2, dt)))(Split(chunk)(Zip(pos, vel))))))


@needs_device
def test_explore_checks_candidates_at_the_smaller_size_and_times_them_at_the_explored_one(nbody_file, tmp_path):
    ns = nbody_file.namespace
    right, wrong, chunked = (Candidate(_nbody_global(ns)), Candidate(_nbody_global(ns, swapped=True)),
                             Candidate(_nbody_global(ns, chunk=512)))
    result = explore(nbody_file, "nbody", {"N": 1024}, [right, wrong, chunked], budget_s=300, out_dir=tmp_path,
                     timing=FAST, bandwidth=KNOWN_BANDWIDTH, progress=False, work_group_sizes=(None,),
                     reference_limit_s=0.0)
    assert result.stopped == EXHAUSTED and result.evaluated == 3
    assert result.verified.startswith("verified at N=256 (reference at N=1024 would take ~")
    assert result.verified in result.summary()
    by_key = {r.key: r for r in result.ranked}
    assert by_key[right.key].ok and result.winner.key == right.key
    assert by_key[wrong.key].status == WRONG and by_key[wrong.key].reason.startswith("at N=256: ")
    assert by_key[chunked.key].status == GENERATE
    assert by_key[chunked.key].reason.startswith("cannot be checked at N=256: ")
    assert (tmp_path / "check_inputs.npz").exists()

    manifest = json.loads(result.files["manifest"].read_text())
    assert "1024" in result.files["cl"].read_text(), "the winner is the kernel timed at the explored size"
    assert manifest["kernels"][0]["global_size"] == ["1024"]


@needs_device
def test_without_a_limit_the_reference_is_at_the_explored_size(nbody_file, tmp_path):
    ns = nbody_file.namespace
    wrong = Candidate(_nbody_global(ns, swapped=True))
    result = explore(nbody_file, "nbody", {"N": 256}, [wrong], budget_s=300, out_dir=tmp_path, timing=FAST,
                     bandwidth=KNOWN_BANDWIDTH, progress=False, work_group_sizes=(None,))
    assert result.verified is None and not (tmp_path / "check_inputs.npz").exists()
    assert result.ranked[0].status == WRONG and not result.ranked[0].reason.startswith("at N=")


def test_smaller_sizes_keep_the_power_of_two_dividing_a_size(examples):
    """A 192³ stencil's blocks of 64 windows must generate where it is checked: at 64³, not at 96³ (`CHECK_ALIGNMENT`);
    an odd size halves as before."""
    from lift.explore.reference import _smaller_sizes

    pf = examples["box27"]
    assert _smaller_sizes(pf.kernels["box27"], {"O": 192, "M": 192, "N": 193}) == [{"O": 64, "M": 64, "N": 96}]
    assert _smaller_sizes(pf.kernels["box27"], {"O": 41, "M": 39, "N": 37}) == [
        {"O": 20, "M": 19, "N": 18}, {"O": 10, "M": 9, "N": 9}, {"O": 5, "M": 4, "N": 4}, {"O": 2, "M": 2, "N": 2},
        {"O": 1, "M": 1, "N": 1}]
