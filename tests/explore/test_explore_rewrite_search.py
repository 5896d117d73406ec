"""The rewrite search proposes distinct, replayable, correct lowerings, and learns from measured times."""

import numpy as np
import pytest

import lift
from lift import interpret
from lift.explore.rewrite_search import Bandit, RewriteSearch
from lift.explore.search_moves import reduction_moves
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import compile
from lift.opencl_gen.kernels import generate
from lift.rules import Derivation, alpha_equal, canonical
from lift.rules.default_lowering import default_lowering

try:
    runtime.select_device()
    HAVE_DEVICE = True
except lift.LiftError:
    HAVE_DEVICE = False


def _derivation(candidate, sizes):
    steps = [{"rule": s["rule"], "at": s["at"], "params": s["params"]} for s in candidate.derivation]
    import json

    return Derivation.from_json(json.dumps({"sizes": sizes, "steps": steps}))


@pytest.mark.parametrize("stem, sizes, count", [
    ("asum", {"N": 1 << 16}, 12), ("dot", {"N": 1 << 16}, 6), ("scal", {"N": 1 << 14}, 8),
    ("gemv", {"M": 256, "N": 256}, 4), ("md", {"P": 1024, "K": 8}, 3), ("blackscholes", {"N": 4096}, 3),
    ("asum", {"N": 65537}, 12), ("dot", {"N": 4097}, 6),
])
def test_candidates_are_distinct_lowered_and_replayable(examples, stem, sizes, count):
    pf = examples[stem]
    program = pf.kernels[stem]
    search = RewriteSearch(program, sizes, seed=1)
    seen = []
    for candidate in search:
        generate(candidate.program, stem, sizes)
        replayed = _derivation(candidate, sizes).replay(program)
        assert alpha_equal(replayed, candidate.program)
        assert all(canonical(candidate.program) != canonical(other) for other in seen)
        seen.append(candidate.program)
        if len(seen) == count:
            break
    assert len(seen) == count


@pytest.mark.skipif(not HAVE_DEVICE, reason="no OpenCL device")
@pytest.mark.parametrize("stem, sizes", [("asum", {"N": 1 << 16}), ("gemv", {"M": 32, "N": 512}),
                                         ("md", {"P": 64, "K": 4}), ("asum", {"N": 4097}), ("dot", {"N": 1021}),
                                         ("stencils:conv2d_high", {"N": 37, "M": 29})])
def test_candidates_compute_what_the_program_means(examples, stem, sizes):
    """A high-level stencil included: its maps of views (`map(pad)`, `map(slide)`) stay views, not kernels."""
    stem, _, kernel = stem.partition(":")
    pf = examples[stem]
    stem = kernel or stem
    program = pf.kernels[stem]
    inputs = pf.inputs(stem, sizes, seed=2)
    want = interpret(program, *inputs, numpy_shapes=True)
    for i, candidate in enumerate(RewriteSearch(program, sizes, seed=3)):
        np.testing.assert_allclose(compile(candidate.program, sizes=sizes)(*inputs), want, rtol=1e-3, atol=1e-3)
        if i == 5:
            break


def test_the_search_reaches_the_papers_cpu_strategy(examples):
    """Figure 9(c)'s shape (float4 lanes, one work-item per chunk) is among asum's candidates."""
    program = examples["asum"].kernels["asum"]
    found = [c.program for c in RewriteSearch(program, {"N": 1 << 20}, seed=0)]
    texts = [lift.paper(p) for p in found]
    assert any("asScalar ∘ map-workgroup(join ∘ map-local(reduce-seq(" in t and "asVector-4 ∘ split" in t
               for t in texts)
    assert any("map-global(reduce-seq(" in t for t in texts)
    assert any("iterate-" in t and "toLocal" in t for t in texts), "a Figure 9(a)-style local tree"


def test_the_search_pads_where_no_chunk_divides(examples):
    """At a prime size every chunked move is proposed, its input padded (`pad-reduction`); at 2^24 none is."""
    moves = reduction_moves(16_777_213, False, True, False)
    padded = {name for name, params, _ in moves if params.get("padded")}
    assert padded == {"vectorize", "chunks-global", "chunks-workgroup", "lanes-workgroup", "lanes-global", "local-tree"}
    assert not any(params.get("padded") for _, params, _ in reduction_moves(1 << 24, False, True, False))
    program = examples["asum"].kernels["asum"]
    texts = [lift.paper(c.program) for c in RewriteSearch(program, {"N": 1021}, seed=0)]
    assert any("split-" in t and "pad-to-multiple" in t for t in texts)
    x = np.random.default_rng(0).uniform(-1, 1, 1021).astype(np.float32)
    for c in RewriteSearch(program, {"N": 1021}, seed=0):
        np.testing.assert_allclose(interpret(c.program, x), [np.abs(x).sum(dtype=np.float64)], rtol=1e-5)


