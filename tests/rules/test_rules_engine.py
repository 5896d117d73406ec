"""The rewrite engine, derivations, alpha-equivalence, and where rules must not apply.

The property test (`test_rules_properties.py`) shows that rules preserve meaning wherever the engine
applies them; these tests show where the engine refuses to: OpenCL's thread hierarchy, orders that
matter, lengths that change between iterations, and parameters that do not fit.
"""

import json

import numpy as np
import pytest

from lift import (ArrayType, Float, Iterate, Join, Map, MapGlb, MapLcl, MapSeq, MapWrg, PartRed, Reduce, ReduceSeq,
                  Reorder, Split, UserFun, Zip, fun, infer, paper)
from lift.rules import (RULES, Derivation, IllTypedRewrite, Rewrite, RewriteEngine, Rule, RuleNotApplicable,
                        alpha_equal, canonical, catalogue, rule_named)
from lift.types.arith import SizeVar

F = Float
N = SizeVar("N")
absf = UserFun("absf", ("x",), "return fabs(x);", (F,), F, python=np.abs)
add = UserFun("add", ("x", "y"), "return x + y;", (F, F), F, python=lambda x, y: x + y)
maxf = UserFun("maxf", ("x", "y"), "return fmax(x, y);", (F, F), F, python=np.maximum)
ENGINE = RewriteEngine()


def program(t, body):
    return fun([t], body)


def rewrites(p, rule, engine=ENGINE):
    return [(rw.location, rw.param_dict) for rw in engine.rewrites(p) if rw.rule == rule]


def matrix(rows=4, cols=8):
    return ArrayType(ArrayType(F, cols), rows)


# --- the catalogue -----------------------------------------------------------------------------------


def test_catalogue_lists_every_rule_of_figures_3_and_4():
    entries = catalogue()
    assert [e["name"] for e in entries] == [r.name for r in RULES]
    assert len({e["name"] for e in entries}) == len(entries)
    assert all(e["name"] and e["figure"] and e["description"] and "→" in e["equation"] for e in entries)
    assert {e["figure"] for e in entries} >= {"3(a)", "3(b)", "3(c)", "3(d)", "3(e)", "3(f)",
                                               "4(a)", "4(b)", "4(c)", "4(d)", "4(e)"}
    assert rule_named("split-join").equation == "map(f) → join ∘ map(map(f)) ∘ split-n"
    with pytest.raises(KeyError, match="no rule named 'nope'"):
        rule_named("nope")


# --- enumeration -------------------------------------------------------------------------------------


def test_every_rewrite_of_a_small_program():
    p = program(ArrayType(F, 4), lambda x: (Reduce(add, 0.0) @ Map(absf))(x))
    found = {(rw.rule, rw.location, rw.params) for rw in ENGINE.rewrites(p)}
    assert found == {
        ("partial-reduction", "body", (("chunk", 1),)), ("partial-reduction", "body", (("chunk", 2),)),
        ("partial-reduction", "body", (("chunk", 4),)), ("reduce-to-part-red", "body", ()),
        ("reduce-to-seq", "body", ()),
        ("split-join", "body.args0", (("n", 1),)), ("split-join", "body.args0", (("n", 2),)),
        ("split-join", "body.args0", (("n", 4),)), ("map-to-seq", "body.args0", ()),
        ("vectorize-map", "body.args0", (("n", 2),)), ("vectorize-map", "body.args0", (("n", 4),)),
    } | {(r, "body.args0", (("dim", d),)) for r in ("map-to-workgroup", "map-to-global") for d in (0, 1, 2)}


def test_symbolic_lengths_enumerate_powers_of_two_or_the_binding():
    p = program(ArrayType(F, N), lambda x: Map(absf)(x))
    assert [ps["n"] for _, ps in rewrites(p, "split-join", RewriteEngine(max_factor=8))] == [1, 2, 4, 8]
    assert [ps["n"] for _, ps in rewrites(p, "split-join", RewriteEngine(sizes={"N": 12}))] == [1, 2, 3, 4, 6, 12]


def test_functions_passed_to_patterns_are_rewritten_in_place():
    p = program(matrix(), lambda x: Map(Map(absf))(x))
    assert ("body.f.f", {}) in rewrites(p, "map-to-seq")
    lowered = ENGINE.apply(p, Rewrite.of("map-to-seq", "body.f.f"))
    assert lowered == program(matrix(), lambda x: Map(MapSeq(absf))(x))
    split = ENGINE.apply(p, Rewrite.of("split-join", "body.f.f", {"n": 2}))
    assert paper(split) == "map(join ∘ map(map(absf)) ∘ split-2)"


