"""The final round of `lift explore`: the fastest candidates timed again interleaved, the median deciding, the
winner written; logged to the folder and the tuning database, resumed, run again when interrupted; and a
fresh folder whose candidates the tuning database holds gets the winner's files without measuring."""

import dataclasses
import json
from pathlib import Path

import pytest

from lift import ArrayType, Float, Join, MapLcl, MapWrg, ReduceSeq, SizeVar, Split, fun
from lift.errors import LiftError
from lift.explore import final_round
from lift.explore.bandwidth import StreamingBandwidth
from lift.explore import driver
from lift.explore.candidate import DEFAULT_LOWERING, Candidate, program_key
from lift.explore.driver import explore
from lift.explore.evaluation import OK, Outcome, TimingPolicy, TimingStats
from lift.explore.final_round import (FinalRound, by_round, fitting, leader, median_outcome, participants,
                                     quartiles, standing, tie_break)
from lift.explore.log import Record
from lift.explore.tuning_database import TuningDatabase
from lift.ir.program_file import load_program_file
from opencl_device import needs_device

ASUM = Path(__file__).resolve().parents[2] / "examples" / "asum.py"
SIZES = {"N": 1 << 14}
FAST = TimingPolicy(min_runs=3, max_runs=10, max_s=0.2)
KNOWN_BANDWIDTH = StreamingBandwidth(copy_gbps=10.0, read_gbps=10.0, launch_ms=0.002, nbytes=0)
N = SizeVar("N")
EVALUATE = final_round.evaluate
# Injected per-round times of the final round's participants, in their in-search order: the median picks the
# last (2 ms), the minimum the first (0.5 ms), the mean the second (4 ms); their interquartile ranges are apart.
INJECTED = ([0.5, 9.0, 9.0, 9.0, 9.0], [4.0, 4.0, 4.0, 4.0, 4.0], [2.0, 2.0, 2.0, 2.5, 30.0])


def chunked(ns, chunk: int):
    """asum in work-groups of `chunk` elements, one work-item each."""
    add, step = ns["add"], ns["abs_and_add"]
    return fun([ArrayType(Float, N)], lambda x: (
        ReduceSeq(add, 0.0) @ Join() @ MapWrg(Join() @ MapLcl(ReduceSeq(step, 0.0)) @ Split(chunk)) @ Split(chunk))(x))


def candidates(ns):
    """Three distinct programs: work-groups of 1024, 2048 or 4096 elements."""
    return [Candidate(chunked(ns, chunk), ({"rule": "split", "n": chunk},), {"chunk": chunk})
            for chunk in (1024, 2048, 4096)]


class Killed(Exception):
    """What a kill in the middle of the final round would be."""


class Injected:
    """The final round's `evaluate`: the real evaluation, its median time replaced by `INJECTED` (by the
    participant's place in the round); the plans it saw, in order; `stop_at` raises there, as a kill would."""

    def __init__(self, real, stop_at=None):
        self.real, self.stop_at, self.sources = real, stop_at, []

    def __call__(self, worker, plan, timeout):
        if len(self.sources) == self.stop_at:
            raise Killed
        self.sources.append(plan.source)
        outcome = self.real(worker, plan, timeout)
        order = list(dict.fromkeys(self.sources))
        ms = INJECTED[order.index(plan.source)][self.sources.count(plan.source) - 1]
        return dataclasses.replace(outcome, timing=dataclasses.replace(outcome.timing, median_ms=ms, q1_ms=ms,
                                                                        q3_ms=ms))


