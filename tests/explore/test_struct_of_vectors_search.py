"""`lift explore` proposes N-body's bodies on the lanes of vectors (`struct-of-vectors`, `lift.rules.struct_of_vectors`)
where its user functions take vectors apart, and the cost model ranks those candidates ahead of a body per work-item
(at N = 8192 on PoCL, 2 shared cores, load 8: lift's 8 lanes 86 ms, a body per work-item 837 ms, best of 5 interleaved
rounds)."""

import sys
from pathlib import Path

from lift.explore.rewrite_search import RewriteSearch
from lift.explore.search_moves import map_moves
from lift.ir.typecheck import infer
from lift.rules.location import context_at
from lift.rules.strategy import argument, body

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_cost_model_ranking import _predicted  # noqa: E402


def _wants_lanes(program, sizes, at):
    search = RewriteSearch(program, sizes)
    return search.takes_vectors_apart(context_at(infer(program).expr, at, search.engine.choices))


def test_nbody_s_map_over_bodies_takes_vectors_apart_and_md_s_does_not(examples):
    """MD's `update_f` reads an array of float4s (`particles[nid]`), which has no scalar form here."""
    assert _wants_lanes(examples["nbody"].kernels["nbody"], {"N": 256}, "body.args0")
    assert not _wants_lanes(examples["md"].kernels["md"], {"P": 256, "K": 16}, "body")


def test_struct_of_vectors_moves_pad_where_the_width_does_not_divide():
    moves = {name + str(sorted(params.items())) for name, params, _ in map_moves(250, False, vectors=True)
             if name == "struct-of-vectors"}
    assert moves == {"struct-of-vectors[('padded', True), ('width', 4)]", "struct-of-vectors[('padded', True), "
                     "('width', 8)]", "struct-of-vectors[('padded', True), ('width', 16)]"}
    assert not [m for m in map_moves(256, False) if m[0] == "struct-of-vectors"]


def test_bodies_on_lanes_are_predicted_faster_than_a_body_per_work_item(examples):
    program, n = examples["nbody"].kernels["nbody"], 4096
    moves = map_moves(n, False, vectors=True)
    at = lambda s: body(argument(0, s))  # noqa: E731 (the map under the join)
    one = _predicted(program, {"N": n}, moves, at, name="global")
    lanes = {w: _predicted(program, {"N": n}, moves, at, name="struct-of-vectors", width=w) for w in (4, 8)}
    assert one > 2.5 * lanes[4] and lanes[4] > 1.5 * lanes[8] and one > 5 * lanes[8]
