"""`lift explore` proposes MD's neighbour list walked by rows and as the columns of a transposed copy (SHOC's layout,
`lift.rules.index_columns`), and the cost model ranks the columns behind the rows on a CPU, each index read from a
cache line of its own (`lift.explore.cost_spaces`: a transposed matrix's rows are strided). Lift's kernels at
P = 12288, K = 128 on PoCL, 2 shared cores, load 4.8: 11.1 ms against 3.3 ms, best of 9 interleaved rounds."""

import sys
from pathlib import Path

from lift.explore.rewrite_search import RewriteSearch
from lift.rules.index_columns import index_columns
from lift.rules.strategy import identity

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_cost_model_ranking import _predicted_after  # noqa: E402


def test_md_s_neighbour_list_is_searched_by_rows_and_by_columns(examples):
    search = RewriteSearch(examples["md"].kernels["md"], {"P": 512, "K": 16}, seed=0)
    layouts = set()
    for i, candidate in enumerate(search):
        layouts.update(v for d, v in search.choices_of.get(candidate.key, ()) if d == "index-rows")
        if i == 12:
            break
    assert layouts == {"rows", "columns"}


def test_columns_of_a_transposed_copy_are_predicted_slower_on_a_cpu(examples):
    program, sizes = examples["md"].kernels["md"], {"P": 12288, "K": 128}
    for local_size in (None, 64):
        rows = _predicted_after(program, sizes, identity, local_size)
        columns = _predicted_after(program, sizes, index_columns, local_size)
        assert columns > 1.3 * rows, (local_size, columns, rows)
