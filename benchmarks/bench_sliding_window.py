"""The 2-D Jacobi (`examples/jacobi.py`'s jacobi2d, weights an input) walked down column strips with its window of
rows in private variables (`map-seq-slide`) against the stencil row blocks `lift explore` measures first
(`EARLY_ROW_BLOCKS`, today's winners) and the hand-written streaming copy over as many bytes, in one interleaved run.

    python -m benchmarks.bench_sliding_window [--size 2048] [--rounds 7] [--runs 5] [--strips 8x4,16x4,...]
                                              [--walks 16x4,8x4,16x0,...]

The strip form, derived by hand but for its last step, the rule `map-seq-slide`: each global work-item (dimension
0: a strip of `W` columns, dimension 1: a block of `H` rows) computes `H x W` results, `map-seq(f) ∘ slide(3, 1)`
over the block's `H + 2` padded row segments (each its three vectors of `W`: shifted left, centred, shifted right),
`f` the vector of `W` weighted sums of a window of three segments; the rule makes it `map-seq-slide(f, 3, 1)`: two
segments loaded before the loop, one a step. Each form is also timed without the rule (`map-seq`). And jacobi2d by
rules alone (`walked_rows`): `map-seq-slide-2d`, then the default lowering (a work-item per row, walking it); and
the same strips by rules alone (`column_strip_walks`, `--walks W x H`, H 0 a whole strip per work-item: the search's
`column-strips` move, `lift.rules.column_strips`).
Prints each kernel's best and median time and its share of the copy's best rate, best to best.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from functools import partial
from pathlib import Path

import numpy as np

from lift import (ArrayType, AsScalar, AsVector, Float, Get, Join, Map, MapGlb, MapSeq, Pad, ReduceSeqUnroll, SizeVar,
                  Slide, Transpose, UserFun, Vectorize, Zip, fun, interpret)
from lift.ir import patterns as P
from lift.explore.rewrite_search import EARLY_ROW_BLOCKS, lower_rest
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import compile
from lift.rules import RewriteEngine
from lift.rules.column_sums import grid_windows
from lift.rules.column_strips import column_strip_walk
from lift.rules.default_lowering import clean_up, unrolled_userfuns
from lift.rules.stencil_row_blocking import stencil_row_blocks
from lift.rules.strategy import Focus, everywhere, is_call, outermost, rewrite

from benchmarks.measure import interleaved
from benchmarks.opencl_peers import streaming_copy

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from jacobi import inputs, jacobi2d  # noqa: E402

N, M = SizeVar("N"), SizeVar("M")
madd = UserFun("madd", ("acc", "x", "w"), "return acc + x * w;", (Float, Float, Float), Float,
               python=lambda acc, x, w: acc + x * w)


def strip_program(w: int, h: int):
    """jacobi2d over strips of `w` columns and blocks of `h` rows, `map-seq ∘ slide(3, 1)` down each block; a row
    segment of a strip is its three vectors of `w` (shifted left, centred, shifted right)."""
    def weighted(k):
        return lambda win: ReduceSeqUnroll(lambda acc, p: Vectorize(w, madd)(acc, Get(p, 0), Get(p, 1)),
                                           Vectorize(w, 0.0))(Zip(Join()(win), Join()(k)))

    def vectors(segment):
        return Join()(Map(AsVector(w))(Slide(w, 1)(segment)))

    return fun([ArrayType(ArrayType(Float, N), M), ArrayType(ArrayType(Float, 3), 3)], lambda a, k: Map(AsScalar())(
        Transpose()(MapGlb(0)(lambda s: Join()(MapGlb(1)(lambda blk: MapSeq(weighted(k))(Slide(3, 1)(blk)))(
            Slide(h + 2, h)(s))))(Transpose()(Map(lambda row: Map(vectors)(Slide(w + 2, w)(row)))(
                Pad(1, 1, "clamp")(Map(Pad(1, 1, "clamp"))(a))))))))


def slid(program):
    """`program` with `map-seq-slide` applied where it applies (once here)."""
    engine = RewriteEngine()
    (place,) = [rw for rw in engine.rewrites(program) if rw.rule == "map-seq-slide"]
    return engine.apply(program, place)


def walked_rows(sizes: dict):
    """jacobi2d by rules alone: `map-seq-slide-2d` (each band of three rows walked column by column, the window of
    three columns private), the rest lowered by default (a global work-item per row), each window's fold unrolled."""
    unroll = everywhere(is_call(P.ReduceSeq), rewrite("reduce-seq-unroll"))
    focus = (outermost(grid_windows, rewrite("map-seq-slide-2d")) >> lower_rest >> clean_up >> unroll)(
        Focus(jacobi2d, RewriteEngine(sizes=sizes)))
    return focus.program


def column_strip_walks(w: int, h: int, sizes: dict):
    """jacobi2d by rules alone walked down column strips (`lift.rules.column_strips`): strips of `w` results
    (`column-strips`), a strip (`h` 0) or a block of `h` rows of one per global work-item, `map-seq-slide` down it."""
    strips = column_strip_walk(w, -sizes["N"] % w, h)
    focus = (outermost(grid_windows, strips) >> lower_rest >> clean_up >> unrolled_userfuns)(
        Focus(jacobi2d, RewriteEngine(sizes=sizes)))
    return focus.program


def row_blocks(rows: int, block: int, width: int, sizes: dict):
    focus = (outermost(grid_windows, stencil_row_blocks(rows, block, width)) >> lower_rest >> clean_up)(
        Focus(jacobi2d, RewriteEngine(sizes=sizes)))
    return focus.program


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--runs", type=int, default=5, help="launches per contender per round")
    parser.add_argument("--strips", default="8x4,8x32,16x4,16x32", help="W x H of the strip forms (W: 4, 8 or 16)")
    parser.add_argument("--walks", default="16x4,8x4,16x8,16x0",
                        help="W x H of the column strip walks by rules (H 0: a whole strip per work-item)")
    args = parser.parse_args(argv)
    n = args.size
    sizes = {"M": n, "N": n, "L": 1}
    device = runtime.select_device()
    a, k = inputs("jacobi2d", sizes, np.random.default_rng(0))
    expected = interpret(jacobi2d, a, k)
    programs = {f"row-blocks {r}x{b}x{wd}": row_blocks(r, b, wd, sizes) for r, b, wd in EARLY_ROW_BLOCKS}
    programs["rows map-seq-slide-2d"] = walked_rows(sizes)
    for spec in filter(None, args.walks.split(",")):
        w, h = map(int, spec.split("x"))
        programs[f"column-strip walk {w}x{h}"] = column_strip_walks(w, h, sizes)
    for spec in filter(None, args.strips.split(",")):
        w, h = map(int, spec.split("x"))
        programs[f"strip {w}x{h} map-seq"] = strip_program(w, h)
        programs[f"strip {w}x{h} map-seq-slide"] = slid(strip_program(w, h))
    prepares = {}
    for name, program in programs.items():
        compiled = compile(program, device, sizes)
        got = np.reshape(compiled(a, k), expected.shape)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=name)
        prepares[name] = partial(compiled.prepare, a, k)
    copy, nbytes = streaming_copy(device, a.nbytes)
    prepares["streaming copy"] = copy
    times = interleaved(prepares, args.rounds, args.runs)
    copy_rate = nbytes / min(times["streaming copy"])
    for name, ms in times.items():
        best = min(ms)
        share = a.nbytes / best / copy_rate
        print(f"{name:32s} best {best:8.3f} ms  median {statistics.median(ms):8.3f} ms  "
              f"{share:6.2f} of the copy (best to best)")


if __name__ == "__main__":
    main()