# --- applying, and refusing ------------------------------------------------------------------------------


def test_apply_checks_the_rule_the_location_and_the_parameters():
    p = program(ArrayType(F, 8), lambda x: Map(absf)(x))
    assert paper(ENGINE.apply(p, Rewrite.of("split-join", "body", {"n": 4}))) == "join ∘ map(map(absf)) ∘ split-4"
    with pytest.raises(RuleNotApplicable, match=r"parameters \{n=3\} do not apply here \(valid: \{n=1\}, \{n=2\}"):
        ENGINE.apply(p, Rewrite.of("split-join", "body", {"n": 3}))
    with pytest.raises(RuleNotApplicable, match="no location 'body.args3'"):
        ENGINE.apply(p, Rewrite.of("split-join", "body.args3", {"n": 4}))
    with pytest.raises(RuleNotApplicable, match="reduce-to-seq does not rewrite Map"):
        ENGINE.apply(p, Rewrite.of("reduce-to-seq", "body"))
    with pytest.raises(RuleNotApplicable, match="no rule named 'fold'"):
        ENGINE.apply(p, Rewrite.of("fold", "body"))


def test_rules_say_why_they_do_not_apply():
    p = program(ArrayType(F, 8), lambda x: (Split(2) @ Join() @ Split(4))(x))
    with pytest.raises(RuleNotApplicable, match="split-join-id: the joined rows do not have the split's length"):
        ENGINE.apply(p, Rewrite.of("split-join-id", "body"))
    with pytest.raises(RuleNotApplicable, match="split-join: does not rewrite Split"):
        rule_named("split-join").apply(p.body, {"n": 2})
    typed = infer(program(ArrayType(F, 8), lambda x: Map(absf)(x))).expr.body
    with pytest.raises(RuleNotApplicable, match=r"parameters \{n=3\} do not fit an array of length 8"):
        rule_named("split-join").apply(typed, {"n": 3})
    with pytest.raises(RuleNotApplicable, match="no OpenCL dimension 3"):
        rule_named("map-to-global").apply(typed, {"dim": 3})


def test_a_size_parameter_may_be_a_size_expression():
    p = program(ArrayType(F, N), lambda x: Map(absf)(x))
    split = ENGINE.apply(p, Rewrite.of("split-join", "body", {"n": "N/4"}))
    assert paper(split) == "join ∘ map(map(absf)) ∘ split-(N/4)"
    with pytest.raises(RuleNotApplicable):
        ENGINE.apply(p, Rewrite.of("split-join", "body", {"n": "M/4"}))
    with pytest.raises(RuleNotApplicable):
        ENGINE.apply(p, Rewrite.of("split-join", "body", {"n": "N/4 if N else 1"}))


def test_an_ill_typed_result_is_reported():
    class Broken(Rule):
        name, figure, heads = "broken", "-", (Map,)

        def choices(self, call, ctx):
            return [{}]

        def apply(self, call, params):
            return Join()(*call.args)

    engine = RewriteEngine(rules=(Broken(),))
    p = program(ArrayType(F, 8), lambda x: Map(absf)(x))
    with pytest.raises(IllTypedRewrite, match="broken at body gives an ill-typed program: join expects"):
        engine.apply(p, Rewrite.of("broken", "body"))
    rejected = []
    assert list(engine.successors(p, rejected)) == [] and [rw.rule for rw, _ in rejected] == ["broken"]


# --- OpenCL's thread hierarchy ------------------------------------------------------------------------------


def test_map_local_only_inside_a_map_workgroup():
    p = program(matrix(), lambda x: Map(Map(absf))(x))
    assert rewrites(p, "map-to-local") == []
    wrg = ENGINE.apply(p, Rewrite.of("map-to-workgroup", "body", {"dim": 0}))
    assert rewrites(wrg, "map-to-local") == [("body.f.f", {"dim": d}) for d in (0, 1, 2)]


