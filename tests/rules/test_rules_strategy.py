"""Strategies (lift.rules.strategy): combinators, traversals and selectors place rules; what they do is a
`Derivation` that replays exactly; the paper's derivation strategies apply to programs of other shapes."""

import ast
import re
from pathlib import Path

import numpy as np
import pytest

from lift import ArrayType, Float, Map, MapSeq, Reduce, SizeVar, fun, interpret, paper
from lift.explore.rewrite_search import clean_up, lower_rest
from lift.rules import Derivation, RewriteEngine, alpha_equal
from lift.rules import paper_derivations as pd
from lift.rules.paper_programs import absf, add, asum, dot, mult, scal
from lift.rules.strategy import (Focus, StrategyFailed, all_, apply_at, argument, bottomup, derive, everywhere, fail,
                                 has_type, identity, innermost, inside, is_call, is_fun, normalize, one, outermost,
                                 repeat, rewrite, topdown, try_, where)

ROOT = Path(__file__).resolve().parents[2]
N, M = SizeVar("N"), SizeVar("M")
RNG = np.random.default_rng(11)

two_maps = fun([ArrayType(ArrayType(Float, N), M)], lambda A: Map(Map(absf))(Map(Map(absf))(A)))


def _locations(derivation):
    return [(s.rule, s.location) for s in derivation.steps]


def test_rewrite_records_the_step_and_fails_where_the_rule_does_not_apply():
    with pytest.raises(StrategyFailed):
        derive(rewrite("map-to-seq"), asum)  # the focus is the program itself, not a location
    d = derive(apply_at(is_call(Map), "map-to-seq"), asum)
    assert _locations(d) == [("map-to-seq", "body.args0")]
    assert alpha_equal(d.replay(asum), fun([ArrayType(Float, N)], lambda x: (Reduce(add, 0.0) @ MapSeq(absf))(x)))


def test_combinators():
    seq_ = apply_at(is_call(Map), "map-to-seq") >> apply_at(is_call(Reduce), "reduce-to-seq")
    assert [r for r, _ in _locations(derive(seq_, asum))] == ["map-to-seq", "reduce-to-seq"]
    assert derive(identity, asum).steps == ()
    with pytest.raises(StrategyFailed):
        derive(fail | fail, asum)
    assert derive(try_(fail), asum).steps == ()
    assert _locations(derive(fail | apply_at(is_call(Map), "map-to-seq"), asum)) == [("map-to-seq", "body.args0")]
    with pytest.raises(StrategyFailed):
        derive(apply_at(is_call(Map), "map-to-seq") >> fail, asum)


def test_traversal_orders():
    to_seq = where(is_fun(Map)) >> rewrite("map-to-seq")
    assert _locations(derive(topdown(to_seq), two_maps)) == [("map-to-seq", "body")]
    assert _locations(derive(bottomup(to_seq), two_maps)) == [("map-to-seq", "body.f.f")]
    assert _locations(derive(outermost(is_fun(Map), rewrite("map-to-seq")), two_maps)) == [("map-to-seq", "body")]
    assert _locations(derive(innermost(is_fun(Map), rewrite("map-to-seq")), two_maps)) == [("map-to-seq", "body.f.f")]
    everything = derive(normalize(to_seq), two_maps)
    assert sorted(loc for _, loc in _locations(everything)) == ["body", "body.args0", "body.args0.f.f", "body.f.f"]
    assert not any(isinstance(n, Map) for n in _nodes(everything.replay(two_maps)))


def test_one_and_all_visit_the_children_of_the_focus():
    engine = RewriteEngine()
    at = {c.path: Focus(two_maps, engine).to(c) for c in _contexts(two_maps)}
    to_seq = where(is_fun(Map)) >> rewrite("map-to-seq")
    # `map(map(abs))(map(map(abs))(A))` at body: its children are the map in call position (not a location)
    # and the argument; the map's child is the function `map(abs)` passed to it.
    assert [s.location for s in one(to_seq)(at["body"]).steps] == ["body.args0"]
    assert [s.location for s in one(to_seq)(at["body.f"]).steps] == ["body.f.f"]
    assert all_(to_seq)(at["body"]) is None
    assert [s.location for s in all_(try_(to_seq))(at["body"]).steps] == ["body.args0"]
    assert one(fail)(at["body"]) is None
    assert one(to_seq)(at["body"]).at == "body"


def test_repeat_stops_and_selectors_combine():
    inner = derive(normalize(where(is_fun(Map) & inside()) >> rewrite("map-to-seq")), two_maps)
    assert sorted(loc for _, loc in _locations(inner)) == ["body.args0.f.f", "body.f.f"]
    outer = derive(normalize(where(is_call(Map) & ~inside()) >> rewrite("map-to-global", dim=0)), two_maps)
    assert sorted(loc for _, loc in _locations(outer)) == ["body", "body.args0"]
    assert derive(repeat(fail), two_maps).steps == ()
    # every map of rows (arrays of arrays): the two outer maps; every map inside a map: the two inner ones
    of_rows = everywhere(is_call(Map) & has_type(lambda t: isinstance(t.elem, ArrayType)), rewrite("map-to-seq"))
    assert sorted(loc for _, loc in _locations(derive(of_rows, two_maps))) == ["body", "body.args0"]


