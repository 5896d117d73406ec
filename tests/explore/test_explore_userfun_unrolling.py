"""`userfun-loop-unroll` in the search and the cost model: a user function's loops indexing a private window
by their counters are charged as memory, and the search proposes the function rolled and unrolled (a decision
of its bandit), both computing what the program means."""

import numpy as np

import lift
from lift.explore.candidate import Candidate
from lift.explore.cost_model import DeviceModel, predict
from lift.explore.cost_walk import profile
from lift.explore.rewrite_search import RewriteSearch
from lift.rules.default_lowering import default_lowering
from lift.rules.derivation import Derivation

CPU = DeviceModel.for_device("cpu", 2, 20.0, 0.002, 32768, 4096, 8, 32 << 20)
SIZES = {"M": 13, "N": 11}


def test_the_cost_model_charges_a_window_indexed_by_a_counter_as_memory(examples):
    """Life rolled reads its private window by the loops' counters (memory: each read an operation), unrolled at
    constant indices (registers): the unrolled kernel is predicted faster, in scalar code (`vector_width=1`) and
    vectorised in 16 lanes, where the rolled loops' counting and index arithmetic stay scalar work of each
    application (PoCL ran life 1001x999 vectorised in 0.85 ms unrolled, 1.12 ms rolled)."""
    program = examples["life"].kernels["life"]
    for sizes, vector_width, ratio in (({"M": 64, "N": 64}, 1, 1.5), ({"M": 1001, "N": 999}, 16, 1.2)):
        unrolled = default_lowering(program, sizes, vector_width=vector_width)
        rolled = Derivation(tuple(s for s in unrolled.steps if s.rule != "userfun-loop-unroll"), unrolled.sizes)
        predicted = [predict(profile(Candidate(d.replay(program)).generate("k", sizes)), CPU)
                     for d in (unrolled, rolled)]
        assert predicted[1] > ratio * predicted[0]


def test_the_search_proposes_a_looping_user_function_rolled_and_unrolled(examples):
    pf = examples["life"]
    program = pf.kernels["life"]
    (a,) = pf.inputs("life", SIZES)
    found = {}
    for i, candidate in enumerate(RewriteSearch(program, SIZES, seed=0)):
        kind = candidate.params.get("userfun-unroll")
        if kind is not None:
            found.setdefault(kind, candidate.program)
        if len(found) == 2 or i == 40:
            break
    assert set(found) == {"rolled()", "unrolled()"}
    assert "rule_unrolled" in lift.paper(found["unrolled()"]) and "rule_unrolled" not in lift.paper(found["rolled()"])
    for lowered in found.values():
        np.testing.assert_array_equal(lift.interpret(lowered, a), pf.namespace["reference"](a))