def test_nested_work_group_maps_use_different_dimensions():
    p = program(matrix(), lambda x: Map(MapWrg(absf))(x))
    assert rewrites(p, "map-to-workgroup") == [("body", {"dim": 1}), ("body", {"dim": 2})]
    p = program(matrix(), lambda x: MapWrg(Map(absf))(x))
    assert rewrites(p, "map-to-workgroup") == [("body.f.f", {"dim": 1}), ("body.f.f", {"dim": 2})]
    p = program(ArrayType(matrix(), 2), lambda x: MapWrg(MapLcl(Map(absf)))(x))
    assert rewrites(p, "map-to-local") == [("body.f.f.f", {"dim": 1}), ("body.f.f.f", {"dim": 2})]


def test_nothing_parallel_inside_a_sequential_pattern():
    p = program(matrix(), lambda x: MapSeq(Map(absf))(x))
    assert [r for r in ("map-to-workgroup", "map-to-local", "map-to-global") if rewrites(p, r)] == []
    assert rewrites(p, "map-to-seq") == [("body.f.f", {})]
    p = program(matrix(), lambda x: Map(MapGlb(absf))(x))
    assert rewrites(p, "map-to-seq") == [] and rewrites(p, "map-to-local") == []
    assert rewrites(p, "map-to-global") == [("body", {"dim": 1}), ("body", {"dim": 2})]
    assert rewrites(program(matrix(), lambda x: MapLcl(Map(absf))(x)), "map-to-workgroup") == []


def test_memory_rules_follow_the_hierarchy():
    p = program(matrix(), lambda x: MapWrg(MapLcl(absf))(x))
    assert rewrites(p, "to-local") == [("body.f.f", {})] == rewrites(p, "to-global")
    stored = ENGINE.apply(p, Rewrite.of("to-local", "body.f.f"))
    assert rewrites(stored, "to-local") == [] and rewrites(stored, "to-global") == []
    assert rewrites(program(matrix(), lambda x: MapGlb(MapSeq(absf))(x)), "to-private") == [("body.f.f", {})]
    assert rewrites(program(matrix(), lambda x: MapSeq(MapSeq(absf))(x)), "to-private") == []
    assert rewrites(program(ArrayType(ArrayType(F, N), 4), lambda x: MapGlb(MapSeq(absf))(x)), "to-private") == []


def test_copies_are_made_inside_kernels_once():
    assert rewrites(program(matrix(), lambda x: Map(Map(absf))(x)), "copy") == []
    p = program(matrix(), lambda x: MapWrg(lambda row: Map(absf)(row))(x))
    assert rewrites(p, "copy") == [("body.f.f.body", {})]
    copied = ENGINE.apply(p, Rewrite.of("copy", "body.f.f.body"))
    assert paper(copied) == "map-workgroup(map(id) ∘ map(absf))"
    assert rewrites(copied, "copy") == []


# --- orders that matter, lengths that change -------------------------------------------------------------


@pytest.mark.parametrize("body, offered", [
    (lambda x: (Reduce(add, 0.0) @ Map(absf) @ Reorder())(x), True),
    (lambda x: (Reduce(add, 0.0) @ PartRed(add, 0.0, 2) @ Reorder())(x), True),
    (lambda x: (Join() @ Map(Reduce(add, 0.0)) @ Split(4) @ Reorder())(x), False),
    (lambda x: (Map(absf) @ Reorder())(x), False),
    (lambda x: (Reduce(maxf, 0.0) @ PartRed(add, 0.0, 2) @ Reorder())(x), False),
    (lambda x: (Reduce(add, 0.0) @ Map(add))(Zip(Reorder()(x), x)), False),
    (lambda x: Reduce(add, 0.0)(Join()(Map(lambda c: PartRed(add, 0.0, 2)(Reorder()(c)))(Split(4)(x)))), True),
    (lambda x: Map(lambda c: PartRed(add, 0.0, 2)(Reorder()(c)))(Split(4)(x)), False),
])
def test_reorder_stride_only_where_the_order_does_not_matter(body, offered):
    p = program(ArrayType(F, 8), body)
    assert bool(rewrites(p, "reorder-to-stride")) == offered
    assert rewrites(p, "reorder-to-id")


def test_length_dependent_rules_stay_out_of_resizing_iterations():
    tree = program(ArrayType(F, 16), lambda x: Iterate(2, Join() @ Map(Reduce(add, 0.0)) @ Split(2))(x))
    inside = [rw.rule for rw in ENGINE.rewrites(tree) if rw.location.startswith("body.f.f.")]
    assert "map-to-seq" in inside and "reduce-to-part-red" in inside
    assert not {"split-join", "partial-reduction", "vectorize-map"} & set(inside)
    with pytest.raises(RuleNotApplicable, match="change from one iteration"):
        ENGINE.apply(tree, Rewrite.of("split-join", "body.f.f.body.args0", {"n": 1}))
    same_length = program(ArrayType(F, 16), lambda x: Iterate(2, Map(absf))(x))
    assert rewrites(same_length, "split-join")[0][0] == "body.f.f"


