"""The cost model ranks clear pairs of explored candidates as a CPU (PoCL) runs them: predictions only, on
small sizes, for candidates the rewrite search proposes (`lift.explore.rewrite_search`'s moves, lowered and
cleaned up as it does). The measured ratios quoted come from `benchmarks.bench_cost_model` on PoCL (2 cores)."""

import dataclasses

import pytest

from lift.explore.candidate import Candidate
from lift.explore.cost_model import DeviceModel, predict
from lift.explore.cost_walk import profile
from lift.explore.rewrite_search import lower_rest
from lift.explore.search_moves import grid_moves, map_moves, reduction_moves, window_moves
from lift.rules.default_lowering import clean_up, default_lowering
from lift.rules.engine import RewriteEngine
from lift.rules.macro_rules import register_blocked
from lift.rules.strategy import Focus, argument, body, derive

CPU = DeviceModel.for_device("cpu", 2, 20.0, 0.002, 32768, 4096, 8, 32 << 20)


def _predicted(program, sizes, moves, at, local_size=None, device=CPU, **wanted) -> float:
    """The predicted time on `device` of `program` after the move of `moves` named by `wanted` (its name and
    parameters), applied where `at` says, then lowered and cleaned up as the search does."""
    return _predicted_after(program, sizes, at(_move(moves, **wanted)), local_size, device)


def _move(moves, **wanted):
    """The strategy of the move of `moves` named by `wanted` (its name and parameters)."""
    (strategy,) = [s for name, params, s in moves if dict(params, name=name) == wanted]
    return strategy


def _predicted_after(program, sizes, strategy, local_size=None, device=CPU) -> float:
    """The predicted time on `device` of `program` after `strategy`, then lowered and cleaned up as the search does."""
    lowered = derive(strategy >> lower_rest >> clean_up, program, sizes).replay(program)
    return predict(profile(Candidate(lowered, local_size=local_size).generate("k", sizes)), device)


def test_blackscholes_vectorised_user_function_beats_scalar_code(examples):
    """BlackScholes is compute-bound: its user function's `exp` and `log` run once per native vector when it is
    vectorised (measured 4.5x faster at 4 lanes, 9x at 8, than a work-item per option)."""
    program, sizes = examples["blackscholes"].kernels["blackscholes"], {"N": 4096}
    moves = map_moves(4096, False, tuples=True)
    scalar = _predicted(program, sizes, moves, body, name="global")
    lanes = {w: _predicted(program, sizes, moves, body, name="vector-global", width=w) for w in (4, 8)}
    assert scalar > 3 * lanes[4] and lanes[4] > lanes[8] and scalar > 6 * lanes[8]


def test_scal_pays_for_work_groups_of_one_work_item(examples):
    """A map on global work-items in groups of one: PoCL starts every group on its own (measured 50x slower than
    the driver's groups); a loop over a chunk of scalars is vectorised by the compiler, as fast as float4s (both
    stream from memory)."""
    program, sizes = examples["scal"].kernels["scal"], {"N": 1 << 16}
    moves = map_moves(1 << 16, True)
    alone = _predicted(program, sizes, moves, body, local_size=1, name="global")
    driver = _predicted(program, sizes, moves, body, name="global")
    assert alone > 10 * driver
    chunks = _predicted(program, sizes, moves, body, name="chunks-global", chunk=1024)
    vectors = _predicted(program, sizes, moves, body, name="vector-global", width=4)
    assert chunks == pytest.approx(vectors, rel=0.5)


