"""Register blocking and blocked column folds at sizes no block divides (issue 18): the padding rules
(`pad-map-repeat`, `pad-transpose`, `map-take-transpose`, `pad-copy`: `lift.rules.padding`) and the padded
strategies (`lift.rules.macro_rules.register_blocked(padded=True)`, `lift.rules.column_sums.blocked_columns(padded=
True)`) against the interpreter and numpy on random sizes, primes among them (Hypothesis)."""

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lift import (ArrayType, Float, Literal, Map, PadToMultiple, Reduce, Take, Transpose, Zip, fun, infer, interpret,
                  paper)
from lift.rules import RewriteEngine
from lift.rules.column_sums import blocked_columns, column_reduction
from lift.rules.macro_rules import MAX_PADDING, register_blocked
from lift.rules.strategy import Focus, outermost

from userfuns import add, mult, neg

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
ENGINE = RewriteEngine()
PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71)
PADDINGS = (0.0, "clamp")


def _rand(rng, *shape):
    return rng.integers(-4, 5, shape).astype(np.float32) / 2


def _matrix(rows, cols):
    return ArrayType(ArrayType(Float, cols), rows)


def _every(program, rule) -> list:
    """`program` rewritten by `rule` at every place and with every parameter the engine enumerates, type-checked."""
    out = []
    for rw in ENGINE.rewrites(program):
        if rw.rule == rule:
            new = ENGINE.apply(program, rw)
            assert infer(new).type == infer(program).type
            out.append(new)
    assert out, f"{rule} does not apply to {paper(program)}"
    return out


def _padding(value):
    return value if value == "clamp" else Literal(value, Float)


@SETTINGS
@given(st.integers(1, 7), st.integers(1, 7), st.integers(1, 5), st.sampled_from(PADDINGS), st.integers(0, 1 << 16))
def test_pad_transpose_pads_each_row(m, n, k, value, seed):
    x = _rand(np.random.default_rng(seed), m, n)
    program = fun([_matrix(m, n)], lambda a: PadToMultiple(k, _padding(value))(Transpose()(a)))
    (new,) = _every(program, "pad-transpose")
    assert paper(new).startswith("transpose ∘ map(pad-to-multiple")
    np.testing.assert_array_equal(interpret(new, x), interpret(program, x))


@SETTINGS
@given(st.integers(1, 7), st.integers(1, 7), st.data(), st.integers(0, 1 << 16))
def test_map_take_transpose_takes_the_first_columns(m, n, data, seed):
    t = data.draw(st.integers(0, n))
    x = _rand(np.random.default_rng(seed), m, n)
    program = fun([_matrix(m, n)], lambda a: Map(Take(t))(a))
    (new,) = _every(program, "map-take-transpose")
    np.testing.assert_array_equal(interpret(new, x), x[:, :t])


@SETTINGS
@given(st.sampled_from(PRIMES[1:] + (6, 12, 100)), st.booleans(), st.integers(0, 1 << 16))
def test_pad_map_repeat_keeps_the_first_n_results(n, zipped, seed):
    rng = np.random.default_rng(seed)
    x, y = _rand(rng, n), _rand(rng, n)
    if zipped:
        program = fun([ArrayType(Float, n)] * 2, lambda a, b: Map(add)(Zip(a, b)))
    else:
        program = fun([ArrayType(Float, n), ArrayType(Float, n)], lambda a, b: Map(neg)(a))
    for new in _every(program, "pad-map-repeat"):
        assert "pad-to-multiple" in paper(new) and "(clamp)" in paper(new)
        np.testing.assert_array_equal(interpret(new, x, y), interpret(program, x, y))


def test_pad_map_repeat_pads_only_to_multiples_that_do_not_divide():
    def multiples(n):
        program = fun([ArrayType(Float, n)], lambda a: Map(neg)(a))
        return [dict(rw.params)["k"] for rw in ENGINE.rewrites(program) if rw.rule == "pad-map-repeat"]

    assert multiples(16) == []
    assert multiples(12) == [8, 16]


def _product_of_padded(m, k, n, block, value):
    """`A B` with each row of `B` padded to a multiple of `block`: `map(λa. map(λb. dot(a, b))(transpose(
    map(pad)(B))))(A)`."""
    padded = Map(PadToMultiple(block, _padding(value)))
    return fun([_matrix(m, k), _matrix(k, n)], lambda A, B: Map(lambda a: Map(
        lambda b: Reduce(add, 0.0)(Map(mult)(Zip(a, b))))(Transpose()(padded(B))))(A))


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 5), st.sampled_from(PRIMES[:8]), st.sampled_from([2, 4, 8]),
       st.sampled_from(PADDINGS), st.integers(0, 1 << 16))