def test_map_interchange_walks_the_other_dimension():
    p = program(matrix(), lambda x: Map(Map(absf))(x))
    swapped = ENGINE.apply(p, Rewrite.of("map-interchange", "body"))
    assert paper(swapped) == "transpose ∘ map(map(absf)) ∘ transpose"
    assert rewrites(swapped, "transpose-transpose-id") == []
    twice = ENGINE.apply(swapped, Rewrite.of("map-interchange", "body.args0"))
    assert rewrites(twice, "transpose-transpose-id") == [("body", {}), ("body.args0.args0.args0", {})]


def test_vectorisation_applies_once():
    p = program(ArrayType(F, 8), lambda x: Map(absf)(x))
    once = ENGINE.apply(p, Rewrite.of("vectorize-map", "body", {"n": 4}))
    assert paper(once) == "asScalar ∘ map(vectorize-4(absf)) ∘ asVector-4"
    assert rewrites(once, "vectorize-map") == []
    scaled = fun([F, ArrayType(F, 8)], lambda a, x: Map(lambda v: add(a, v))(x))
    assert paper(ENGINE.apply(scaled, Rewrite.of("vectorize-map", "body", {"n": 2}))) == (
        "λ a, x. asScalar ∘ map(λ v. vectorize-2(add)(a, v)) ∘ asVector-2(x)")


# --- derivations and alpha-equivalence ------------------------------------------------------------------------


SOURCE = program(ArrayType(F, N), lambda x: (Reduce(add, 0.0) @ Map(absf))(x))
FUSED = (Derivation()
         .then("map-to-seq", "body.args0")
         .then("reduce-to-seq", "body")
         .then("reduce-seq-map-seq-fusion", "body"))


def test_derivations_round_trip_through_json():
    text = FUSED.then("split-join", "body", n="N/2").to_json()
    assert json.loads(text)["steps"][0] == {"rule": "map-to-seq", "at": "body.args0", "params": {}}
    assert Derivation.from_json(text) == FUSED.then("split-join", "body", n="N/2")
    written = '{"steps": [{"rule": "split-join", "at": "body.args0", "params": {"n": 64}}], "sizes": {"N": 1024}}'
    loaded = Derivation.from_json(written)
    assert loaded.sizes == (("N", 1024),) and loaded.steps == (Rewrite.of("split-join", "body.args0", {"n": 64}),)
    assert paper(loaded.replay(SOURCE)) == "reduce(add, 0.0) ∘ join ∘ map(map(absf)) ∘ split-64"


def test_replay_names_the_step_that_does_not_apply():
    with pytest.raises(RuleNotApplicable, match=r"step 3 \(map-to-seq at body.args0\): .* does not rewrite MapSeq"):
        Derivation().then("reduce-to-seq", "body").then("map-to-seq", "body.args0").then("map-to-seq", "body.args0") \
            .replay(SOURCE)
    trace = FUSED.trace(SOURCE)
    assert len(trace) == 4 and trace[0] is SOURCE
    assert paper(trace[-1]).startswith("reduce-seq(λ acc_")


def test_alpha_equivalence_ignores_parameter_names_only():
    a = FUSED.replay(SOURCE)
    b = FUSED.replay(program(ArrayType(F, N), lambda y: (Reduce(add, 0.0) @ Map(absf))(y)))
    assert a != b and alpha_equal(a, b) and canonical(a) == canonical(b)
    assert canonical(canonical(a)) == canonical(a)
    renamed = fun([ArrayType(F, N)], lambda y: (Reduce(add, 0.0) @ Map(absf))(y))
    assert alpha_equal(SOURCE, renamed)
    assert not alpha_equal(SOURCE, program(ArrayType(F, N), lambda x: (ReduceSeq(add, 0.0) @ Map(absf))(x)))
    free = fun([F, ArrayType(F, N)], lambda a, x: Map(lambda v: add(a, v))(x)).body
    assert "a" in paper(canonical(free)) and "v" not in paper(canonical(free))
