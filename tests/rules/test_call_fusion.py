"""Fusing calls: the rules of `lift.rules.call_fusion` preserve meaning and refuse where they do not apply,
and `fuse` takes BLAS sequences (AXPYDOT, VADD, WAXPBY, BiCGK, GEMVER) to one map over chunks."""

import numpy as np
import pytest

import lift
from lift import (ArrayType, Float, Get, Join, Map, MapAccumSeq, MapGlb, MapSeq, Reduce, ReduceSeq, ReorderStride,
                  SizeVar, Split, Transpose, Tuple, Unzip, UserFun, Zip, fun, infer, interpret)
from lift.ir.nodes import FunCall, Literal
from lift.opencl_gen.compiled import compile
from lift.opencl_gen import runtime
from lift.opencl_gen.kernels import generate
from lift.rules import Rewrite, RewriteEngine, RuleNotApplicable, alpha_equal, catalogue
from lift.rules.call_fusion import RULES as CALL_FUSION_RULES
from lift.rules.fused_derivations import fuse, lower_unfused

F = Float
N, M = SizeVar("N"), SizeVar("M")
V, W = ArrayType(F, N), ArrayType(F, M)
A = ArrayType(ArrayType(F, M), N)
add = UserFun("add", ("x", "y"), "return x + y;", (F, F), F, python=lambda x, y: x + y)
mult = UserFun("mult", ("x", "y"), "return x * y;", (F, F), F, python=lambda x, y: x * y)
neg = UserFun("neg", ("x",), "return -x;", (F,), F, python=np.negative)
half = UserFun("halve", ("x",), "return 0.5f * x;", (F,), F, python=lambda x: x * np.float32(0.5))
axpy = UserFun("axpy", ("a", "x", "y"), "return x - a * y;", (F, F, F), F, python=lambda a, x, y: x - a * y)
axpby = UserFun("axpby", ("a", "x", "b", "y"), "return a * x + b * y;", (F, F, F, F), F,
                python=lambda a, x, b, y: a * x + b * y)
rank2 = UserFun("rank2", ("a", "u1", "v1", "u2", "v2"), "return a + u1 * v1 + u2 * v2;", (F,) * 5, F,
                python=lambda a, u1, v1, u2, v2: a + u1 * v1 + u2 * v2)
ENGINE = RewriteEngine()
RNG = np.random.default_rng(7)

try:
    runtime.select_device()
    HAVE_DEVICE = True
except lift.LiftError:
    HAVE_DEVICE = False


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32) if shape else np.float32(RNG.standard_normal())


def same(got, expected, reassociates=False):
    got, expected = (got, expected) if isinstance(expected, tuple) else ((got,), (expected,))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        if reassociates:
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
        else:
            np.testing.assert_array_equal(g, e)


def rewritten(program, rule, at="body", **params):
    new = ENGINE.apply(program, Rewrite.of(rule, at, params))
    assert infer(new).type == infer(program).type
    return new


def check(program, inputs, rule, at="body", **params):
    new = rewritten(program, rule, at, **params)
    same(interpret(new, *inputs), interpret(program, *inputs), ENGINE.rule(rule).reassociates)
    return new


def refuses(program, rule, why, at="body", **params):
    with pytest.raises(RuleNotApplicable, match=why):
        ENGINE.apply(program, Rewrite.of(rule, at, params))
    enumerated = [rw.param_dict for rw in ENGINE.rewrites(program) if rw.rule == rule and rw.location == at]
    assert params not in enumerated


def dot(x):
    return lambda row: Reduce(add, 0.0)(Map(mult)(Zip(row, x)))


# --- the rules ------------------------------------------------------------------------------------------


def test_the_rules_are_in_the_catalogue():
    names = {e["name"] for e in catalogue()}
    assert {r.name for r in CALL_FUSION_RULES} <= names
    assert {r.name for r in CALL_FUSION_RULES if r.reassociates} == {"transpose-partial-reduction",
                                                                     "map-reduce-interchange"}
    assert "map-accum-fusion" in names