def test_jacobi1d_blocks_of_vectors_beat_windows_read_one_by_one(examples):
    """The 1-D stencil: blocks folding shifted rows `width` lanes at a time beat narrower lanes, scalars (their
    reads through the boundary are gathers no compiler vectorises) and a work-item per window (measured 0.6-1.5
    ms, 0.9-2 ms, 2-3.7 ms and 3.5-5 ms at 1M points)."""
    program, n = examples["stencils"].kernels["jacobi1d_high"], 1 << 14
    moves = window_moves(n, False)
    at = lambda s: body(argument(0, s))  # noqa: E731 (the map under the join)
    blocked = {w: _predicted(program, {"N": n}, moves, at, name="blocked", block=64, width=w) for w in (1, 4, 8)}
    naive = _predicted(program, {"N": n}, moves, at, name="global")
    assert blocked[8] < blocked[4] < blocked[1] < naive
    assert naive > 3 * blocked[8]


def test_jacobi2d_overlapping_windows_stream_the_grid_once(examples):
    """The 2-D stencil's nine reads of each point, through overlapping windows, stream the grid from memory once
    (the cache serves the others, whether or not the grid fits in it): the time is near the bound of the bytes it
    streams (grid in, grid out), and, where the cache serves the re-reads, the per-work-item costs of short blocks of
    vectors of windows show (measured ~3 ms for every block at 2048², where counting every read as traffic
    predicted all blocks the same)."""
    program, n = examples["stencils"].kernels["jacobi2d_high"], 512
    sizes, moves = {"M": n, "N": n}, grid_moves(n, n)
    at = lambda s: body(argument(0, s))  # noqa: E731 (the map of rows of windows)
    for device in (CPU, dataclasses.replace(CPU, cache_bytes=0)):
        blocks = {w: _predicted(program, sizes, moves, at, name="vector-windows-2d", block=w, width=16, device=device)
                  for w in (16, 256)}
        streamed_ms = 2 * 4 * n * n / device.bandwidth_gbps * 1e-6
        assert max(blocks.values()) < 3 * streamed_ms
        assert blocks[256] < blocks[16] or not device.cache_bytes


def test_nbody_driver_leaves_too_few_work_items_in_one_group(examples):
    """Where the generator leaves the group size to PoCL, it splits a group for an idle core only while each part
    keeps 32 work-items (four times its preferred multiple, the native vector width 8): N-body's 4096 bodies in
    chunks of 128 (32 work-items) run on one core, in chunks of 32 (128 work-items) on both (measured 74 ms and
    38 ms at 4096 bodies, interleaved)."""
    program, n = examples["nbody"].kernels["nbody"], 4096
    moves = map_moves(n, False)
    at = lambda s: body(argument(0, s))  # noqa: E731 (the map under the join)
    chunks = {c: _predicted(program, {"N": n}, moves, at, name="chunks-global", chunk=c) for c in (16, 32, 128, 256)}
    assert chunks[128] > 1.8 * chunks[32] and chunks[256] > 1.8 * chunks[16]
    assert chunks[16] == pytest.approx(chunks[32], rel=0.1)


def test_nbody_chunk_of_bodies_loads_every_body_again_for_each(examples):
    """A work-item's chunk of bodies is a loop around the loop over all bodies: it loads each body again for each
    body of its chunk (no compiler hoists a load out of a loop that encloses a loop it varies with), so chunks cost
    what a body per work-item does, whatever the group size (all 26 such candidates at 16384 bodies measured
    580-664 ms, re-timed in 5 interleaved rounds on a quiet machine), not 5-8% less."""
    program, n = examples["nbody"].kernels["nbody"], 4096
    moves = map_moves(n, False)
    at = lambda s: body(argument(0, s))  # noqa: E731 (the map under the join)
    for local_size in (None, 1, 64):
        one = _predicted(program, {"N": n}, moves, at, local_size, name="global")
        for chunk in (16, 32):
            chunked = _predicted(program, {"N": n}, moves, at, local_size, name="chunks-global", chunk=chunk)
            assert chunked == pytest.approx(one, rel=0.01)