def test_an_argument_step_moves_the_focus_and_back():
    split = argument(0, rewrite("part-red-split-join", n=4))
    s = outermost(is_call(Reduce), rewrite("partial-reduction", chunk=4) >> split)
    d = derive(s, asum, {"N": 64})
    assert _locations(d) == [("partial-reduction", "body"), ("part-red-split-join", "body.args0")]
    # a traversal leaves the focus where it was: at the program, where `argument` finds no call
    with pytest.raises(StrategyFailed):
        derive(apply_at(is_call(Reduce), "partial-reduction", chunk=4) >> split, asum, {"N": 64})


def test_recorded_derivations_replay_and_survive_json():
    for name in ("FIGURE_2", "FIGURE_8", "FIGURE_9A", "FIGURE_9B", "FIGURE_9C", "TWO_KERNEL_SUM",
                 "GEMV_WORKGROUP_PER_ROW"):
        d = getattr(pd, name)
        assert isinstance(d, Derivation) and d.steps
        assert Derivation.from_json(d.to_json()) == d
    assert alpha_equal(pd.FIGURE_2.replay(scal), derive(pd.FIGURE_2_STRATEGY, scal).replay(scal))


# --- generality: the paper's strategies on programs of other shapes ------------------------------------------

rows_asum = fun([ArrayType(ArrayType(Float, N), M)], lambda A: Map(lambda r: (Reduce(add, 0.0) @ Map(absf))(r))(A))
sum_of_squares = fun([ArrayType(Float, N)], lambda x: (Reduce(add, 0.0) @ Map(lambda v: mult(v, v)))(x))


def _vectors(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


@pytest.mark.parametrize("program, strategy, sizes, inputs", [
    (dot, pd.FIGURE_8_STRATEGY, {"N": 4096}, lambda: [_vectors(4096), _vectors(4096)]),
    (rows_asum, pd.FIGURE_8_STRATEGY, {"N": 1024, "M": 8}, lambda: [_vectors(8, 1024)]),
    (sum_of_squares, pd.FIGURE_9C_STRATEGY, {"N": 65536}, lambda: [_vectors(65536)]),
], ids=["figure-8-on-dot", "figure-8-on-asum-of-each-row", "figure-9c-on-sum-of-squares"])
def test_paper_strategies_apply_to_other_programs(device, program, strategy, sizes, inputs):
    from lift.opencl_gen.compiled import compile

    derivation = derive(strategy >> lower_rest >> clean_up, program, sizes)
    derived = derivation.replay(program)
    assert "reduce-seq(λ" in paper(derived)
    x = inputs()
    np.testing.assert_allclose(compile(derived, sizes=sizes)(*x), interpret(program, *x, numpy_shapes=True), rtol=1e-3,
                               atol=1e-3)


def test_figure_8_strategy_on_a_reduction_inside_a_map():
    derived = derive(pd.FIGURE_8_STRATEGY, rows_asum, {"N": 1024, "M": 8}).replay(rows_asum)
    assert re.sub(r"_\d+", "", paper(derived)) == (
        "map(reduce(add, 0.0) ∘ join ∘ map(reduce-seq(λ acc, x. add(acc, absf(x)), 0.0)) ∘ split-128)")


# --- no location paths built by hand ---------------------------------------------------------------------------

_PATH = re.compile(r"(^|\.)(body|f|args\d+)\.(body|f|args\d+)(\.|$)|^\.(body|f|args\d*)\b")


def _strings(tree):
    """Every string constant that is not a docstring, and every literal piece of an f-string."""
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            yield n.lineno, n.value


def test_no_location_path_is_built_by_hand_in_rules_or_explore():
    """Strategies find places by selectors; only `lift.rules.location` knows how a location path is written."""
    found = []
    for path in sorted((ROOT / "lift" / "rules").glob("*.py")) + sorted((ROOT / "lift" / "explore").glob("*.py")):
        if path.name == "location.py":
            continue
        for line, text in _strings(ast.parse(path.read_text())):
            if _PATH.search(text):
                found.append(f"{path.name}:{line}: {text!r}")
    assert not found, found


def _nodes(node):
    yield node
    for _, child in node.children():
        yield from _nodes(child)


def _contexts(program):
    from lift.ir.typecheck import infer
    from lift.rules.location import root, subtree
    return list(subtree(root(infer(program).expr, RewriteEngine().choices)))