def test_tuple_fusion_computes_every_output_in_one_map():
    p = fun([V, V], lambda x, y: Tuple(Map(neg)(x), Reduce(add, 0.0)(Map(half)(x)), Map(add)(Zip(x, y)),
                                       Join()(Split(2)(Map(half)(x)))))
    new = check(p, [rand(6), rand(6)], "tuple-fusion")
    maps = {c for c in _calls(new.body) if isinstance(c.f, Map)}
    assert len(maps) == 2  # the fused map over x (shared by three outputs) and the map over zip(x, y)
    refuses(fun([V, V], lambda x, y: Tuple(Map(neg)(x), Map(neg)(y))), "tuple-fusion", "no two maps of one kind")
    refuses(fun([V], lambda x: Tuple(Map(neg)(x), MapGlb(neg)(x))), "tuple-fusion", "no two maps of one kind")


def test_unzip_fission_takes_one_component_back():
    p = fun([V], lambda x: Get(0)(Unzip()(Map(lambda e: Tuple(neg(e), half(e)))(x))))
    new = check(p, [rand(5)], "unzip-fission")
    assert alpha_equal(new, fun([V], lambda x: Map(neg)(x)))
    refuses(fun([V], lambda x: Get(1)(Tuple(x, x))), "unzip-fission", "expects unzip")
    refuses(fun([V], lambda x: Get(0)(Unzip()(Zip(x, x)))), "unzip-fission", "the unzipped array is not a map")
    refuses(fun([V, V], lambda x, y: Get(0)(Unzip()(Map(lambda e: e)(Zip(x, y))))), "unzip-fission",
            "does not build a tuple")


def test_zip_map_and_map_zip_fusion():
    p = fun([V, V], lambda x, y: Map(add)(Zip(Map(neg)(x), y)))
    fused = check(p, [rand(7), rand(7)], "map-zip-fusion", i=0)
    assert alpha_equal(fused, fun([V, V], lambda x, y: Map(lambda t: add(neg(Get(t, 0)), Get(t, 1)))(Zip(x, y))))
    check(p, [rand(7), rand(7)], "zip-map", at="body.args0", i=0)
    refuses(p, "map-zip-fusion", r"parameters \{i=1\} do not apply", i=1)
    refuses(fun([V], lambda x: Map(neg)(x)), "map-zip-fusion", "the map's input is not a zip")
    refuses(fun([V, V], lambda x, y: Map(add)(Zip(x, y))), "zip-map", "no array of the zip is a map", at="body.args0")


def test_map_zip_flatten():
    p = fun([V, V, V], lambda x, y, z: Map(lambda t: add(mult(Get(Get(t, 1), 0), Get(Get(t, 1), 1)), Get(t, 0)))(
        Zip(z, Zip(x, y))))
    new = check(p, [rand(4), rand(4), rand(4)], "map-zip-flatten", i=1)
    assert isinstance(new.body.args[0].f, Zip) and new.body.args[0].f.n == 3
    refuses(p, "map-zip-flatten", r"parameters \{i=0\} do not apply", i=0)


def test_zip_union_widens_element_and_chunk_maps():
    p = fun([V, V, V], lambda a, b, c: Tuple(Map(add)(Zip(a, b)), Map(mult)(Zip(b, c)), Map(neg)(a)))
    new = check(p, [rand(6), rand(6), rand(6)], "zip-union")
    assert {c.args[0] for c in _calls(new.body) if isinstance(c.f, Map)} == {Zip(*new.params)}
    chunks = fun([A, V], lambda m, r: Tuple(Join()(Map(Map(Reduce(add, 0.0)))(Split(2)(m))),
                                             Join()(Map(Map(mult))(Split(2)(Zip(r, r))))))
    check(chunks, [rand(4, 3), rand(4)], "zip-union")
    refuses(fun([V, V], lambda a, b: Tuple(Map(add)(Zip(a, b)), Map(mult)(Zip(a, b)))), "zip-union", "no two maps")
    refuses(fun([V, W], lambda a, b: Tuple(Map(neg)(a), Map(neg)(b))), "zip-union", "no two maps")