def test_observed_times_steer_the_bandit():
    import random

    bandit = Bandit(random.Random(0))
    options = ["slow", "fast"]
    for _ in options:
        pick = options[bandit.choose("d", options)]
        bandit.reward((("d", pick),), 0.1 if pick == "slow" else 1.0)
    picks = [options[bandit.choose("d", options)] for _ in range(20)]
    for pick in picks:
        bandit.reward((("d", pick),), 0.1 if pick == "slow" else 1.0)
    assert picks.count("fast") > picks.count("slow")


def test_a_search_rewards_the_choices_of_a_measured_candidate(examples):
    program = examples["scal"].kernels["scal"]
    search = RewriteSearch(program, {"N": 4096}, seed=0)
    candidate = next(c for c in search if c.key in search.choices_of)  # the first the bandit built
    search.observe(candidate, 1.0)
    choices = search.choices_of[candidate.key]
    assert [d for d, _ in choices] == ["map@body", f"map@body/{choices[0][1]}"], "the kind of move, then its variant"
    for decision, option in choices:
        assert search.bandit.stats[(decision, option)] == (1, 1, 1.0)


@lift.userfun
def _plus(x: lift.Float, y: lift.Float) -> lift.Float:
    return x + y


N, M = lift.SizeVar("N"), lift.SizeVar("M")


@pytest.mark.parametrize("program, decided", [
    (lift.fun([lift.ArrayType(lift.Float, N)], lambda x: lift.Reduce(_plus, 0.0)(x)), True),
    (lift.fun([lift.ArrayType(lift.Float, 4)], lambda x: lift.Reduce(_plus, 0.0)(x)), False),
    (lift.fun([lift.ArrayType(lift.Float, 16)], lambda x: lift.Reduce(_plus, 0.0)(x)), False),
    (lift.fun([lift.ArrayType(lift.Float, 32)], lambda x: lift.Reduce(_plus, 0.0)(x)), True),
    (lift.fun([lift.ArrayType(lift.ArrayType(lift.Float, N), M)],
              lambda a: lift.Map(lambda r: lift.Reduce(_plus, 0.0)(r))(a)), True),
    (lift.fun([lift.ArrayType(lift.ArrayType(lift.Float, N), M)],
              lambda a: lift.MapGlb(lambda r: lift.Reduce(_plus, 0.0)(r))(a)), False),
])
def test_lane_reductions_get_no_moves(program, decided):
    """A reduction of a constant length up to 16 (lanes) or inside a work-item is left to `lower_rest`."""
    point = RewriteSearch(program, {"N": 1024, "M": 8}).next_point(program)
    assert (point is not None and point[1].startswith("reduce@")) == decided


def test_asums_lanes_take_no_decision_and_every_kind_is_still_proposed(examples):
    """After `reduce-lanes` the reduction of the 4 lanes took reduction moves of its own (a `sequential` decision
    nested in each vectorised candidate); now a vectorised candidate decides the vectorisation, then the
    reduction of float4s, and each kind of move, the winners' included, is still proposed."""
    search = RewriteSearch(examples["asum"].kernels["asum"], {"N": 1 << 16}, seed=0)
    candidates = [c for c in search if c.key in search.choices_of]  # the bandit's (not the default lowering's)
    decisions = [[d for d, _ in search.choices_of[c.key] if "/" not in d] for c in candidates]
    vectorised = [c for c in candidates if search.choices_of[c.key][0] == ("reduce@body", "vectorize")]
    assert vectorised and all(len(decisions[candidates.index(c)]) == 2 for c in vectorised)
    assert max(map(len, decisions)) == 2 and len(candidates) == 50
    assert {search.choices_of[c.key][0][1] for c in candidates} == {
        "sequential", "vectorize", "chunks-global", "chunks-workgroup", "lanes-global", "lanes-workgroup", "local-tree"}


def test_lift_explore_searches_rewrites_of_a_program_and_partitions_of_a_program_of_calls(examples):
    from lift.explore.search_strategy import search_for
    from lift.explore.sequence_search import SequenceSearch

    asum = examples["asum"].kernels["asum"]
    assert isinstance(search_for(asum, {"N": 1 << 12}), RewriteSearch)
    atax = examples["sequences"].kernels["atax"]
    assert isinstance(search_for(atax, {"M": 64, "N": 64}), SequenceSearch)


@pytest.mark.parametrize("stem, sizes", [("asum", {"N": 65537}), ("gemv", {"M": 37, "N": 101}),
                                         ("softmax", {"R": 13, "C": 11})])
