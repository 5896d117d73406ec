"""`map-tail` (`lift.rules.map_tail`): a map of `n` elements is the concatenation of the map of its first
`k·⌊n/k⌋` elements and the map of the rest; and the default lowering's elementwise maps of a row
(`lift.rules.row_map_lanes`) built on it.

The interpreter agrees before and after at every `n` and `k` (`n < k`, `n = k`, `n = k·m + r` for every `r`), of a
plain array and a zip, inside a map over rows, concrete and symbolic; the kernels of the concatenation (each part
written into its slice of the destination, or read back through a `concat` view) agree with numpy. The default
lowering maps the head of softmax's and layer normalisation's last map in vectors (`vstore8`) and its tail in
scalars at odd row lengths, and its kernels agree with numpy; on a device of native width 1 the map stays scalar."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import (ArrayType, Concat, Drop, Float, Get, Lambda, Map, MapGlb, MapSeq, ReduceSeq, SizeVar, Take, Zip, fun,
                  paper)
from lift.ir.typecheck import infer
from lift.rules import Rewrite, RewriteEngine
from lift.rules.default_lowering import default_lowering
from lift.rules.registry import rule_named
from opencl_device import needs_device, vector_lowering
from userfuns import add, diff, shifted

N, R = SizeVar("N"), SizeVar("R")
MAP_TAIL = rule_named("map-tail")


def _map(n, shape: str):
    """A map of `n` elements, of a plain array or of a zip, at the top or over the rows of a matrix."""
    if shape == "zip":
        return fun([ArrayType(Float, n), ArrayType(Float, n)],
                   lambda x, y: Map(lambda p: diff(Get(p, 0), Get(p, 1)))(Zip(x, y)))
    if shape == "rows":
        return fun([ArrayType(ArrayType(Float, n), 3), ArrayType(Float, n)],
                   lambda a, y: Map(lambda row: Map(shifted)(row))(a))
    return fun([ArrayType(Float, n), ArrayType(Float, n)], lambda x, y: Map(shifted)(x))


def _split(program, k: int, shape: str):
    """`program` with `map-tail` applied with `k` at its map (of the rows, the inner one), typed."""
    call = infer(program).expr.body
    if shape == "rows":
        inner = call.f.f
        split = Lambda(program.params, Map(Lambda(inner.params, MAP_TAIL.apply(inner.body, {"k": k})))(*call.args))
    else:
        split = Lambda(program.params, MAP_TAIL.apply(call, {"k": k}))
    infer(split)
    return split


def _inputs(n: int, shape: str, seed: int):
    rng = np.random.default_rng(seed)
    first = rng.uniform(-1, 1, (3, n) if shape == "rows" else n).astype(np.float32)
    return first, rng.uniform(-1, 1, n).astype(np.float32)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.integers(1, 20), st.integers(1, 9), st.sampled_from(["array", "zip", "rows"]), st.integers(0, 2**16))
def test_the_head_and_the_tail_mapped_apart_keep_the_meaning(n, k, shape, seed):
    program = _map(n, shape)
    split = _split(program, k, shape)
    head = n // k * k
    assert "concat(" in paper(split) and f"take-{head}" in paper(split) and f"drop-{head}" in paper(split)
    x, y = _inputs(n, shape, seed)
    np.testing.assert_array_equal(lift.interpret(split, x, y), lift.interpret(program, x, y))


@pytest.mark.parametrize("k", [1, 2, 3, 4, 8])
def test_every_remainder_and_a_k_above_the_length_keep_the_map(k):
    """`n < k` (no head), `n = k` (no tail) and `n = k·m + r` for every `r`, over a zip."""
    for n in range(1, 3 * k + 1):
        x, y = _inputs(n, "zip", n)
        np.testing.assert_array_equal(lift.interpret(_split(_map(n, "zip"), k, "zip"), x, y), x - y)


def test_at_a_symbolic_length_the_head_is_a_multiple_of_k_and_the_tail_the_rest():
    split = _split(_map(N, "array"), 8, "array")
    assert paper(split) == "λ x, y. concat(map(shifted) ∘ take-(8*(N//8))(x), map(shifted) ∘ drop-(8*(N//8))(x))"
    x = np.random.default_rng(1).uniform(-1, 1, 1003).astype(np.float32)
    np.testing.assert_array_equal(lift.interpret(split, x, x), x * np.float32(0.5) + np.float32(1.0))


def test_the_engine_offers_the_ks_that_leave_a_tail_and_a_head():
    engine = RewriteEngine()
    offered = {n: [dict(rw.params)["k"] for rw in engine.rewrites(_map(n, "array")) if rw.rule == "map-tail"]
               for n in (3, 8, 12, 999)}
    assert offered == {3: [2], 8: [], 12: [8], 999: [2, 4, 8, 16, 32, 64, 128, 256, 512]}
    split = engine.apply(_map(12, "array"), Rewrite.of("map-tail", "body", {"k": 8}))
    assert "take-8" in paper(split) and "drop-8" in paper(split)


def test_concat_of_arrays_of_other_element_types_is_one_clear_error():
    with pytest.raises(lift.LiftTypeError, match="concat"):
        infer(fun([ArrayType(Float, 4), ArrayType(lift.Int, 4)], lambda x, y: Concat(x, y)))


def _rows_kernel(read_back: bool):
    """Over each row of 999 floats: `shifted` of its first 992 as float8s and of the 7 after them as scalars,
    concatenated into the output's row, or read back through the concatenation by a sum."""
    def row(r):
        head = lift.AsScalar()(MapSeq(lift.Vectorize(8, shifted))(lift.AsVector(8)(Take(992)(r))))
        both = Concat(head, MapSeq(shifted)(Drop(992)(r)))
        return ReduceSeq(add, 0.0)(both) if read_back else both

    return fun([ArrayType(ArrayType(Float, 999), R)], lambda a: MapGlb(row)(a))