def test_transposed_gemv_becomes_chunks_of_rows():
    gemvt = fun([A, V], lambda m, r: Map(dot(r))(Transpose()(m)))
    for rows, cols, chunk in ((6, 4, 2), (6, 4, 3), (4, 7, 4), (5, 5, 1)):
        check(gemvt, [rand(rows, cols), rand(rows)], "transpose-partial-reduction", chunk=chunk)
    flipped = fun([A, V], lambda m, r: Map(lambda col: Reduce(add, 0.0)(Map(mult)(Zip(r, col))))(Transpose()(m)))
    check(flipped, [rand(6, 3), rand(6)], "transpose-partial-reduction", chunk=3)
    refuses(fun([A, W], lambda m, p: Map(dot(p))(m)), "transpose-partial-reduction", "not a transposed matrix",
            chunk=2)
    refuses(fun([A], lambda m: Map(lambda col: Reduce(add, 0.0)(col))(Transpose()(m))),
            "transpose-partial-reduction", "not reduce", chunk=2)
    small = fun([ArrayType(ArrayType(F, 4), 6), ArrayType(F, 6)], lambda m, r: Map(dot(r))(Transpose()(m)))
    refuses(small, "transpose-partial-reduction", r"parameters \{chunk=4\} do not apply", chunk=4)


def test_column_sums_without_a_zip_are_column_reductions_too():
    """`map(λcol. reduce(f, z)(map(g)(col)))(transpose(A))`, which `reduce-map-id` makes of column sums, is
    chunked by rows and folded row by row, whatever the shape."""
    sums = fun([A], lambda m: Map(lambda col: Reduce(add, 0.0)(Map(neg)(col)))(Transpose()(m)))
    for rows, cols, chunk in ((6, 4, 2), (6, 4, 3), (4, 7, 4), (5, 5, 1)):
        check(sums, [rand(rows, cols)], "transpose-partial-reduction", chunk=chunk)
        new = check(sums, [rand(rows, cols)], "map-reduce-interchange")
        (fold,) = [c for c in _calls(new.body) if isinstance(c.f, ReduceSeq)]
        assert fold.args[0] == new.params[0], "the fold reads the rows of the matrix itself"


def test_column_reductions_fold_the_rows_into_a_row_of_accumulators():
    gemvt = fun([A, V], lambda m, r: Map(dot(r))(Transpose()(m)))
    for rows, cols in ((6, 4), (1, 5), (5, 8)):
        new = check(gemvt, [rand(rows, cols), rand(rows)], "map-reduce-interchange")
        (fold,) = [c for c in _calls(new.body) if isinstance(c.f, ReduceSeq)]
        assert fold.f.init == Literal(0.0, W)
    flipped = fun([A, V], lambda m, r: Map(lambda col: Reduce(add, 0.0)(Map(mult)(Zip(r, col))))(Transpose()(m)))
    check(flipped, [rand(6, 3), rand(6)], "map-reduce-interchange")
    inside = fun([A, V], lambda m, r: Map(lambda c: Join()(Map(dot(Get(1)(Unzip()(c))))(Transpose()(Get(0)(Unzip()(c))))))(
        Split(2)(Zip(m, r))))
    check(inside, [rand(4, 3), rand(4)], "map-reduce-interchange", at="body.f.f.body.args0")
    refuses(fun([A, W], lambda m, p: Map(dot(p))(m)), "map-reduce-interchange", "not a transposed matrix")
    refuses(fun([A, V], lambda m, r: Map(lambda col: Reduce(add, 0.0)(Map(neg)(r)))(Transpose()(m))),
            "map-reduce-interchange", "not reduce")
    refuses(fun([A, V], lambda m, r: Map(lambda col: Reduce(add, Get(0)(Tuple(0.0, 0.0)))(Map(mult)(Zip(col, r))))(
        Transpose()(m))), "map-reduce-interchange", "constant scalar initial value")