def test_the_first_candidate_is_the_default_lowering(examples, stem, sizes):
    """What `lift.compile` runs without a tuned winner is measured first, so a short search never ends slower."""
    program = examples[stem].kernels[stem]
    first = next(iter(RewriteSearch(program, sizes, seed=1)))
    assert first.params == {"default-lowering": "yes"}
    assert alpha_equal(first.program, default_lowering(program, sizes).replay(program))
    assert alpha_equal(_derivation(first, sizes).replay(program), first.program)


def _row_variants_and_moves(examples, sizes) -> tuple:
    """The default lowering's row variants (`row-reductions`) and the `row-blocks` moves among gemv's first 61
    candidates at `sizes`, each candidate of either checked against the interpreter on the device."""
    program = examples["gemv"].kernels["gemv"]
    inputs = examples["gemv"].inputs("gemv", sizes, seed=4)
    want = interpret(program, *inputs, numpy_shapes=True)
    variants, moves = set(), set()
    for i, candidate in enumerate(RewriteSearch(program, sizes, seed=5)):
        row_params = candidate.params.get("row-reductions")
        blocks = [v for v in candidate.params.values() if v.startswith("row-blocks(")]
        if row_params or blocks:
            variants.update([row_params] if row_params else [])
            moves.update(blocks)
            np.testing.assert_allclose(compile(candidate.program, sizes=sizes)(*inputs), want, rtol=1e-3, atol=1e-3)
        if i == 60:
            break
    return variants, moves


@pytest.mark.skipif(not HAVE_DEVICE, reason="no OpenCL device")
def test_the_row_reductions_lanes_and_blocks_are_searched_and_compute_gemv(examples):
    """After the default lowering (float8 lanes, blocks of 4 rows), the search proposes the default lowering with
    each other lane width (4, 8, 16) and block (1, 2, 4, 8 rows), and row blocks as a move at the map of rows
    (`row-blocks`, after any lanes); each agrees with numpy."""
    variants, moves = _row_variants_and_moves(examples, {"M": 16, "N": 128})
    assert variants == {f"lanes={lanes}, rows={rows}" for lanes in (4, 8, 16) for rows in (1, 2, 4, 8)} - {
        "lanes=8, rows=4"}
    assert moves and moves <= {"row-blocks(rows=2)", "row-blocks(rows=4)", "row-blocks(rows=8)"}


@pytest.mark.skipif(not HAVE_DEVICE, reason="no OpenCL device")
def test_padded_row_blocks_are_searched_where_the_blocks_do_not_divide_the_rows(examples):
    """25 rows: blocks of 2 or 4 rows over the rows padded to 26 or 28 (`row-blocks` with `padded=True`; 8 rows a
    block would pad by more than an eighth), as moves and in the default lowering's variants; each agrees with
    numpy."""
    variants, moves = _row_variants_and_moves(examples, {"M": 25, "N": 128})
    assert {"lanes=4, rows=2", "lanes=16, rows=4"} <= variants
    assert moves and moves <= {"row-blocks(padded=True, rows=2)", "row-blocks(padded=True, rows=4)"}


@pytest.mark.parametrize("stem, sizes", [("conv5x5", {"M": 7, "N": 37}), ("box27", {"O": 3, "M": 5, "N": 19})])
def test_the_other_form_of_a_stencils_checked_copies_is_a_candidate(examples, stem, sizes):
    """The default lowering with its stencil's vectors at the edges folding their windows unrolled, then rolled
    (`map-seq-unswitch(f, rolled)`): the one the default does not choose is a candidate of its own, replayable and
    meaning what the program means."""
    program = examples[stem].kernels[stem]
    default = default_lowering(program, sizes).replay(program)
    variants = {params["checked-copies"]: lowered for lowered, _, params in RewriteSearch(program, sizes)
                .checked_copy_variants()}
    assert ", rolled)" in lift.paper(variants["rolled"]) and ", rolled)" not in lift.paper(variants["unrolled"])
    assert sum(alpha_equal(default, lowered) for lowered in variants.values()) == 1
    other = next(form for form, lowered in variants.items() if not alpha_equal(default, lowered))
    candidates = [c for _, c in zip(range(40), RewriteSearch(program, sizes, seed=2))]
    found = [c for c in candidates if c.params == {"checked-copies": other}]
    assert len(found) == 1 and alpha_equal(found[0].program, variants[other])
    assert alpha_equal(_derivation(found[0], sizes).replay(program), found[0].program)
    inputs = examples[stem].inputs(stem, sizes, seed=1)
    np.testing.assert_allclose(interpret(found[0].program, *inputs, numpy_shapes=True),
                               interpret(program, *inputs, numpy_shapes=True), rtol=1e-5, atol=1e-5)
