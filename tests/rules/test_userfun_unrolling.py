"""`userfun-loop-unroll` (lift.rules.userfun_unrolling): a user function's loops of constant trip count unrolled.

Random user functions with loops (nested, stepping down, empty, with bounds an outer counter gives, conditions and
Int arithmetic on the counters) mean the same unrolled: the interpreter agrees exactly before and after, and the
kernel of the unrolled function agrees with it. The examples whose user functions loop (life, pdist, kmeans,
spmv_ell; not mandelbrot's 64 steps) are unrolled by the default lowering and agree with numpy at odd sizes."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import ArrayType, Float, Get, Int, Map, SizeVar, UserFun, Zip, fun, paper, userfun
from lift.ir.userfun_body import For, counter_indexed_reads, trip_count
from lift.ir.userfun_unrolling import size
from lift.ir.userfun_unrolling import unrolled as unrolled_body
from lift.opencl_gen.userfun_c import userfun_c_body
from lift.rules import RewriteEngine
from lift.rules.default_lowering import default_lowering
from lift.rules.userfun_unrolling import MAX_UNROLLED_STATEMENTS, unrolled_userfun
from opencl_device import needs_device

N = SizeVar("N")
ENGINE = RewriteEngine()
COUNTERS = ("i", "j", "k")


def _loops(body) -> list:
    """The loops of a typed body, nested ones included."""
    found = []
    for stmt in body:
        if isinstance(stmt, For):
            found += [stmt] + _loops(stmt.body)
        elif hasattr(stmt, "then"):
            found += _loops(stmt.then) + _loops(stmt.other)
    return found


# --- random user functions with loops ---------------------------------------------------------------------------


@st.composite
def _index(draw, counters):
    """An index into a row of 3: a counter, an offset one taken modulo 3, or a constant."""
    options = [str(c) for c in counters] + [f"({c} + {draw(st.integers(1, 2))}) % 3" for c in counters] + ["1"]
    return draw(st.sampled_from(options))


@st.composite
def _int_term(draw, counters):
    """Int arithmetic on the counters, negative values and C's truncating `/` and `%` included."""
    if not counters:
        return str(draw(st.integers(-3, 3)))
    c, d = draw(st.sampled_from(counters)), draw(st.sampled_from(counters))
    return draw(st.sampled_from([f"{c}", f"{c} * {d} - 2", f"({c} - 2) / 2", f"({d} - 3) % 2", f"-{c}"]))


@st.composite
def _condition(draw, counters):
    if not counters:
        return "x > 0"
    c, d = draw(st.sampled_from(counters)), draw(st.sampled_from(counters))
    return draw(st.sampled_from([f"{c} == {d}", f"{c} != 1 or {d} != 1", f"{c} < 2 and x > 0", f"not {c} > 0",
                                 f"w[{c}][{d}] > x"]))