@pytest.mark.skipif(not HAVE_DEVICE, reason="no OpenCL device (install pocl-opencl-icd)")
def test_a_fold_into_an_array_accumulator_runs_in_place():
    colsums = fun([A], lambda m: Join()(ReduceSeq(lambda acc, row: MapSeq(add)(Zip(acc, row)), Literal(1.0, W))(m)))
    x = rand(7, 12)
    np.testing.assert_allclose(interpret(colsums, x), 1.0 + x.sum(axis=0), rtol=1e-5)
    kernel = MapGlb(lambda m: Join()(ReduceSeq(lambda acc, row: MapSeq(add)(Zip(acc, row)), Literal(1.0, W))(m)))
    batched = fun([ArrayType(A, SizeVar("K"))], lambda ms: kernel(ms))
    xs = rand(3, 7, 12)
    np.testing.assert_allclose(compile(batched)(xs), 1.0 + xs.sum(axis=1), rtol=1e-5)


def test_a_fold_reading_its_accumulator_elsewhere_steps_into_a_fresh_buffer():
    """A step that reads other elements of its array accumulator than it writes (reordered, or all of it for
    every element) would read elements it has overwritten: it is emitted into a fresh buffer copied back
    after the step, where the aligned fold updates its accumulator in place."""
    aligned = ReduceSeq(lambda acc, row: MapSeq(add)(Zip(acc, row)), Literal(1.0, W))
    reordered = ReduceSeq(lambda acc, row: MapSeq(add)(Zip(ReorderStride(3)(acc), row)), Literal(1.0, W))
    summed = ReduceSeq(lambda acc, row: Join()(MapSeq(lambda e: ReduceSeq(add, e)(acc))(row)), Literal(1.0, W))
    accum = MapAccumSeq(lambda acc, row: Tuple(ReduceSeq(add, 0.0)(row),
                                               MapSeq(add)(Zip(ReorderStride(2)(acc), row))), Literal(0.0, W))
    assert generate(fun([A], lambda m: Join()(aligned(m)))).temporaries == []
    programs = [fun([A], lambda m: Join()(reordered(m))), fun([A], lambda m: Join()(summed(m))),
                fun([A], lambda m: accum(m))]
    for p in programs:
        assert len(generate(p).temporaries) == 1
    six = ReduceSeq(lambda acc, row: MapSeq(add)(Zip(ReorderStride(3)(acc), row)), Literal(1.0, ArrayType(F, 6)))
    private = fun([ArrayType(ArrayType(ArrayType(F, 6), N), M)], lambda ms: MapGlb(lambda m: MapSeq(neg)(Join()(
        six(m))))(ms))
    assert generate(private).temporaries == []
    if HAVE_DEVICE:
        x = rand(5, 12)
        for p in programs:
            same(compile(p)(x), interpret(p, x, numpy_shapes=True), reassociates=True)
        xs = rand(3, 5, 6)
        same(compile(private)(xs), interpret(private, xs, numpy_shapes=True), reassociates=True)


