"""The code generator and the cost model handle every pattern class, and code generation is a pipeline of
named passes whose validator catches a pass that breaks the program (issue 16, part 1)."""

from dataclasses import replace

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, MapAccumSeq, MapGlb, MapSeq, ReduceSeq, SizeVar, Split, Join, Tuple, UserFun, fun
from lift.explore.cost_walk import CostWalk, profile
from lift.ir import opencl_patterns as O, patterns as P
from lift.ir.mapper import handles
from lift.opencl_gen import c_ast as C
from lift.opencl_gen.emit import Emitter
from lift.opencl_gen.kernels import PIPELINE, generate
from lift.opencl_gen.pipeline import Pass, Pipeline

F = Float
N = SizeVar("N")
add = UserFun("add", ("x", "y"), "return x + y;", (F, F), F, python=lambda x, y: x + y)
neg = UserFun("neg", ("x",), "return -x;", (F,), F, python=np.negative)


def _concrete_patterns() -> list:
    found, stack = [], [P.Pattern]
    while stack:
        cls = stack.pop()
        subs = [c for c in cls.__subclasses__() if c.__module__ in (P.__name__, O.__name__)]
        stack.extend(subs)
        if "__dataclass_fields__" in vars(cls):  # a concrete pattern, a leaf or not (ReduceSeq and its unrolled form)
            found.append(cls)
    return sorted(found, key=lambda c: c.__name__)


PATTERNS = _concrete_patterns()


def test_the_pattern_classes_are_found():
    names = {c.__name__ for c in PATTERNS}
    assert {"MapGlb", "MapAccumSeq", "ReduceSeq", "Iterate", "ToLocal", "Split", "Pad", "Reduce"} <= names


@pytest.mark.parametrize("cls", PATTERNS, ids=lambda c: c.__name__)
def test_the_emitter_and_the_cost_model_handle_every_pattern(cls):
    assert handles(Emitter, cls)
    assert handles(CostWalk, cls)
    if not cls.is_view and cls.level != P.HIGH:
        # an OpenCL pattern that computes has a rule of its own, not the catch-all for views
        assert Emitter.method_name(cls) != "call_Pattern"
        assert CostWalk.method_name(cls) != "map_Pattern"


def test_the_cost_model_profiles_a_map_accum_seq():
    n = 64
    step = lambda acc, e: Tuple(neg(e), add(acc, e))
    program = fun([ArrayType(F, N)], lambda x: MapAccumSeq(step, 0.0)(x))
    g = generate(program, "mas", {"N": n})
    (k,) = profile(g)
    assert k.calls[1] == 2 * n, "neg and add once per element"
    assert k.global_bytes == 4 * (n + n + n + 1), "x read by neg and by add, the elements and the sum written"
    assert k.work_items == 1


def test_the_pipeline_names_its_passes_and_the_validator_catches_a_broken_pass():
    assert PIPELINE.names == ("inline-lets", "check-lowered", "infer-address-spaces", "choose-index-width",
                              "allocate-io", "plan-kernels", "allocate-memory", "emit", "place-barriers",
                              "check-in-place", "render")
    program = fun([ArrayType(F, N)], lambda x: (Join() @ MapGlb(MapSeq(neg)) @ Split(4))(x))
    twice = Pass("twice", lambda c: replace(c, kernels=c.kernels + c.kernels))
    after_emit = PIPELINE.names.index("emit") + 1
    broken = Pipeline(PIPELINE.passes[:after_emit] + (twice,) + PIPELINE.passes[after_emit:], PIPELINE.validate)
    g = generate(program, "ok", debug=True)
    assert len(g.kernels) == 1
    from lift.opencl_gen.kernels import Compilation, specialise
    state = Compilation("bad", specialise(program, {}), {}, {}, None)
    with pytest.raises(lift.LiftCodegenError, match="invalid program after pass twice: kernel names repeat"):
        broken.run(state, debug=True)
    broken.run(state, debug=False)


def test_kernel_bodies_are_c_statements_rendered_at_the_end():
    program = fun([ArrayType(F, N)], lambda x: (Join() @ MapGlb(ReduceSeq(add, 0.0)) @ Split(4))(x))
    g = generate(program, "sums", {"N": 16})
    (k,) = g.kernels
    loops = [s for s in C.walk(k.body) if isinstance(s, (C.For, C.Block))]
    assert loops and all(isinstance(s, C.Stmt) for s in C.walk(k.body))
    assert "\n".join(k.lines) in g.source
    assert C.render((C.For("i", "0", "n", "1", (C.Assign("x[i]", "0.0f"),)),)) == [
        "    for (int i = 0; i < n; i += 1) {", "        x[i] = 0.0f;", "    }"]


def test_barriers_follow_map_locals_that_fill_fresh_memory_at_work_group_level():
    from lift.opencl_gen.barriers import place_barriers

    fill = C.For("l", "get_local_id(0)", "64", "get_local_size(0)", (C.Assign("lmem[l]", "x[l]"),), kind="lcl",
                 fresh="local")
    into_output = replace(fill, fresh=None)
    placed = place_barriers((C.Block((fill, into_output), C.Decl("int", "wg", "get_group_id(0)"), kind="wrg"),))
    assert [type(s).__name__ for s in placed[0].body] == ["For", "Barrier", "For"]
    assert placed[0].body[1] == C.Barrier("CLK_LOCAL_MEM_FENCE")
    in_a_work_item = place_barriers((C.For("i", "0", "4", "1", (fill,), kind="seq"),))
    assert not any(isinstance(s, C.Barrier) for s in C.walk(in_a_work_item))


def test_the_generator_and_the_rules_share_one_hierarchy_check():
    from lift.rules.hierarchy import parallel_dims, placement_error

    wrg, seq = P.MapWrg(neg), P.MapSeq(neg)
    assert placement_error(P.MapLcl, 0, ()) == "map-local must be inside a map-workgroup"
    assert parallel_dims(P.MapLcl, (), neg) == []
    assert parallel_dims(P.MapLcl, (wrg,), neg) == [0, 1, 2]
    assert parallel_dims(P.MapLcl, (wrg, seq), neg) == []
    program = fun([ArrayType(F, N)], lambda x: (Join() @ MapSeq(P.MapLcl(neg)) @ Split(4))(x))
    where = r"map-local\(neg\) at body\.args0\.f\.f"
    with pytest.raises(lift.LiftCodegenError, match=where + ": map-local must be inside a map-workgroup"):
        generate(program)