def test_pad_copy_pads_a_matrix_once_into_a_let(m, k, n, block, value, seed):
    rng = np.random.default_rng(seed)
    a, b = _rand(rng, m, k), _rand(rng, k, n)
    program = _product_of_padded(m, k, n, block, value)
    for new in _every(program, "pad-copy"):  # at the map over A and at the map over the padded columns
        assert "map(map(id)) ∘ map(pad-to-multiple" in paper(new)
        np.testing.assert_array_equal(interpret(new, a, b), interpret(program, a, b))


def test_pad_copy_copies_a_matrix_bound_by_a_map_only_inside_it():
    program = fun([ArrayType(_matrix(3, 5), 2)],
                  lambda xs: Map(lambda x: Map(Map(neg))(Map(PadToMultiple(4, 0.0))(x)))(xs))
    x = _rand(np.random.default_rng(0), 2, 3, 5)
    for new in _every(program, "pad-copy"):
        assert isinstance(new.body.f, Map), "the copy of each element's matrix stays inside the map over them"
        np.testing.assert_array_equal(interpret(new, x), interpret(program, x))


def _fits(length: int, k: int) -> bool:
    return -length % k <= length * MAX_PADDING


@SETTINGS
@given(st.sampled_from(PRIMES + (8, 24, 64)), st.integers(1, 9), st.sampled_from(PRIMES + (16, 40, 96)),
       st.sampled_from([1, 2, 4]), st.sampled_from([2, 4, 8]), st.sampled_from([None, 2, 4]),
       st.sampled_from([(1, 0), (0, 1), (2, 2)]), st.integers(0, 1 << 16))
def test_padded_register_blocking_agrees_with_numpy_at_any_size(m, k, n, h, w, vector, mapping, seed):
    """Every register blocking at random sizes, primes among them: applies exactly where the padding adds at most
    `MAX_PADDING` (and the vector divides the block), and computes `A B`."""
    from matmul import matmul

    assume(vector is None or vector < w)
    tiles = mapping if mapping == (2, 2) else None
    dims = (1, 0) if tiles else mapping
    rows, cols = h * (tiles or (1, 1))[0], w * (tiles or (1, 1))[1]
    applies = (rows == 1 or _fits(m, rows)) and _fits(n, cols)
    rng = np.random.default_rng(seed)
    a, b = _rand(rng, m, k), _rand(rng, k, n)
    sizes = {"M": m, "K": k, "N": n}
    focus = register_blocked(h, w, vector, dims, tiles, padded=True)(Focus(matmul, RewriteEngine(sizes=sizes)))
    assert (focus is not None) == applies, (m, k, n, h, w, vector, mapping)
    if focus is None:
        return
    lowered = paper(focus.program)
    assert ("pad-to-multiple" in lowered) == (m % rows != 0 or n % cols != 0)
    assert ("map(map(id))" in lowered or "map-global(map-seq(id))" in lowered) == (n % cols != 0)
    got = interpret(focus.program, a, b).reshape(m, n)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


@SETTINGS
@given(st.integers(1, 40), st.sampled_from(PRIMES + (32, 48)), st.sampled_from([2, 4, 8]), st.integers(0, 1 << 16))
def test_padded_blocked_columns_agree_with_numpy(rows, cols, w, seed):
    """A transposed gemv `Aᵀ y` folded in blocks of `w` columns, padded where `w` does not divide them."""
    assume(cols > w)  # `pad-map` pads to multiples up to the length's next power of two
    rng = np.random.default_rng(seed)
    a, y = _rand(rng, rows, cols), _rand(rng, rows)
    program = fun([_matrix(rows, cols), ArrayType(Float, rows)], lambda A, v: Map(
        lambda col: Reduce(add, 0.0)(Map(mult)(Zip(col, v))))(Transpose()(A)))
    padded = cols % w != 0
    focus = outermost(column_reduction, blocked_columns(w, padded))(Focus(program, RewriteEngine()))
    assert focus is not None
    assert ("take-" in paper(focus.program)) == padded
    np.testing.assert_allclose(interpret(focus.program, a, y).ravel(), a.T @ y, rtol=1e-5, atol=1e-5)