def test_map_accum_fusion_computes_a_map_and_a_fold_in_one_loop():
    fold = ReduceSeq(lambda acc, e: add(acc, mult(e)), 0.0)
    p = fun([V, V], lambda x, y: Tuple(Join()(Split(2)(MapSeq(neg)(x))), fold(Zip(x, y))))
    new = check(p, [rand(6), rand(6)], "map-accum-fusion")
    (loop,) = {c for c in _calls(new.body) if isinstance(c.f, MapAccumSeq)}
    assert loop.args[0] == Zip(*new.params)
    assert not [c for c in _calls(new.body) if isinstance(c.f, (MapSeq, ReduceSeq))]
    same_array = fun([V], lambda x: Tuple(MapSeq(neg)(x), ReduceSeq(add, 1.0)(x)))
    assert check(same_array, [rand(5)], "map-accum-fusion").body.args[0].args[0].args[0] == same_array.params[0]
    update = ReduceSeq(lambda acc, t: MapSeq(lambda e: add(Get(e, 0), mult(Get(e, 1), Get(t, 1))))(
        Zip(acc, Get(t, 0))), Literal(0.0, W))
    rows = fun([A, V, W], lambda m, r, p: Tuple(MapSeq(lambda row: ReduceSeq(add, 0.0)(row))(m),
                                                Join()(update(Zip(m, r)))))
    check(rows, [rand(5, 3), rand(5), rand(3)], "map-accum-fusion")
    refuses(fun([V, V], lambda x, y: Tuple(MapSeq(neg)(x), ReduceSeq(add, 0.0)(y))), "map-accum-fusion",
            "no map-seq and reduce-seq")
    refuses(fun([V], lambda x: Tuple(Map(neg)(x), Reduce(add, 0.0)(x))), "map-accum-fusion", "no map-seq")
    refuses(fun([V], lambda x: Tuple(MapSeq(neg)(x), fold(Zip(x, MapSeq(neg)(x))))), "map-accum-fusion",
            "no map-seq")


def test_map_accum_seq_means_a_map_and_a_fold():
    p = fun([V], lambda x: MapAccumSeq(lambda acc, e: Tuple(mult(acc, e), add(acc, e)), 1.0)(x))
    x = rand(6)
    ys, (total,) = interpret(p, x)
    np.testing.assert_allclose(total, 1.0 + np.cumsum(x)[-1], rtol=1e-5)
    np.testing.assert_allclose(ys, x * (1.0 + np.concatenate([[0.0], np.cumsum(x)[:-1]])), rtol=1e-5)
    with pytest.raises(lift.LiftTypeError, match="map-accum-seq.*the next accumulator"):
        infer(fun([V], lambda x: MapAccumSeq(lambda acc, e: add(acc, e), 0.0)(x)))
    if HAVE_DEVICE:
        rows = MapGlb(MapAccumSeq(lambda acc, e: Tuple(mult(acc, e), add(acc, e)), 1.0))
        batched = fun([ArrayType(V, M)], lambda xs: Unzip()(rows(xs)))
        xs = rand(3, 6)
        got = compile(batched)(xs)
        want = interpret(batched, xs, numpy_shapes=True)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5)


# --- fuse: BLAS sequences --------------------------------------------------------------------------------


def axpydot(w, v, u, a):
    z = Map(lambda wv: axpy(a, Get(wv, 0), Get(wv, 1)))(Zip(w, v))
    return Tuple(z, Reduce(add, 0.0)(Map(mult)(Zip(z, u))))


def bicgk(m, p, r):
    return Tuple(Join()(Map(dot(p))(m)), Join()(Map(dot(r))(Transpose()(m))))


def gemver(m, u1, v1, u2, v2, y, z, b):
    rows = Zip(m, u1, u2)
    bm = Map(lambda t: Map(lambda av: rank2(Get(av, 0), Get(t, 1), Get(av, 1), Get(t, 2), Get(av, 2)))(
        Zip(Get(t, 0), v1, v2)))(rows)
    x = Map(lambda sz: axpby(b, Get(sz, 0), 1.0, Get(sz, 1)))(Zip(Join()(Map(dot(y))(Transpose()(bm))), z))
    return Tuple(bm, x)