def search(pf, out_dir, store, **options):
    return explore(pf, "asum", SIZES, candidates(pf.namespace), budget_s=300, out_dir=out_dir, timing=FAST,
                   bandwidth=KNOWN_BANDWIDTH, progress=False, tuning_database=store,
                   final=FinalRound(top=3, rounds=5), **options)


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@needs_device
def test_the_final_round_is_interleaved_the_median_decides_and_it_resumes(tmp_path, monkeypatch):
    pf = load_program_file(ASUM)
    store = TuningDatabase(tmp_path / "db")
    interrupted = Injected(EVALUATE, stop_at=7)
    monkeypatch.setattr(final_round, "evaluate", interrupted)
    with pytest.raises(Killed):
        search(pf, tmp_path / "out", store)
    log = tmp_path / "out" / "log.jsonl"
    assert len(lines(log)) == 3 and not any(r["final"] for r in lines(log)), "a killed round logs nothing"

    injected = Injected(EVALUATE)
    monkeypatch.setattr(final_round, "evaluate", injected)
    result = search(pf, tmp_path / "out", store)
    assert (result.evaluated, result.skipped) == (0, 3), "the search's measurements survived the kill"
    order = list(dict.fromkeys(injected.sources))
    assert len(order) == 3 and injected.sources == order * 5, "five round-robin rounds of the three"
    searched = sorted(lines(log)[:3], key=lambda r: r["time_ms"])
    finals = lines(log)[3:]
    assert len(finals) == 3 and len({r["final"] for r in finals}) == 1 and finals[0]["final"]
    assert sorted(r["time_ms"] for r in finals) == [2.0, 4.0, 9.0], "each candidate's median round is logged"
    assert result.winner.time_ms == 2.0 and result.winner.key == searched[2]["key"], \
        "the median decides: not the in-search best, nor the best single round, nor the best mean"
    assert result.remeasured == 3 and [r.key for r in result.ranked] == [searched[i]["key"] for i in (2, 1, 0)]
    assert json.loads(result.files["derivation"].read_text())["key"] == result.winner.key
    stored = [r for r in store.records(program_key(pf.kernels["asum"])) if r.final]
    assert {(r.key, r.time_ms) for r in stored} == {(r["key"], r["time_ms"]) for r in finals}

    before = log.read_text()
    again = Injected(EVALUATE)
    monkeypatch.setattr(final_round, "evaluate", again)
    resumed = search(pf, tmp_path / "out", store)
    assert again.sources == [] and log.read_text() == before, "a round that stands is not run again"
    assert resumed.winner.key == result.winner.key and resumed.remeasured == 3


@needs_device
def test_a_fresh_folder_the_database_answers_gets_the_winner_without_measuring(tmp_path, monkeypatch):
    pf = load_program_file(ASUM)
    store = TuningDatabase(tmp_path / "db")
    monkeypatch.setattr(final_round, "evaluate", Injected(EVALUATE))
    first = search(pf, tmp_path / "first", store)
    program = program_key(pf.kernels["asum"])
    held = store.path(program).read_text()

    untouched = Injected(EVALUATE)
    monkeypatch.setattr(final_round, "evaluate", untouched)
    fresh = search(pf, tmp_path / "fresh", store)
    assert (fresh.evaluated, fresh.skipped) == (0, 3) and untouched.sources == []
    assert store.path(program).read_text() == held, "nothing was measured"
    assert fresh.winner.key == first.winner.key and fresh.winner.time_ms == first.winner.time_ms
    written = json.loads((tmp_path / "fresh" / "asum.derivation.json").read_text())
    assert written["key"] == first.winner.key and fresh.files["cl"].is_file()


class Timed:
    """An `evaluate` whose median time is `ms[chunk]` of the candidate's chunk (read from its plan's source)."""

    def __init__(self, real, ms):
        self.real, self.ms, self.chunks = real, ms, []

    def __call__(self, worker, plan, timeout):
        chunk = next(c for c in self.ms if f"{c}" in plan.source)
        self.chunks.append(chunk)
        t = self.ms[chunk]
        outcome = self.real(worker, plan, timeout)
        return dataclasses.replace(outcome, timing=dataclasses.replace(outcome.timing, median_ms=t, q1_ms=t, q3_ms=t))


@needs_device
def test_the_default_lowering_takes_part_in_the_final_round_and_a_slower_winner_loses_to_it(tmp_path, monkeypatch):
    """The default lowering (chunks of 4096) is the slowest in the search and left out of a round of two by time
    alone; it takes part, and where the round's load makes the others slower than it, it wins."""
    pf = load_program_file(ASUM)
    marked = [dataclasses.replace(c, params={DEFAULT_LOWERING: "yes"}) if c.params["chunk"] == 4096 else c
              for c in candidates(pf.namespace)]
    monkeypatch.setattr(driver, "evaluate", Timed(EVALUATE, {1024: 1.0, 2048: 2.0, 4096: 3.0}))
    in_round = Timed(EVALUATE, {1024: 5.0, 2048: 6.0, 4096: 4.0})
    monkeypatch.setattr(final_round, "evaluate", in_round)
    result = explore(pf, "asum", SIZES, marked, budget_s=300, out_dir=tmp_path / "out", timing=FAST,
                     bandwidth=KNOWN_BANDWIDTH, progress=False, tuning_database=TuningDatabase(tmp_path / "db"),
                     final=FinalRound(top=2, rounds=3))
    assert in_round.chunks == [1024, 4096] * 3, "the fastest and the default lowering, round-robin"
    assert result.winner.params == {DEFAULT_LOWERING: "yes"} and result.winner.time_ms == 4.0


class Rounds:
    """An `evaluate` whose median time in the k-th round is `ms[chunk][k]` of the candidate's chunk."""

    def __init__(self, real, ms):
        self.real, self.ms, self.chunks = real, ms, []

    def __call__(self, worker, plan, timeout):
        chunk = next(c for c in self.ms if f"{c}" in plan.source)
        t = self.ms[chunk][self.chunks.count(chunk)]
        self.chunks.append(chunk)
        outcome = self.real(worker, plan, timeout)
        return dataclasses.replace(outcome, timing=dataclasses.replace(outcome.timing, median_ms=t, q1_ms=t, q3_ms=t))