@needs_device
@pytest.mark.parametrize("read_back", [False, True])
def test_a_concatenation_is_written_into_slices_of_its_destination_or_read_back(read_back):
    a = np.random.default_rng(2).uniform(-1, 1, (5, 999)).astype(np.float32)
    compiled = lift.compile(_rows_kernel(read_back), sizes={"R": 5})
    want = (a * np.float32(0.5) + np.float32(1.0)).astype(np.float64)
    if read_back:
        assert "? " in compiled.source
        np.testing.assert_allclose(np.asarray(compiled(a)).ravel(), want.sum(axis=1), rtol=1e-5)
    else:
        assert "vstore8(" in compiled.source and "< 999" not in compiled.source
        np.testing.assert_allclose(compiled(a), want, rtol=1e-6)


@needs_device
def test_concatenations_of_kernels_results_and_an_input_are_written_in_slices_or_read_in_a_kernel_of_their_own():
    """Outside every map: each part's kernel writes its slice of the output; read by a map, the parts (two kernels'
    results and the input) are that map's kernel's arguments."""
    a = np.arange(10, dtype=np.float32)
    written = fun([ArrayType(Float, 10)], lambda x: Concat(MapGlb(shifted)(Take(3)(x)), MapGlb(shifted)(Drop(3)(x))))
    np.testing.assert_array_equal(lift.compile(written, sizes={})(a), a * np.float32(0.5) + np.float32(1.0))
    read = fun([ArrayType(Float, 10)], lambda x: MapSeq(shifted)(
        Concat(MapSeq(shifted)(Take(3)(x)), MapSeq(shifted)(Take(4)(Drop(3)(x))), Drop(7)(x))))
    twice = (a * np.float32(0.5) + np.float32(1.0)) * np.float32(0.5) + np.float32(1.0)
    np.testing.assert_array_equal(lift.compile(read, sizes={})(a),
                                  np.concatenate([twice[:7], a[7:] * np.float32(0.5) + np.float32(1.0)]))


ROW_MAPS = {"softmax": ("R", "C", "divide_by_scalar"), "layernorm": ("R", "C", "scale_scalar")}


@needs_device
@pytest.mark.parametrize("name", sorted(ROW_MAPS))
@pytest.mark.parametrize("columns", [999, 1001, 1003, 1000])
def test_a_row_s_last_map_stores_vectors_and_a_scalar_tail_and_agrees_with_numpy(examples, name, columns):
    """On a vectorising device the elementwise map giving each row's result maps float8s of the row's first
    `8·⌊n/8⌋` elements (vector loads and stores) and scalars of the rest (none at 1000), and computes numpy's
    results."""
    pf = examples[name]
    rows, cols, f = ROW_MAPS[name]
    sizes = {rows: 7, cols: columns}
    compiled = lift.compile(pf.kernels[name], lowering=vector_lowering(pf.kernels[name], sizes), sizes=sizes)
    head = columns // 8 * 8
    assert re.search(rf"vstore8\({f}_v8\(", compiled.source)
    tail = re.search(rf"out\[{columns}\*g_0 \+ (i_\d+ \+ )?{head}\] = {f}\(", compiled.source)
    assert (tail is not None) == (head < columns)
    inputs = pf.inputs(name, sizes, seed=columns)
    want = np.asarray(pf.namespace["reference"](*inputs), np.float64)
    got = np.asarray(compiled(*inputs), np.float64)
    np.testing.assert_allclose(got, want.reshape(got.shape), rtol=1e-4, atol=1e-6)


def test_without_row_maps_or_on_a_device_of_native_width_one_the_map_stays_scalar(examples):
    program, sizes = examples["softmax"].kernels["softmax"], {"R": 7, "C": 999}
    vectorised = paper(default_lowering(program, sizes).replay(program))
    assert "concat(" in vectorised and "vectorize-8(divide_by_scalar)" in vectorised
    for lowering in (default_lowering(program, sizes, row_maps=False), default_lowering(program, sizes, vector_width=1)):
        assert "concat(" not in paper(lowering.replay(program)) and "map-tail" not in {s.rule for s in lowering.steps}
