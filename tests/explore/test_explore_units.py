"""The explorer's parts that need no device: budgets, keys, the output check, timing, the log, the cost model."""

import dataclasses
import itertools
import json
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from lift import (ArrayType, Float, Get, Id, Join, Literal, MapGlb, MapSeq, MapSeqUnroll, ReduceSeq, SizeVar, Split,
                  ToPrivate, UserFun, Zip, fun, python_source)
from lift.explore.candidate import Candidate, program_key
from lift.explore.cost_model import DeviceModel, predict
from lift.explore.cost_walk import SPILL_OPS, KernelProfile, profile
from lift.explore.rank_correlation import spearman
from lift.explore.driver import ExploreError, explore, parse_budget
from lift.explore.evaluation import TimingPolicy, check_output, measure
from lift.explore.log import Record, ResultLog
from lift.opencl_gen.kernels import generate
from lift.rules import RewriteEngine
from lift.rules.column_strips import column_strip_walk
from lift.rules.column_sums import grid_windows
from lift.rules.default_lowering import clean_up, lower, lower_rest
from lift.rules.macro_rules import register_blocked
from lift.rules.strategy import Focus, derive, outermost

N = SizeVar("N")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("text, seconds", [("90s", 90), ("10m", 600), ("1h", 3600), ("1.5h", 5400), (" 45 ", 45),
                                           ("0.5m", 30), ("2M", 120)])
def test_budgets_parse_as_seconds(text, seconds):
    assert parse_budget(text) == seconds


@pytest.mark.parametrize("text", ["", "m", "10x", "ten minutes", "-5m", "0s", "1h30m"])
def test_bad_budgets_are_rejected_clearly(text):
    with pytest.raises(ExploreError, match="budget"):
        parse_budget(text)


@pytest.mark.parametrize("settings, message", [(dict(budget_s=0), "budget must be positive"),
                                               (dict(jobs=0), "jobs must be at least 1"),
                                               (dict(max_candidates=0), "max_candidates must be at least 1"),
                                               (dict(work_group_sizes=()), "work_group_sizes"),
                                               (dict(work_group_sizes=(1, 1)), "work_group_sizes"),
                                               (dict(work_group_sizes=(None, 0)), "work_group_sizes")])
def test_bad_explore_settings_are_rejected_before_anything_runs(tmp_path, settings, message):
    with pytest.raises(ExploreError, match=message):
        explore(EXAMPLES / "asum.py", "asum", None, [], out_dir=tmp_path, **{"budget_s": 60, **settings})
    assert not any(tmp_path.iterdir())


def test_spearman_ranks_with_ties():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 2, 3], [5, 6, 7, 8]) == pytest.approx(0.9486832980505138)
    assert spearman([1, 1, 1], [1, 2, 3]) == 0.0
    with pytest.raises(ValueError):
        spearman([1, 2], [1])


def _twice(f, chunk=64):
    """`join ∘ map-global(map-seq(f) ∘ map-seq(f)) ∘ split-chunk`: the composition binds a fresh parameter."""
    return fun([ArrayType(Float, N)], lambda x: (Join() @ MapGlb(MapSeq(f) @ MapSeq(f)) @ Split(chunk))(x))


def test_keys_ignore_binder_names_but_not_structure_or_user_code():
    ident = UserFun("ident", ("v",), "return v;", (Float,), Float, python=lambda v: v)
    negate = UserFun("ident", ("v",), "return -v;", (Float,), Float, python=lambda v: -v)
    a, b = _twice(ident), _twice(ident)
    assert python_source(a) != python_source(b), "built twice, the composition's parameter has two names"
    assert program_key(a) == program_key(b)
    assert program_key(a) != program_key(_twice(negate)), "a user function's body is part of the key"
    assert program_key(a) != program_key(_twice(ident, 32))
    assert Candidate(a, [{"rule": "r"}]).key == program_key(a)