class Predicted:
    """The search's cost model for a `DeviceModel`: `PREDICTED[chunk]` for the candidate of that chunk (read from its
    source)."""

    def __init__(self, model):
        self.model = model

    def predict(self, generated):
        return next(ms for c, ms in PREDICTED.items() if f"{c}" in generated.source)


PREDICTED = {1024: 2.0, 2048: 1.0, 4096: 0.5}


@needs_device
def test_candidates_the_round_cannot_tell_apart_are_ranked_by_the_cost_model(tmp_path, monkeypatch):
    """Chunks of 1024 have the fastest median (3.0 ms), but chunks of 2048 (3.1 ms) overlap their interquartile
    range: the loaded rounds cannot tell them apart, and the cost model predicts 2048 faster. 4096, predicted
    fastest of all, is clearly slower in the round, and the round's verdict stands."""
    pf = load_program_file(ASUM)
    store = TuningDatabase(tmp_path / "db")
    monkeypatch.setattr(driver, "AnalyticCostModel", Predicted)
    in_round = Rounds(EVALUATE, {1024: [2.0, 3.2, 3.0, 2.1, 3.4], 2048: [3.1, 2.9, 3.5, 3.3, 3.1],
                                 4096: [6.0, 6.0, 6.0, 6.0, 6.0]})
    monkeypatch.setattr(final_round, "evaluate", in_round)
    result = search(pf, tmp_path / "out", store)
    assert len(in_round.chunks) == 15 and result.remeasured == 3
    chunks = [next(c for c in PREDICTED if f"{c}" in r.expression) for r in result.ranked]
    assert chunks == [2048, 1024, 4096] and result.winner.time_ms == 3.1
    assert (result.winner.q1_ms, result.winner.q3_ms) == (3.1, 3.3), "the rounds' quartiles are logged"
    written = json.loads((tmp_path / "out" / "asum.derivation.json").read_text())
    assert written["key"] == result.winner.key
    assert store.best(program_key(pf.kernels["asum"]), result.device, SIZES).key == result.winner.key

    again = Rounds(EVALUATE, {})
    monkeypatch.setattr(final_round, "evaluate", again)
    resumed = search(pf, tmp_path / "out", store)
    assert again.chunks == [] and resumed.winner.key == result.winner.key, "the round stands, its winner too"


def test_the_round_ties_candidates_whose_interquartile_ranges_overlap_the_fastest_median():
    predicted = {"a": 2.0, "b": 1.0, "c": 0.5}
    assert tie_break({"a": (2.1, 3.0, 3.2), "b": (3.1, 3.1, 3.3), "c": (6.0, 6.0, 6.0)}, predicted) == "b"
    assert tie_break({"a": (2.1, 3.0, 3.2), "b": (3.3, 3.4, 3.5), "c": (6.0, 6.0, 6.0)}, predicted) == "a", \
        "a quiet round's verdict stands"
    assert tie_break({"a": (2.0, 3.0, 6.0), "b": (3.1, 3.1, 3.3), "c": (5.0, 6.0, 7.0)}, predicted) == "c", \
        "a noisy fastest ties with all it overlaps"
    assert tie_break({"a": (2.1, 3.0, 3.2), "b": (3.1, 3.1, 3.3)}, {"a": 2.0, "b": None}) == "a", "no prediction"
    assert tie_break({"a": (3.0, 3.0, 3.0), "b": (3.0, 3.0, 3.0)}, {"a": 1.0, "b": 1.0}) == "a"
    assert tie_break({"a": (2.1, 3.0, 3.2), "b": (3.1, 3.1, 3.3)}, {"a": 1.0, "b": 0.95}) == "a", \
        "the model's small differences decide nothing either"


def test_the_rounds_quartiles_are_measured_times_around_the_median():
    def timed(ms):
        return Outcome(OK, timing=TimingStats(ms, ms, ms, 3, (ms,), True))
    assert quartiles([timed(t) for t in (5.0, 1.0, 4.0, 2.0, 3.0)]) == (2.0, 3.0, 4.0)
    assert quartiles([timed(1.0), Outcome("timeout"), timed(2.0)]) == (1.0, 2.0, 2.0), "of two, both"
    assert quartiles([Outcome("crash")]) is None


def _record(key, time_ms, at, final="", params=None, **fields):
    return Record(key, "dev", "asum", {"N": 8}, OK, time_ms=time_ms, gbps=1.0, recorded_at=at, final=final,
                  params=params or {}, **fields)