def test_dot_one_core_streams_as_fast_as_two(examples):
    """A CPU core's loads run ahead of its arithmetic, so that one core alone draws most of the memory bandwidth: the
    dot product vectorised on one work-item runs about as fast as in groups on both cores (measured 5.8-6.8 ms and
    5.4-11 ms at 8M elements, interleaved), not twice as long."""
    program, n = examples["dot"].kernels["dot"], 1 << 20
    vectorised = body(_move(reduction_moves(n, False, True, True), name="vectorize", width=4))
    at = lambda s: body(argument(0, argument(0, s)))  # noqa: E731 (the reduction of vectors)
    lanes = reduction_moves(n // 4, False, False, False)
    one = _predicted_after(program, {"N": n}, vectorised >> at(_move(lanes, name="sequential")))
    both = _predicted_after(program, {"N": n}, vectorised >> at(_move(lanes, name="chunks-workgroup", chunk=4096)))
    assert one == pytest.approx(both, rel=0.4)


def test_dot_tree_work_items_walking_a_stride_read_a_cache_line_each(examples):
    """The local-memory tree's work-items each walk their chunk `reorder-stride` apart (32 elements, 128 bytes), so
    that every read loads a cache line of its own, which the next work-items re-read from the cache: slower than
    chunks read in order, even in work-groups of one work-item each (measured 17-19 ms, 12-14 ms and 15 ms at 8M
    elements, interleaved)."""
    program, n = examples["dot"].kernels["dot"], 1 << 20
    moves = reduction_moves(n, False, True, True)
    tree = _predicted(program, {"N": n}, moves, body, name="local-tree", group=32768, items=32)
    chunks = _predicted(program, {"N": n}, moves, body, name="chunks-global", chunk=16384)
    alone = _predicted(program, {"N": n}, moves, body, name="chunks-workgroup", chunk=64)
    assert tree > alone > chunks and tree > 1.3 * chunks


def _gemv_rows(examples, n: int, lanes: int, rows: int, local_size=None) -> float:
    """The predicted time on `CPU` of the `n`² gemv lowered by default with `lanes` lanes (1: scalars) per row
    reduction and blocks of `rows` rows per work-item."""
    program, sizes = examples["gemv"].kernels["gemv"], {"M": n, "N": n}
    lowered = default_lowering(program, sizes, CPU.vector_width, lanes, rows).replay(program)
    return predict(profile(Candidate(lowered, local_size=local_size).generate("k", sizes)), CPU)


def test_gemv_work_items_of_one_row_draw_one_stream_from_memory(examples):
    """gemv's work-items each reducing one row of A (64 MB, beyond the 32 MB cache) walk one stream through memory
    (x's re-reads come from the core's cache): a core's prefetcher follows it only so far ahead, so that they draw
    less than the bandwidth, where blocks of 2 to 8 rows side by side draw all of it (measured 4.8-6.6 ms against
    3.3-4.9 ms at 4096², every lane width, re-timed on a quiet machine); on one core the row's stream draws half as
    much again. Where A fits in the cache (1024²) one stream keeps up."""
    blocks = {b: _gemv_rows(examples, 4096, 8, b) for b in (1, 2, 4, 8)}
    assert blocks[1] > 1.3 * max(blocks[2], blocks[4], blocks[8])
    assert blocks[2] == pytest.approx(blocks[4], rel=0.1) and blocks[4] == pytest.approx(blocks[8], rel=0.1)
    assert _gemv_rows(examples, 4096, 8, 1, local_size=4096) > 1.8 * blocks[1]
    assert _gemv_rows(examples, 1024, 8, 1) == pytest.approx(_gemv_rows(examples, 1024, 8, 4), rel=0.1)


def test_gemv_scalar_row_blocks_wait_on_one_add_a_step_and_read_each_line_once(examples):
    """A block of rows reduced in scalars steps its accumulators side by side: each step waits on one add (its
    row's own), so that more rows a block wait less, and each row's cache line serves the block's next steps, not
    one element each (measured 9.0, 7.2-7.8, 5.1-6.5 and 4.4-6.5 ms for blocks of 1, 2, 4 and 8 rows at 4096²,
    re-timed on a quiet machine)."""
    blocks = {b: _gemv_rows(examples, 4096, 1, b) for b in (1, 2, 4, 8)}
    assert blocks[1] > blocks[2] > blocks[4] >= blocks[8]
    assert blocks[8] < 1.2 * _gemv_rows(examples, 4096, 8, 8)


POCL = DeviceModel.for_device("cpu", 2, 41.0, 0.004, 524288, 4096, 8, 32 << 20)
"""The PoCL device (2 cores, a 32 MB cache) that measured the matrix multiplications quoted below at 512³."""


def _register_blocked(examples, n: int, h: int, w: int, dims: tuple, device: DeviceModel) -> float:
    """The predicted time on `device` of the `n`³ matrix multiplication register-blocked in `h × w` blocks of scalars
    (the macro space's candidate), its (rows, columns) on global dimensions `dims`, in the driver's work-groups."""
    program, sizes = examples["matmul"].kernels["matmul"], {"M": n, "N": n, "K": n}
    lowered = register_blocked(h, w, None, dims)(Focus(program, RewriteEngine(sizes=sizes))).program
    return predict(profile(Candidate(lowered).generate("k", sizes)), device)


def test_matmul_rereads_b_from_the_cache_where_it_fits(examples):
    """A work-item per row and 64 columns re-reads all of B once per row: where B fits in the cache the re-reads
    come from it alone, where it does not from memory too (PoCL ran 1024³, B 4 MB in a 32 MB cache, at 9 GFLOP/s,
    not at the 4 GB of B's re-reads over the 16 GB/s that memory streams)."""
    fits = _register_blocked(examples, 256, 1, 64, (1, 0), CPU)
    spills = _register_blocked(examples, 256, 1, 64, (1, 0), dataclasses.replace(CPU, cache_bytes=64 << 10))
    assert spills > 1.3 * fits


def test_matmul_work_items_down_columns_share_b_and_reread_a_little(examples):
    """Consecutive work-items down a column of blocks (rows on dimension 0) share their block of B and each
    re-reads a few rows of A from the cache; along a row of blocks they share A and each re-reads a block of B
    (measured 6.4 ms and 13 ms for 2x32 blocks at 512³, 9.9 ms and 17 ms for 1x64), from the shared cache: B, 1 MB,
    is more than the EPYC core's own cache (512 KB), which would serve it as fast as its loads issue."""
    for h, w in ((2, 32), (1, 64)):
        down = _register_blocked(examples, 512, h, w, (0, 1), POCL)
        along = _register_blocked(examples, 512, h, w, (1, 0), POCL)
        assert along > 1.1 * down


def test_matmul_blocks_whose_walk_spills_the_near_cache_share_nothing(examples):
    """A work-item of a 1x64 register block walks 256 KB of B's columns at 1024³: more than PoCL's core keeps for
    the next work-item (`NEAR_CACHE_SHARE` of its 512 KB L2), so that down a column of blocks each one reads its
    block again from the shared cache, as along a row, and is no faster (measured 104-133 ms against 53-55, where
    2x32 blocks, 136 KB, measured 47-50 either way); at 512³ (130 KB) the column's work-items still share it
    (measured 8-10 ms against 17; predicted 1.47x since both walk B's rows again from the shared cache at
    `ROW_CACHE_LINE_NS`, which the EPYC's measurements predate)."""
    assert _register_blocked(examples, 1024, 1, 64, (0, 1), POCL) == pytest.approx(
        _register_blocked(examples, 1024, 1, 64, (1, 0), POCL), rel=0.1)
    assert _register_blocked(examples, 1024, 1, 64, (0, 1), POCL) > 2 * _register_blocked(examples, 1024, 2, 32,
                                                                                          (0, 1), POCL)
    assert _register_blocked(examples, 512, 1, 64, (1, 0), POCL) > 1.4 * _register_blocked(examples, 512, 1, 64,
                                                                                          (0, 1), POCL)