def test_a_work_group_size_changes_key_params_and_launch_but_not_the_program():
    program = _twice(UserFun("ident", ("v",), "return v;", (Float,), Float, python=lambda v: v))
    plain = Candidate(program, [{"rule": "r"}], {"chunk": 64})
    at = {n: plain.with_local_size(n) for n in (None, 1, 64)}
    assert at[None].key == plain.key == program_key(program), "the driver's choice keeps the program's key"
    assert len({c.key for c in at.values()}) == 3
    assert at[64].key == Candidate(program, local_size=64).key == program_key(program, 64)
    assert [c.params for c in at.values()] == [{"chunk": 64, "local_size": n} for n in (None, 1, 64)]
    assert plain.params == {"chunk": 64} and at[64].derivation == plain.derivation
    sizes = {"N": 4096}
    launches = [[(k.launch.evaluate(sizes)) for k in c.generate("twice", sizes).kernels] for c in at.values()]
    assert launches == [[((64,), None)], [((64,), (1,))], [((64,), (64,))]]
    from lift.opencl_gen.manifest import header, manifest

    generated = at[64].generate("twice", sizes)
    assert [k["local_size"] for k in manifest(generated)["kernels"]] == [["64"]]
    assert "global [64], local [64]" in header(generated)
    assert [k["local_size"] for k in manifest(at[None].generate("twice", sizes))["kernels"]] == [None]


def test_local_size_overrides_only_touch_kernels_the_driver_would_size():
    """A driver-sized kernel gets `local` work-items along dimension 0 (one along the others); a kernel whose
    expression fixes its work-groups (asum's Figure 9(c) form) is left alone."""
    from lift.ir.program_file import load_program_file
    from lift.opencl_gen.launch import Launch, local_size_overrides
    from lift.types.arith import Cst

    ident = UserFun("ident", ("v",), "return v;", (Float,), Float, python=lambda v: v)
    two_d = fun([ArrayType(ArrayType(Float, 32), N)], lambda a: MapGlb(1)(MapGlb(0)(ident))(a))
    g = generate(two_d, "two_d", {"N": 8})
    assert [k.launch.evaluate({}) for k in g.kernels] == [((32, 8), None)]
    overrides = local_size_overrides(g.kernels, 4)
    assert overrides == {0: Launch(g.kernels[0].launch.global_size, (Cst(4), Cst(1)))}
    assert overrides[0].evaluate({}) == ((32, 8), (4, 1))
    fixed = generate(load_program_file(EXAMPLES / "asum.py").kernels["asum_intel"], "asum", {"N": 1 << 16})
    assert all(k.launch.local_size is not None for k in fixed.kernels)
    assert local_size_overrides(fixed.kernels, 4) == {}


