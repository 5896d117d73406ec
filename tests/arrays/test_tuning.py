"""`lift.arrays.tune`: the program an evaluation would run is explored, its winner stored in the tuning
database, and the next evaluation of an equal graph compiles with it and agrees with numpy."""

import json

import numpy as np
import pytest

import lift
from lift.arrays.evaluation import COUNTS, plan
from lift.errors import LiftError
from lift.explore.candidate import program_key
from lift.explore.tuning_database import TuningDatabase
from lift.opencl_gen import runtime
from lift.rules import lowering_choice
from lift.rules.derivation import Derivation

RNG = np.random.default_rng(11)


def chain(x, y):
    return (((x * 1.5 + y) * x - 0.5) * y).sum()


def test_tuning_stores_the_winner_and_the_next_evaluation_uses_it(device, monkeypatch):
    x, y = (RNG.random(4096, dtype=np.float32) for _ in range(2))
    with lift.config(placement="device", device=device):
        lazy = chain(lift.asarray(x), lift.asarray(y))
        program = plan(lazy).program
        result = lift.arrays.tune(lazy, budget="120s", max_candidates=3)
        assert result.winner is not None and not lazy.evaluated
        best = TuningDatabase().best(program_key(program), runtime.device_label(device), {})
        assert best is not None and best.key == result.winner.key
        stored = Derivation.from_json(json.dumps({"sizes": {}, "steps": list(best.derivation)})).replay(program)

        def no_default(*args):
            raise AssertionError("the default lowering was asked for")
        monkeypatch.setattr(lowering_choice, "lower", no_default)
        a, b = (RNG.random(4096, dtype=np.float32) for _ in range(2))
        before = COUNTS["compiled"]
        again = chain(lift.asarray(a), lift.asarray(b))
        p = plan(again)
        assert COUNTS["compiled"] == before + 1                 # compiled again, with the database's winner
        assert lift.paper(p.compiled.lowered({})) == lift.paper(stored)
        got = again.get()
    np.testing.assert_allclose(got, chain(a.astype(np.float64), b.astype(np.float64)), rtol=1e-4)


def test_tuning_needs_something_to_tune_and_the_database(device, monkeypatch):
    with lift.config(device=device):
        done = lift.evaluate(lift.asarray(np.ones(8, np.float32)) + 1.0)
        with pytest.raises(LiftError, match="nothing to tune"):
            lift.arrays.tune(done)
        monkeypatch.setenv("LIFT_TUNING_DB", "off")
        with pytest.raises(LiftError, match="LIFT_TUNING_DB=off"):
            lift.arrays.tune(lift.asarray(np.ones(8, np.float32)) + 1.0)