@st.composite
def _statements(draw, counters, depth, t, names):
    """Statements updating the accumulator `acc` of type `t` (and locals `t0`, `t1`, ..., `names` counting them)."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["add", "int", "if", "select", "loop"] if depth < 3 and len(counters) < 3
                                    else ["add", "int", "if", "select"]))
        if kind == "add":
            element = f"w[{draw(_index(counters))}][{draw(_index(counters))}]"
            out.append(f"acc = acc * 0.5 + {element}" if t == "Float" else f"acc = acc + {element} * 2")
        elif kind == "int":
            local = f"t{len(names)}"
            names.append(local)
            out += [f"{local} = {draw(_int_term(counters))}", f"acc = acc + {local}"]
        elif kind == "if":
            then = draw(_statements(counters, depth + 1, t, names))
            out += [f"if {draw(_condition(counters))}:"] + ["    " + s for s in then] + \
                ["else:", f"    acc = acc - w[{draw(_index(counters))}][1]"]
        elif kind == "select":
            out.append(f"acc = acc + (w[{draw(_index(counters))}][0] if {draw(_condition(counters))} else x)")
        else:
            c = COUNTERS[len(counters)]
            outer = counters[-1] if counters else None
            bounds = draw(st.sampled_from(["3", "1, 3", "2, -1, -1", "0, 3, 2", "2, 1"]
                                          + ([f"{outer}, 3", f"{outer} + 1"] if outer else [])))
            body = draw(_statements(counters + (c,), depth + 1, t, names))
            out += [f"for {c} in range({bounds}):"] + ["    " + s for s in body]
    return out


@st.composite
def loop_functions(draw):
    """A user function `(w: [[T]3]3, x: T) -> T` of loops over the window, T Float or Int."""
    t = draw(st.sampled_from(["Float", "Int"]))
    body = draw(_statements((), 0, t, []))
    if not any(line.startswith("for ") for line in body):
        body = ["for i in range(3):", "    acc = acc + w[i][(i + 1) % 3]"] + body
    lines = [f"def looped(w: ArrayType(ArrayType({t}, 3), 3), x: {t}) -> {t}:", "    acc = x"]
    lines += ["    " + s for s in body] + ["    return acc"]
    return userfun(source="\n".join(lines)), (Float if t == "Float" else Int)


def _program(f: UserFun, t):
    return fun([ArrayType(ArrayType(ArrayType(t, 3), 3), N), ArrayType(t, N)],
               lambda ws, xs: Map(lambda p: f(Get(p, 0), Get(p, 1)))(Zip(ws, xs)))


def _inputs(t, n=7, seed=0):
    rng = np.random.default_rng(seed)
    if t == Int:
        return [rng.integers(-4, 5, (n, 3, 3)).astype(np.int32), rng.integers(-4, 5, n).astype(np.int32)]
    return [rng.uniform(-1, 1, (n, 3, 3)).astype(np.float32), rng.uniform(-1, 1, n).astype(np.float32)]


def _unrolled_program(program):
    """`program` with `userfun-loop-unroll` applied where the engine enumerates it (once: one user function), or
    None where it does not apply."""
    rewrites = [rw for rw in ENGINE.rewrites(program) if rw.rule == "userfun-loop-unroll"]
    assert len(rewrites) <= 1
    return ENGINE.apply(program, rewrites[0]) if rewrites else None


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(loop_functions())
def test_unrolling_a_random_user_function_keeps_its_meaning(drawn):
    f, t = drawn
    program = _program(f, t)
    unrolled = _unrolled_program(program)
    if unrolled is None:  # only where unrolling every loop would exceed the limit
        assert size(unrolled_body(f.origin.body, 10 ** 6)) > MAX_UNROLLED_STATEMENTS
        return
    (g,) = [n for n in unrolled.subterms() if isinstance(n, UserFun)]
    assert g.name == "looped_unrolled" and g != f
    inputs = _inputs(t)
    np.testing.assert_array_equal(lift.interpret(unrolled, *inputs), lift.interpret(program, *inputs))
    assert all(trip_count(loop) != 0 for loop in _loops(g.origin.body))  # an empty loop is unrolled to nothing
    assert not [rw for rw in ENGINE.rewrites(unrolled) if rw.rule == "userfun-loop-unroll"]


@needs_device
@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(loop_functions())
def test_the_kernel_of_a_random_unrolled_user_function_agrees_with_the_interpreter(drawn):
    f, t = drawn
    program = _program(f, t)
    inputs = _inputs(t, n=13, seed=1)
    got = lift.compile(_unrolled_program(program) or program, lowering="default")(*inputs)
    np.testing.assert_allclose(got, lift.interpret(program, *inputs), rtol=1e-5, atol=1e-5)


# --- the rule on examples ------------------------------------------------------------------------------------------


def test_a_window_loop_becomes_straight_line_code_at_constant_indices(examples):
    """Life's 3x3 loops: no loop left, the window read at constant (folded) indices, no read by a counter."""
    rule = examples["life"].namespace["rule"]
    unrolled = unrolled_userfun(rule)
    assert _loops(rule.origin.body) and not _loops(unrolled.origin.body)
    assert counter_indexed_reads(rule.origin.body) == {"w": 9} and counter_indexed_reads(unrolled.origin.body) == {}
    c = userfun_c_body(unrolled)
    assert "for" not in c and "w[0]" in c and "w[8]" in c and "n = n - w[4];" in c


@userfun
def dead_branches(w: ArrayType(Float, 5)) -> Float:
    s = 0.0
    for i in range(5):
        if i != 2:
            s += w[i] * float(i - 2)
    return s


def test_conditions_on_counters_fold_and_leave_their_taken_branch():
    c = userfun_c_body(unrolled_userfun(dead_branches))
    assert "if" not in c and "for" not in c and "w[2]" not in c
    assert "s = s + w[0] * -2.0f;" in c and "s = s + w[4] * 2.0f;" in c


def test_a_long_loop_stays_a_loop_and_a_symbolic_one_keeps_its_inner_loops_unrolled(examples):
    """Mandelbrot's 64 steps exceed `MAX_UNROLLED_STATEMENTS`: no rewrite; k-means' loop over `K` centroids stays,
    its loop over a point's 4 coordinates is unrolled."""
    assert unrolled_userfun(examples["mandelbrot"].namespace["escape_count"]) is None
    assert 64 * 5 > MAX_UNROLLED_STATEMENTS
    nearest = unrolled_userfun(examples["kmeans"].namespace["nearest"])
    (loop,) = _loops(nearest.origin.body)
    assert loop.var == "c" and not _loops(loop.body)
    assert unrolled_userfun(UserFun("c_body", ("x",), "return x;", (Float,), Float)) is None


LOOPING = {"life": {"M": 13, "N": 11}, "pdist": {"N": 37, "M": 29}, "kmeans": {"N": 101, "K": 7},
           "spmv_ell": {"N": 23, "M": 19}}


@pytest.mark.parametrize("name", sorted(LOOPING))
def test_the_default_lowering_unrolls_the_examples_user_functions(examples, name):
    pf = examples[name]
    sizes = pf.bind(LOOPING[name])
    derivation = default_lowering(pf.kernels[name], sizes)
    assert "userfun-loop-unroll" in [s.rule for s in derivation.steps]
    assert "_unrolled" in paper(derivation.replay(pf.kernels[name]))
    mandelbrot = examples["mandelbrot"]
    assert "userfun-loop-unroll" not in [s.rule for s in default_lowering(mandelbrot.kernels["mandelbrot"],
                                                                          mandelbrot.bind({"N": 31})).steps]


@needs_device
@pytest.mark.parametrize("name", sorted(LOOPING))
def test_the_unrolled_examples_agree_with_numpy_at_odd_sizes(examples, name):
    pf = examples[name]
    sizes = pf.bind(LOOPING[name])
    inputs = pf.inputs(name, sizes)
    got = lift.compile(pf.kernels[name], sizes=sizes, name=name, lowering="default")(*inputs)
    np.testing.assert_allclose(got, pf.namespace["reference"](*inputs), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, lift.interpret(pf.kernels[name], *inputs), rtol=1e-5, atol=1e-5)