def test_a_rounds_records_rank_its_winner_first():
    at = "2026-01-01T00:00:01"
    a = _record("a", 3.0, at, "x", q1_ms=2.1, q3_ms=3.2, predicted_ms=2.0)
    b = _record("b", 3.1, at, "x", q1_ms=3.1, q3_ms=3.3, predicted_ms=1.0)
    c = _record("c", 6.0, at, "x", q1_ms=6.0, q3_ms=6.0, predicted_ms=0.5)
    assert by_round([c, a, b]) == [b, a, c]
    assert by_round([c, a, dataclasses.replace(b, q1_ms=3.3)]) == [a, dataclasses.replace(b, q1_ms=3.3), c]
    assert by_round([]) == []


def test_the_round_takes_the_fastest_and_the_default_lowering():
    fast = [_record(k, t, "2026-01-01T00:00:01") for k, t in (("a", 1.0), ("b", 2.0), ("c", 3.0))]
    default = _record("d", 4.0, "2026-01-01T00:00:01", params={DEFAULT_LOWERING: "yes"})
    assert participants([*fast, default], 3) == [fast[0], fast[1], default], "it takes the last place"
    assert participants([fast[0], default, *fast[1:]], 3) == [fast[0], default, fast[1]], "among them already"
    assert participants([*fast, default], 1) == [fast[0]], "no round"
    assert participants(fast, 2) == fast[:2], "no default lowering measured"


def test_a_final_round_stands_until_a_faster_candidate_is_measured_after_it():
    stage = [_record("a", 2.0, "2026-01-01T00:00:05", "x"), _record("b", 3.0, "2026-01-01T00:00:05", "x")]
    older = _record("c", 1.0, "2026-01-01T00:00:01")
    assert standing([older, *stage], top=2) == stage, "a candidate the round already passed over"
    assert standing([*stage, _record("d", 4.0, "2026-01-01T00:00:09")], top=2) == stage, "slower than all of it"
    assert standing([*stage, _record("d", 2.5, "2026-01-01T00:00:09")], top=2) == [], "it would enter the round"
    assert standing([*stage, _record("d", 4.0, "2026-01-01T00:00:09")], top=3) == [], "the round had room for it"
    assert standing([older], top=2) == []


def test_a_round_cut_short_crowns_the_fastest_of_its_complete_rounds():
    def timed(ms):
        return Outcome(OK, timing=TimingStats(ms, ms, ms, 3, (ms,), True))
    records = [_record("a", 1.0, "2026-01-01T00:00:01"), _record("d", 4.0, "2026-01-01T00:00:01")]
    two_rounds = {"a": [timed(5.0), timed(6.0), timed(1.0)], "d": [timed(4.0), timed(4.5)]}
    assert leader(records, two_rounds) == records[1], "a's third round is not compared"
    assert leader(records, {"a": [timed(5.0)], "d": []}) == records[0], "no complete round: the search's fastest"
    assert leader(records, {"a": [Outcome("timeout")], "d": [Outcome("crash")]}) == records[0]
    tied = {"a": [timed(5.0), timed(3.9)], "d": [timed(4.0), timed(4.5)]}
    predicted = [dataclasses.replace(records[0], predicted_ms=1.0), dataclasses.replace(records[1], predicted_ms=2.0)]
    assert leader(predicted, tied) == predicted[0], "two rounds each, overlapping: the cost model decides"


def test_the_median_evaluation_is_the_middle_working_one():
    def timed(ms):
        return Outcome(OK, timing=TimingStats(ms, ms, ms, 3, (ms,), True))
    outcomes = [timed(5.0), Outcome("timeout"), timed(1.0), timed(3.0), timed(9.0)]
    assert median_outcome(outcomes).timing.median_ms == 5.0
    assert median_outcome([Outcome("crash")]) is None


def test_the_round_takes_fewer_candidates_where_their_evaluations_would_not_fit():
    assert fitting(5, 5, 100.0, None) == 5, "no evaluation timed yet"
    assert fitting(5, 5, 100.0, 1.0) == 5
    assert fitting(5, 5, 30.0, 2.0) == 3, "5 rounds of 3 at 2 s fit in 30 s, of 4 not"
    assert fitting(5, 5, 1.0, 2.0) == 2, "two at least, or nothing is compared"
    assert fitting(1, 5, 1.0, 2.0) == 1 and fitting(0, 5, 100.0, 1.0) == 0, "no round asked for"


@pytest.mark.parametrize("settings", [dict(top=-1), dict(rounds=0), dict(share=1.0), dict(share=-0.1)])
def test_bad_final_round_settings_are_rejected(settings):
    with pytest.raises(LiftError, match="final round"):
        FinalRound(**settings)