def test_keys_are_stable_across_processes():
    script = ("import itertools, sys; sys.path.insert(0, sys.argv[1])\n"
              "from lift.ir.program_file import load_program_file\n"
              "from lift.explore.candidate import program_key\n"
              "pf = load_program_file(sys.argv[2])\n"
              "print(program_key(pf.kernels['asum_amd']))\n")
    from lift.ir.program_file import load_program_file

    here = program_key(load_program_file(EXAMPLES / "asum.py").kernels["asum_amd"])
    there = subprocess.run([sys.executable, "-c", script, str(EXAMPLES), str(EXAMPLES / "asum.py")],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert here == there


def test_output_check_tolerates_reassociation_and_catches_wrong_results():
    rng = np.random.default_rng(0)
    want = rng.uniform(-1, 1, 1000).astype(np.float32) * 1000
    assert check_output(want * np.float32(1 + 1e-5), want) is None
    assert check_output(want + np.float32(0.5), want) is None, "errors are measured against the output's magnitude"
    wrong = want.copy()
    wrong[17] += 10
    reason = check_output(wrong, want)
    assert "1 of 1000 elements differ" in reason and "[17]" in reason
    assert "shape" in check_output(want[:10], want)
    with_nan = want.copy()
    with_nan[3] = np.nan
    assert check_output(with_nan, with_nan) is None
    assert check_output(with_nan, want) is not None
    pairs = np.zeros(4, dtype=[("_0", np.float32), ("_1", np.float32)])
    pairs["_1"] = [1, 2, 3, 4]
    bad = pairs.copy()
    bad["_1"][2] = 9
    assert check_output(pairs, pairs) is None
    assert check_output(bad, pairs).startswith("component _1")


def test_adaptive_timing_stops_when_stable_or_at_the_cap():
    steady = measure(lambda: (1.0, 0.5), TimingPolicy(min_runs=5, max_runs=50))
    assert (steady.runs, steady.median_ms, steady.per_kernel_ms, steady.stable) == (5, 1.5, (1.0, 0.5), True)
    noisy = itertools.cycle([(1.0,), (2.0,)])
    capped = measure(lambda: next(noisy), TimingPolicy(min_runs=4, max_runs=12))
    assert capped.runs == 12 and not capped.stable
    assert capped.q1_ms <= capped.median_ms <= capped.q3_ms


def _record(key, status="ok", time_ms=1.0, **kw):
    return Record(key, "dev (driver 1)", "asum", {"N": 1024}, status, time_ms=time_ms,
                  gbps=None if time_ms is None else 4.0 / time_ms, **kw)


def test_the_log_resumes_and_drops_a_line_cut_short(tmp_path):
    path = tmp_path / "log.jsonl"
    with ResultLog(path) as log:
        log.append(_record("a", derivation=({"rule": "split-join", "at": "body"},)))
        log.append(_record("b", status="crash", time_ms=None, reason="the worker died"))
    with open(path, "a") as f:
        f.write('{"key": "c", "dev')
    with ResultLog(path) as log:
        assert log.find("a", "dev (driver 1)", "asum", {"N": 1024}).derivation == ({"rule": "split-join", "at": "body"},)
        assert log.find("b", "dev (driver 1)", "asum", {"N": 1024}).status == "crash"
        assert log.find("a", "dev (driver 2)", "asum", {"N": 1024}) is None, "another driver is another device"
        assert log.find("a", "dev (driver 1)", "asum", {"N": 2048}) is None
        assert log.find("a", "dev (driver 1)", "asum", {"N": 1024}, role="baseline") is None
        log.append(_record("c"))
    lines = path.read_text().splitlines()
    assert [json.loads(l)["key"] for l in lines] == ["a", "b", "c"]
    with ResultLog(path) as log:
        assert len(log.matching("dev (driver 1)", "asum", {"N": 1024})) == 3


LOWERED = [("scal", "scal_vectorised", {"N": 1 << 16}), ("scal", "scal_global", {"N": 4096}),
           ("asum", "asum_nvidia", {"N": 1 << 18}), ("asum", "asum_amd", {"N": 1 << 14}),
           ("asum", "asum_intel", {"N": 1 << 16}), ("dot", "dot_cpu", {"N": 1 << 16}),
           ("gemv", "gemv_workgroup", {"M": 64, "N": 1024}), ("gemv", "gemv_coalesced", {"M": 64, "N": 4096}),
           ("blackscholes", "blackscholes_global", {"N": 4096}), ("md", "md_global", {"P": 1024, "K": 32})]
CPU = DeviceModel.for_device("cpu", 2, 20.0, 0.002, 32768, 4096, 8)
GPU = DeviceModel.for_device("gpu", 80, 800.0, 0.005, 49152, 1024, 1)


@pytest.mark.parametrize("stem, kernel, sizes", LOWERED)
def test_cost_model_profiles_every_kernel_the_generator_emits(examples, stem, kernel, sizes):
    g = generate(examples[stem].kernels[kernel], kernel, sizes)
    profiles = profile(g)
    assert [p.name for p in profiles] == [k.name for k in g.kernels]
    assert sum(p.global_bytes for p in profiles) > 0
    assert all(0 < predict(profiles, m) < math.inf for m in (CPU, GPU))


def test_cost_model_counts_traffic_work_and_barriers(examples):
    n = 1 << 18
    nvidia, amd = (profile(generate(examples["asum"].kernels[k], k, {"N": n})) for k in ("asum_nvidia", "asum_amd"))
    assert nvidia[0].global_bytes >= 4 * n and nvidia[1].global_bytes == 2 * 4
    assert nvidia[0].barriers == 1 + 7, "the local reduction and seven tree steps (the copy out writes the " \
                                        "kernel's output, which no work-item of the group reads: no barrier)"
    assert (nvidia[0].work_items, nvidia[0].group_size) == (128, 128)
    assert amd[0].calls[4] > 0 and amd[0].local_bytes > 0
    assert predict(nvidia, CPU) > predict(profile(generate(examples["asum"].kernels["asum_intel"], "i", {"N": n})), CPU)


def _blocked(examples, h, w, vector=None, sizes=None):
    program = examples["matmul"].kernels["matmul"]
    return generate(derive(register_blocked(h, w, vector), program, sizes).replay(program), "mm", sizes)


@pytest.mark.parametrize("h, w", [(4, 16), (8, 8), (1, 64)])
def test_cost_model_reads_a_register_block_once_per_step(examples, h, w):
    """A work-item's `h × w` block reads `h` elements of A and `w` of B per step of the reduction (a load
    hoisted, or shared by the unrolled copies), and its scalar multiplications and additions, and the loads of B,
    are packed `w` lanes wide (SLP). Consecutive work-items (blocks of columns) share the rows of A."""
    sizes = {"M": 64, "K": 32, "N": 64}
    (k,) = profile(_blocked(examples, h, w, sizes=sizes))
    steps = (64 // h) * (64 // w) * 32
    assert k.global_bytes == 4 * steps * (h + w) + 4 * 64 * 64 and k.shared_bytes == 4 * steps * h
    assert k.slp == {w: 2 * steps * h + steps} and not k.calls


AVX512 = DeviceModel.for_device("cpu", 2, 20.0, 0.002, 32768, 4096, 16, cache_bytes=32 << 20)
AVX2 = dataclasses.replace(AVX512, vector_width=8)


def test_cost_model_packs_scalar_code_into_narrower_vectors_than_float16(examples):
    """On a CPU of 16 native lanes the compiler packs scalar code into 8-lane vectors (`AUTO_VECTOR_LANES`): a
    register block of scalars takes twice the operations of one of `float16`s, a vectorised loop twice those of
    `vectorize-16`; on a CPU of 8 native lanes both the same."""
    sizes = {"M": 256, "K": 256, "N": 256}
    (scalars,), (vectors,) = (profile(_blocked(examples, 4, 16, v, sizes)) for v in (None, 16))
    assert set(vectors.calls) == set(scalars.slp) == {16} and not scalars.calls and not vectors.slp
    assert predict([vectors], AVX512) < predict([scalars], AVX512)
    assert predict([vectors], AVX2) == pytest.approx(predict([scalars], AVX2), rel=0.01)  # but their copy-out
    loop, vector = KernelProfile("k", packed=Counter({1: 16e8})), KernelProfile("k", calls=Counter({16: 1e8}))
    assert predict([vector], AVX512) < predict([loop], AVX512)
    assert predict([vector], AVX2) == predict([loop], AVX2)


def test_cost_model_counts_each_copy_of_a_vector_operation(examples):
    """The copies of an unrolled loop of vector operations stay one instruction each (the compiler packs scalars,
    not vectors): a 1x32 block of `float2`s takes sixteen operations a step where one of scalars takes four."""
    sizes = {"M": 256, "K": 256, "N": 256}
    (scalars,), (pairs,) = (profile(_blocked(examples, 1, 32, v, sizes)) for v in (None, 2))
    steps = 256 // 32 * 256 * 256
    assert pairs.calls == {2: 16 * 2 * steps}, "a multiplication and an addition per copy and step"
    assert scalars.slp == {32: 3 * steps} and not scalars.calls, "and those of all copies as one, with the load of B"
    assert predict([scalars], AVX2) < predict([pairs], AVX2)


def test_cost_model_counts_a_private_array_in_memory_as_operations(examples):
    """Indexed by a rolled loop, a private array is memory: every access an operation; unrolled, it is registers,
    and so is a vectorised block's, whose accumulators are vectors (`vector-accumulator`)."""
    sizes = {"M": 64, "K": 32, "N": 64}
    (scalars,), (vectors,) = (profile(_blocked(examples, 4, 16, v, sizes)) for v in (None, 16))
    assert set(vectors.calls) == set(scalars.slp) == {16} and not scalars.calls and not vectors.packed
    assert predict([vectors], CPU) <= predict([scalars], CPU)

    add = UserFun("add", ("x", "y"), "return x + y;", (Float, Float), Float, python=lambda x, y: x + y)

    def folds(m):
        return fun([ArrayType(ArrayType(ArrayType(Float, 8), 16), 64)], lambda X: MapGlb(
            lambda rows: MapSeq(MapSeq(Id()))(ToPrivate(ReduceSeq(
                lambda acc, row: m(lambda e: add(Get(e, 0), Get(e, 1)))(Zip(acc, row)),
                Literal(0.0, ArrayType(Float, 8))))(rows)))(X))

    (rolled,), (unrolled,) = (profile(generate(folds(m), "f", {})) for m in (MapSeq, MapSeqUnroll))
    copy_out = 64 * 8  # a rolled map-seq(id) reads the result from the private array
    assert rolled.packed == {1: (3 + SPILL_OPS) * 64 * 16 * 8 + 2 * copy_out} and not rolled.calls, \
        "an addition, a store of the accumulator and a load of the row per element, a load of the accumulator that " \
        "waits on the previous step's store (`SPILL_OPS`), a load and a store per element copied out, all in loops " \
        "a compiler vectorises"
    assert unrolled.slp == {8: 2 * 64 * 16} and not unrolled.calls and unrolled.packed == {1: 2 * copy_out}, \
        "an addition and a load of the row per step, each for the eight copies as one (SLP)"


def test_cost_model_reads_what_a_group_shares_once():
    k = KernelProfile("k", global_bytes=8e8, shared_bytes=6e8, work_items=1024, group_size=None, items_in_row=64)
    alone = dataclasses.replace(k, items_in_row=1)
    assert predict([k], CPU) < predict([alone], CPU) == predict([dataclasses.replace(k, shared_bytes=0)], CPU)


def test_cost_model_prices_a_written_byte_at_the_copy_rate(examples):
    """With the copy's rate known, a byte written costs what a copy's does beyond its read: a kernel that copies `n`
    bytes, reading and writing them, takes `2n / copy_gbps`; one that only reads them `n / bandwidth_gbps`."""
    copying = dataclasses.replace(CPU, copy_gbps=10.0, stream_gbps=0.0)
    n = 4e8
    copy = KernelProfile("copy", global_bytes=2 * n, written_bytes=n, work_items=1 << 20, group_size=64)
    read = dataclasses.replace(copy, global_bytes=n, written_bytes=0.0)
    assert predict([copy], copying) == pytest.approx(copying.launch_ms + 2 * n / 10.0 * 1e-6)
    assert predict([read], copying) == predict([read], CPU) == pytest.approx(CPU.launch_ms + n / 20.0 * 1e-6)
    (scal,) = profile(generate(lower(examples["scal"].kernels["scal"], {"N": 1 << 20}), "scal", {"N": 1 << 20}))
    assert scal.written_bytes == 4 << 20 and scal.global_bytes == 8 << 20


def _strips(examples, h, sizes):
    """`jacobi2d5_high` walked down column strips of 16 floats, in blocks of `h` rows (0: all of them)."""
    program = examples["stencils"].kernels["jacobi2d5_high"]
    focus = (outermost(grid_windows, column_strip_walk(16, 0, h)) >> lower_rest >> clean_up)(
        Focus(program, RewriteEngine(sizes=sizes)))
    return profile(generate(focus.program, "j", sizes))


def test_cost_model_reads_a_stencils_window_and_prices_a_walk_down_many_rows(examples):
    """A 2-D stencil's column strip walked by `map-seq-slide` reads its window's rows from the grid (each three
    times, a row's three shifted vectors); a walk down all 256 rows of a strip, more than a core's prefetcher follows
    (`PREFETCH_STREAMS`), reads each line at `ROW_LINE_NS`, so it is predicted slower than walks of blocks of 8 rows,
    which read and write the same bytes."""
    sizes = {"M": 256, "N": 256}
    whole, blocks = _strips(examples, 0, sizes), _strips(examples, 8, sizes)
    grid = 4 * 256 * 256
    assert whole[0].array_reads["a"] >= 3 * grid and blocks[0].array_reads["a"] >= 3 * grid
    assert whole[0].row_walks["a"] >= grid and not blocks[0].row_walks
    assert predict(whole, AVX512) > predict(blocks, AVX512)
    unwalked = [dataclasses.replace(whole[0], row_walks=Counter())]
    assert predict(whole, GPU) == predict(unwalked, GPU), "a GPU's work-items read a row's lines together"


XEON = DeviceModel.for_device("cpu", 2, 56.0, 0.002, 2 << 20, 4096, 16, cache_bytes=32 << 20, near_cache_bytes=2 << 20,
                              copy_gbps=56.0)
"""The 2-core Xeon whose candidates `benchmarks.bench_cost_model` re-timed: a 2 MB L2 a core."""


def test_cost_model_reads_an_array_a_cores_cache_holds_at_its_rate(examples):
    """A 512² grid (1 MB) stays in a core's L2 between the runs: every load from it, a window's re-reads too, comes
    from there at `near_gbps` while the core issues its other operations. Column strips load each row once, the
    default lowering's rows of windows each row three times (re-timed on the Xeon: 0.061 against 0.103 ms): predicted
    faster, where without `near_gbps` both are priced at the memory's floor. A 2048² grid (16 MB) is not in L2."""
    sizes = {"M": 512, "N": 512}
    program = examples["stencils"].kernels["jacobi2d5_high"]
    strips = _strips(examples, 8, sizes)
    rows = profile(generate(lower(program, sizes), "j", sizes))
    assert rows[0].array_reads["a"] > 1.5 * strips[0].array_reads["a"]
    assert predict(rows, XEON) > 1.2 * predict(strips, XEON)
    blind = dataclasses.replace(XEON, near_gbps=0.0)
    assert predict(rows, blind) == pytest.approx(predict(strips, blind), rel=0.05)
    large = {"M": 2048, "N": 2048}
    rows = profile(generate(lower(program, large), "j", large))
    assert predict(rows, XEON) == predict(rows, blind)


def test_cost_model_walks_the_rows_of_a_products_right_operand(examples):
    """A register block walks `K` rows of `B`'s column strip (`transpose(map(split-w)(B))`): a row walk where `K` is
    more than `PREFETCH_STREAMS`."""
    short, long = (_blocked(examples, 4, 16, 16, {"M": 64, "K": k, "N": 64}) for k in (32, 128))
    assert not profile(short)[0].row_walks and profile(long)[0].row_walks["B"] == 4 * 128 * 64 * (64 // 4)


def test_cost_model_walks_the_rows_of_a_tiled_products_right_operand(examples):
    """In work-groups of blocks (`tiled_workgroups`: the column strips split into tiles) a block walks the rows of
    its strip of `B` as one on global work-items does: the split puts them a level further down. Missed, tiled
    unpacked products at 64×4096×4096 were predicted faster than packed ones, and measured 67-92 ms against 33-41."""
    program, sizes = examples["matmul"].kernels["matmul"], {"M": 64, "K": 128, "N": 64}
    tiled = generate(derive(register_blocked(4, 16, 16, tiles=(4, 2)), program, sizes).replay(program), "mm", sizes)
    assert profile(tiled)[0].row_walks["B"] == profile(_blocked(examples, 4, 16, 16, sizes))[0].row_walks["B"] > 0


def test_cost_model_reads_a_packed_copy_as_an_array_and_prices_walking_rows_again(examples):
    """A register block walks a strip of `B` down its `K` rows once per block of rows of `A`: from the shared cache
    at `ROW_CACHE_LINE_NS` a line where `B` fits in it but not in a core's own cache; a packed copy of its strips
    (`pack-copy`, a kernel of its own) is read as an array of its size, whose re-reads come from the cache, streamed,
    so the packed product is predicted faster (1024³ on the Xeon: 6.5 ms packed, 15-19 ms not)."""
    program, sizes = examples["matmul"].kernels["matmul"], {"M": 256, "K": 256, "N": 256}
    walked, packed = (profile(generate(derive(register_blocked(4, 32, 16, padded=True, packed=p), program, sizes)
                                       .replay(program), "mm", sizes)) for p in (False, True))
    assert walked[0].row_walks["B"] == 4 * 256 * 256 * (256 // 4) and len(packed) == 2 and not packed[1].row_walks
    copy = next(name for name in packed[1].array_bytes if name not in ("A", "B"))
    assert packed[1].array_bytes[copy] == 4 * 256 * 256 and packed[1].array_reads[copy] > 0
    assert predict(packed, AVX512) < predict(walked, AVX512)


def test_cost_model_rules_out_what_the_device_cannot_run():
    k = KernelProfile("k", global_bytes=1e6, work_items=256, group_size=64, local_mem_bytes=1 << 20)
    assert predict([k], CPU) == math.inf
    k.local_mem_bytes, k.group_size = 0, 2048
    assert predict([k], GPU) == math.inf
    k.group_size = 256
    assert predict([k], GPU) < math.inf


def test_a_timing_policy_needs_two_runs_for_its_quartiles():
    with pytest.raises(ValueError, match="min_runs"):
        TimingPolicy(min_runs=1)
    with pytest.raises(ValueError, match="max_runs"):
        TimingPolicy(min_runs=5, max_runs=3)