SEQUENCES = {
    "axpydot": (fun([V, V, V, F], axpydot), lambda: [rand(12), rand(12), rand(12), rand()], 1),
    "vadd": (fun([V, V, V], lambda w, y, z: Map(add)(Zip(Map(add)(Zip(w, y)), z))),
             lambda: [rand(12), rand(12), rand(12)], 0),
    "waxpby": (fun([V, V, F, F], lambda x, y, a, b: Map(add)(Zip(Map(lambda e: mult(a, e))(x),
                                                                    Map(lambda e: mult(b, e))(y)))),
               lambda: [rand(12), rand(12), rand(), rand()], 0),
    "bicgk": (fun([A, W, V], bicgk), lambda: [rand(12, 5), rand(5), rand(12)], 1),
    "gemver": (fun([A, V, W, V, W, V, W, F], gemver),
               lambda: [rand(12, 5), rand(12), rand(5), rand(12), rand(5), rand(12), rand(5), rand()], 2),
}


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_fuse_gives_one_map_over_chunks(name):
    program, inputs, finals = SEQUENCES[name]
    derivation = fuse(program, 4)
    fused = derivation.replay(program)
    chunk_maps = {c for c in _calls(fused.body) if isinstance(c.f, MapGlb) and _is_chunks(c.args[0])}
    assert len(chunk_maps) == 1
    (kernel,) = chunk_maps
    assert all(isinstance(f, MapSeq) or not isinstance(f, Map) for f in _functions(kernel.f.f))
    others = {c for c in _calls(fused.body) if isinstance(c.f, (MapGlb, ReduceSeq)) and c not in chunk_maps}
    assert len(others) == finals
    assert not [f for f in _functions(fused) if isinstance(f, (Map, Reduce))]
    xs = inputs()
    same(interpret(fused, *xs), interpret(program, *xs), reassociates=True)
    assert len(derivation.format_figure8(program).splitlines()) == len(derivation.steps) + 1
    if name == "bicgk":  # one loop over a chunk's rows, one over each row's elements: A is read once
        loops = {f for f in _functions(kernel.f.f) if isinstance(f, (MapSeq, ReduceSeq, MapAccumSeq))}
        assert len(loops) == 2 and all(isinstance(f, MapAccumSeq) for f in loops)


def test_lower_unfused_lowers_one_call_the_same_way():
    dot_call = fun([V, V], lambda x, y: Reduce(add, 0.0)(Map(mult)(Zip(x, y))))
    lowered = lower_unfused(dot_call, 4).replay(dot_call)
    expected = fun([V, V], lambda x, y: ReduceSeq(add, 0.0)(Join()(MapGlb(ReduceSeq(
        lambda acc, e: add(acc, mult(e)), 0.0))(Split(4)(Zip(x, y))))))
    assert alpha_equal(lowered, expected)
    xs = [rand(16), rand(16)]
    same(interpret(lowered, *xs), interpret(dot_call, *xs), reassociates=True)
    scal = fun([V, F], lambda x, a: Map(lambda e: mult(a, e))(x))
    lowered = lower_unfused(scal, 4).replay(scal)
    assert alpha_equal(lowered, fun([V, F], lambda x, a: Join()(MapGlb(MapSeq(lambda e: mult(a, e)))(Split(4)(x)))))


@pytest.mark.skipif(not HAVE_DEVICE, reason="no OpenCL device (install pocl-opencl-icd)")
@pytest.mark.parametrize("name, kernels", [("axpydot", 2), ("vadd", 1), ("waxpby", 1), ("bicgk", 2)])
def test_fused_sequences_compile(name, kernels):
    """The BLAS-1 sequences on 64 elements; BiCGK's one kernel reads A once (`map-accum-seq`) and folds the
    partial column sums in a second."""
    from lift.opencl_gen.compiled import compile

    program, inputs, _ = SEQUENCES[name]
    fused = fuse(program, 4).replay(program)
    compiled = compile(fused)
    assert len(compiled.manifest["kernels"]) == kernels
    xs = [np.resize(x, 64) if np.ndim(x) and name != "bicgk" else x for x in inputs()]
    same(compiled(*xs), interpret(program, *xs, numpy_shapes=True), reassociates=True)


def _calls(e):
    """The calls of `e` reached through arguments only."""
    if isinstance(e, FunCall):
        yield e
        for a in e.args:
            yield from _calls(a)


def _functions(node):
    """Every pattern under `node`."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, lift.ir.patterns.Pattern):
            yield n
        stack.extend(c for _, c in n.children())


def _is_chunks(x):
    return isinstance(x, FunCall) and isinstance(x.f, Split) and isinstance(x.args[0], FunCall) and \
        isinstance(x.args[0].f, Zip)
