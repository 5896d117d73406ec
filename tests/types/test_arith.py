"""Tests of `lift.types.arith`: the normal form, the range-aware simplifications, the errors, and,
by property, that `eval` and the emitted C agree with the arithmetic they were built from."""

import ast
import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from lift.types.arith import (ArithExpr, Cst, FloorDiv, Mod, NotDivisible, UnboundSize, Var, SizeVar, as_arith,
                              prove_le, prove_lt, prove_nonneg)
from lift.opencl_gen.c_arith import c_arith

N = SizeVar("N")
M = SizeVar("M")
i = Var("i", 0, N)  # a row index: i < N
j = Var("j", 0, M)  # a column index: j < M
k = Var("k", 0, 4)  # a vector lane
o = Var("o", -3, 5)  # an offset that may be negative
x = Var("x", N, 2 * N + 1)  # a range between two sizes
VARS = {v.name: v for v in (N, M, i, j, k, o, x)}


# --- the normal form ------------------------------------------------------------------------


def test_equal_expressions_are_the_same_object():
    assert N * 2 == 2 * N
    assert (N + 1) - 1 is N
    assert (N / 1024) * 1024 is N
    assert N / 2 / 2 == N / 4
    assert (2 * N) / 2 is N
    assert N * M / M is N
    assert N - N == 0
    assert (N + M) * (N - M) == N * N - M * M
    assert hash(3 * N + M) == hash(M + N * 3)
    assert N + 1 != N + 2


def test_constants_compare_and_hash_like_ints():
    assert Cst(4) == 4 and 4 == Cst(4)
    assert hash(Cst(4)) == hash(4)
    assert {Cst(4): "a"}[4] == "a"
    assert N != 4


def test_vars_are_equal_only_with_the_same_name_and_range():
    assert Var("i", 0, N) is i
    assert Var("i", 0, M) != i
    assert Var("i", 1, N) != i
    assert Var("i") != Var("v")
    assert SizeVar("N") is N
    assert (i.name, i.lo, i.hi) == ("i", 0, N)
    assert N.lo == 1 and N.hi is None


def test_var_rejects_bad_names_and_empty_ranges():
    with pytest.raises(ValueError, match="identifier"):
        Var("2N")
    with pytest.raises(ValueError, match="empty range"):
        Var("e", 4, 4)


def test_as_arith_accepts_ints_only():
    assert as_arith(3) == 3 and as_arith(np.int64(3)) == 3
    assert as_arith(N) is N
    with pytest.raises(TypeError, match="SizeVar"):
        as_arith("N")
    with pytest.raises(TypeError, match="1.5"):
        as_arith(1.5)
    with pytest.raises(TypeError):
        Cst(True)
    with pytest.raises(TypeError):
        N + 1.5


def test_bool_is_refused_for_symbolic_expressions():
    with pytest.raises(TypeError, match="ambiguous"):
        bool(N + 1)
    with pytest.raises(TypeError):
        if N:
            pass
    assert not Cst(0) and Cst(3)


def test_constant_value():
    assert (N - N + 7).is_constant and (N - N + 7).value == 7 and int(Cst(7)) == 7
    assert not N.is_constant
    with pytest.raises(TypeError, match="not a constant"):
        N.value
    with pytest.raises(TypeError):
        int(N)


def test_dead_expressions_leave_the_hash_cons_table():
    import gc

    from lift.types import arith

    def live_ts():
        return sum(1 for entry in list(arith._table.values()) if isinstance(entry(), Var) and entry().name == "t")

    exprs = [(4 * i + Var("t", 0, n)) // 4 + n for n in range(5, 200)]
    assert live_ts() == 195
    del exprs
    for _ in range(3):  # an atom's table key holds its operands until the atom is collected
        gc.collect()
    assert live_ts() == 0
    assert (4 * i + Var("t", 0, 3)) // 4 is i


def test_copies_and_pickles_are_the_same_object():
    for e in (N, i, N / 1024, (4 * i + k) // 3, j % 3 + M, N / (M + 1)):
        assert copy.deepcopy(e) is e
        assert pickle.loads(pickle.dumps(e)) is e


# --- exact division ---------------------------------------------------------------------------


def test_exact_division_of_constants_must_be_integral():
    assert Cst(6) / 3 == 2
    with pytest.raises(NotDivisible, match="3/2 is not an integer"):
        Cst(3) / 2
    with pytest.raises(ValueError, match="division by zero"):
        N / 0


def test_division_by_a_sum():
    assert (N / (M + 1)) * (M + 1) is N
    assert (2 * M + 2) / (M + 1) == 2
    assert N / (2 * M + 2) == (N / (M + 1)) / 2
    assert (N * M + N) / (M + 1) is N
    assert (M * M - 1) / (M + 1) == M - 1
    assert (N * N + 1) / (N + 1) != N - 1
    assert (N / (M + 1)).eval({"N": 12, "M": 2}) == 4


def test_is_divisible_by():
    assert (N * 1024).is_divisible_by(256)
    assert not N.is_divisible_by(2)
    assert not (N / 4).is_divisible_by(2)
    assert (N / 4 * 8).is_divisible_by(2)
    assert (4 * (i // 3) + 8 * N).is_divisible_by(4)
    assert (N * M).is_divisible_by(M)
    assert not Cst(6).is_divisible_by(4)
    assert Cst(0).is_divisible_by(5)
    with pytest.raises(ValueError):
        N.is_divisible_by(0)


# --- floor division and modulo ----------------------------------------------------------------


def test_floordiv_and_mod_drop_a_rest_within_the_divisor():
    lane = Var("j", 0, 4)
    assert (4 * i + lane) // 4 is i
    assert (4 * i + lane) % 4 is lane
    assert (i * M + j) // M is i
    assert (i * M + j) % M is j
    assert k % 4 is k
    assert k // 4 == 0
    assert j % M is j


def test_floordiv_pulls_out_multiples_of_the_divisor():
    assert (4 * i + N) // 4 == i + N // 4
    assert (4 * i + N) % 4 == N % 4
    assert (4 * N + k + 5) // 4 == N + 1 + (k + 1) // 4
    assert (8 * N + 4) // 4 == 2 * N + 1
    assert (N * 1024) % 256 == 0
    assert (3 * N) % 3 == 0
    assert (M * N) % M == 0


def test_nested_floordiv_merges_divisors():
    assert (N // 4) // 2 == N // 8
    assert (j // 4) // 2 == j // 8
    assert (N // M) // 2 == N // (2 * M)


def test_floordiv_constants_fold():
    assert Cst(7) // 2 == 3 and Cst(7) % 3 == 1 and 7 // Cst(2) == 3 and 7 % Cst(4) == 3
    assert N // 1 is N and N % 1 == 0


def test_floordiv_keeps_what_ranges_do_not_prove():
    assert isinstance((4 * i + o) // 4, FloorDiv)  # o may be negative
    assert isinstance((4 * i + o) % 4, Mod)
    assert isinstance(N // M, FloorDiv)
    assert isinstance(i // o, FloorDiv)  # o may be zero or negative
    assert (4 * i + o) // 4 == (o + 4 * i) // 4
    assert ((4 * i + o) // 4).eval({"N": 3, "i": 2, "o": -1}) == 1


def test_division_by_zero_is_a_value_error():
    for op in (lambda a: a // 0, lambda a: a % 0, lambda a: a / 0, lambda a: a // (N - N)):
        with pytest.raises(ValueError, match="division by zero"):
            op(N)


def test_index_expression_of_a_vectorised_kernel():
    g = Var("g", 0, N / 1024)
    lane = Var("l", 0, 256)
    v = Var("v", 0, 4)
    flat = g * 1024 + lane * 4 + v
    assert flat // 4 == 256 * g + lane
    assert (flat // 4) % 256 is lane
    assert flat % 4 is v
    assert prove_lt(flat, N)


# --- ranges -----------------------------------------------------------------------------------


def test_min_and_max_values():
    assert N.min_value() == 1 and N.max_value() is None
    assert j.min_value() == 0 and j.max_value() == M - 1
    assert (i * M + j).max_value() == N * M - 1
    assert (M - 1 - j).min_value() == 0
    assert (N / 1024).min_value() == 1
    assert (3 - o).max_value() == 6 and (3 - o).min_value() == -1
    assert (k % 3).max_value() == 2
    assert (j // 4).max_value() == (M - 1) // 4
    assert x.min_value() == N and x.max_value() == 2 * N
    assert Cst(5).min_value() == 5


def test_proofs_from_ranges():
    assert prove_lt(j, M) and not prove_lt(j, M - 1) and prove_le(j, M - 1)
    assert prove_lt(i * M + j, N * M)
    assert not prove_lt(i * M + j, N * M - 1)
    assert prove_nonneg(M - 1 - j)
    assert prove_lt(k, 4) and not prove_lt(k, 3)
    assert not prove_lt(N, N) and prove_le(N, N)
    assert not prove_nonneg(o) and prove_nonneg(o + 3)
    assert prove_lt(x, 2 * N + 1) and prove_le(N, x)
    assert prove_lt(j % 7, 7) and prove_lt(j // 2, M)
    assert prove_nonneg(N / 4 - 1)  # N/4 is an integer of at least 1/4
    assert not prove_nonneg(N - 2)


# --- evaluation, substitution, errors ---------------------------------------------------------


def test_eval():
    assert (4 * i + j).eval({"i": 3, "j": 2}) == 14
    assert (N / 1024).eval({"N": 4096}) == 4
    assert ((N + M) / 2).eval({"N": 1, "M": 3}) == 2
    assert (N // M).eval({"N": 7, "M": 2}) == 3 and (N % M).eval({"N": 7, "M": 2}) == 1
    assert (N / M).eval({"N": np.int32(12), "M": 3}) == 4


def test_eval_errors_name_the_culprit():
    with pytest.raises(NotDivisible, match=r"^N/1024 is not an integer for N=1000$"):
        (N / 1024).eval({"N": 1000})
    with pytest.raises(ValueError):
        (N / 1024).eval({"N": 1000})
    with pytest.raises(UnboundSize, match="variable N is unbound") as unbound:
        (N + M).eval({"M": 3})
    assert isinstance(unbound.value, KeyError)
    assert str(unbound.value) == "variable N is unbound (the binding has M)"
    with pytest.raises(ValueError, match="divides by zero"):
        (N // M).eval({"N": 7, "M": 0})


def test_free_vars():
    assert (4 * i + j // 2).free_vars() == {i, j}
    assert Cst(3).free_vars() == frozenset()


def test_substitute():
    assert (i * M + j).substitute({"M": 4, i: 2}) == 8 + j
    assert (N / 1024).substitute({N: 4096}) == 4
    assert (N / 1024).substitute({N: 1024 * M}) is M
    assert ((4 * i + k) // 4).substitute({"k": 3}) == (4 * i + 3) // 4 == i
    assert (N // M).substitute({"N": 7, "M": 2}) == 3
    assert (N / M).substitute({M: 3}) == N / 3
    assert (N + M).substitute({}) == N + M
    with pytest.raises(NotDivisible, match="N/4 is not an integer for N=6"):
        (N / 4).substitute({"N": 6})
    with pytest.raises(TypeError):
        N.substitute({1: 2})


# --- printing ---------------------------------------------------------------------------------


def test_str_is_readable():
    assert str(N / 1024) == "N/1024"
    assert str(4 * i + j) == "4*i + j"
    assert str((N / 4) // 2) == "(N/4)//2"
    assert str(3 * N / 4) == "3*N/4"
    assert str(N + 1) == "N + 1" and str(1 - N) == "-N + 1"
    assert str(N / (4 * M)) == "N/(4*M)"
    assert str(2 * (j % 3)) == "2*(j%3)"
    assert str(N * N / (M * M)) == "N*N/(M*M)"
    assert repr(N - M) == "-M + N"


def test_to_c():
    assert c_arith(N / M) == "(N/M)"
    assert c_arith(3 * N / 4) == "((3*N)/4)"
    assert c_arith(N / 1024) == "(N/1024)"
    assert c_arith(4 * i + j) == "4*i + j"
    assert c_arith((N + 1) // 4) == "((N + 1)/4)"
    assert c_arith(j % 3) == "(j%3)"
    assert c_arith((N + M) / 2) == "((M + N)/2)"
    assert c_arith(N * N - 1) == "N*N - 1"


def test_c_sums_print_the_innermost_loop_counter_last():
    """The generator numbers its loop variables as it opens their loops: a sum prints the terms of enclosing ones
    first (sizes before them), so that what an inner loop does not change is a prefix the C compiler hoists."""
    wg, l, k, u = (Var(name, 0, 8) for name in ("wg_0", "l_2", "i_6", "i_10"))
    assert c_arith(k + 1024 * l + 8192 * wg) == "8192*wg_0 + 1024*l_2 + i_6"
    assert c_arith(u + 64 * k + N * l + 3) == "N*l_2 + 64*i_6 + i_10 + 3"
    assert c_arith((u + 3 * wg) // 4 + 2 * l) == "2*l_2 + ((3*wg_0 + i_10)/4)"


# --- properties -------------------------------------------------------------------------------
#
# Random trees over the variables above are built twice: with the ArithExpr operators, and as
# Python ints under a binding within the ranges. Exact divisions are generated only where they
# are integral: `(a*d)/d`, or `(a/d)*d`, which the normal form cancels.

LEAVES = st.one_of(st.sampled_from(sorted(VARS)).map(lambda n: ("var", n)),
                   st.integers(-3, 20).map(lambda c: ("const", c)))
DIVISORS = st.sampled_from([("const", 1), ("const", 2), ("const", 3), ("const", 4), ("const", 8), ("var", "N"),
                            ("var", "M"), ("add", ("var", "k"), ("const", 1)), ("mul", ("var", "N"), ("const", 2)),
                            ("add", ("var", "M"), ("const", 1))])
SYMBOLIC_DIVISORS = DIVISORS.filter(lambda d: d[0] != "const")
TREES = st.recursive(LEAVES, lambda sub: st.one_of(
    st.tuples(st.sampled_from(["add", "sub", "mul"]), sub, sub),
    st.tuples(st.sampled_from(["floordiv", "mod", "exact"]), sub, DIVISORS),
    st.tuples(st.just("cancel"), sub, SYMBOLIC_DIVISORS),
), max_leaves=10)


@st.composite
def bindings(draw):
    env = {"N": draw(st.integers(1, 40)), "M": draw(st.integers(1, 40)), "k": draw(st.integers(0, 3)),
           "o": draw(st.integers(-3, 4))}
    env["i"] = draw(st.integers(0, env["N"] - 1))
    env["j"] = draw(st.integers(0, env["M"] - 1))
    env["x"] = draw(st.integers(env["N"], 2 * env["N"]))
    return env


def build(tree) -> ArithExpr:
    kind, a, b = tree if len(tree) == 3 else (*tree, None)
    if kind == "var":
        return VARS[a]
    if kind == "const":
        return Cst(a)
    left, right = build(a), build(b)
    if kind == "cancel":
        try:
            return (left / right) * right
        except NotDivisible:
            reject()  # such as N/(2*N): a constant that is not an integer, which `/` refuses
    return {"add": lambda: left + right, "sub": lambda: left - right, "mul": lambda: left * right,
            "floordiv": lambda: left // right, "mod": lambda: left % right,
            "exact": lambda: (left * right) / right}[kind]()


def direct(tree, env, numerators):
    """The value of `tree` under `env` with Python ints; appends the value of every `//` and
    `%` numerator to `numerators`."""
    kind, a, b = tree if len(tree) == 3 else (*tree, None)
    if kind == "var":
        return env[a]
    if kind == "const":
        return a
    left, right = direct(a, env, numerators), direct(b, env, numerators)
    if kind in ("floordiv", "mod"):
        numerators.append(left)
    return {"add": left + right, "sub": left - right, "mul": left * right, "exact": left, "cancel": left,
            "floordiv": left // right if kind == "floordiv" else None,
            "mod": left % right if kind == "mod" else None}[kind]


def c_eval(code: str, env) -> int:
    """Evaluate a C integer expression with C semantics: `/` truncates, `%` takes the sign of
    the dividend. Anything but names, int literals, `+ - * / %` and unary minus is rejected."""

    def c_div(a, b):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b > 0) else -q

    def ev(node):
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        if isinstance(node, ast.BinOp):
            a, b = ev(node.left), ev(node.right)
            op = type(node.op)
            if op is ast.Add:
                return a + b
            if op is ast.Sub:
                return a - b
            if op is ast.Mult:
                return a * b
            if op is ast.Div:
                return c_div(a, b)
            if op is ast.Mod:
                return a - b * c_div(a, b)
        raise AssertionError(f"not a C integer expression: {code!r} at {ast.dump(node)}")

    return ev(ast.parse(code, mode="eval").body)


def test_c_eval_has_c_semantics():
    assert c_eval("(-7)/2", {}) == -3 and c_eval("(-7)%2", {}) == -1 and c_eval("7/-2", {}) == -3
    with pytest.raises(AssertionError):
        c_eval("7//2", {})


@settings(max_examples=400, deadline=None)
@given(TREES, bindings())
def test_eval_and_c_agree_with_the_arithmetic(tree, env):
    expr = build(tree)
    numerators = []
    value = direct(tree, env, numerators)
    assert expr.eval(env) == value
    if all(n >= 0 for n in numerators):  # C's / and % are floor division only there
        assert c_eval(c_arith(expr), env) == value, c_arith(expr)


@settings(max_examples=200, deadline=None)
@given(TREES, bindings())
def test_bounds_hold(tree, env):
    expr = build(tree)
    value = expr.eval(env)
    lo, hi = expr.min_value(), expr.max_value()
    assert lo is None or lo.eval(env) <= value
    assert hi is None or value <= hi.eval(env)
    assert not prove_nonneg(expr) or value >= 0
    for bound in (N, M, k, o + 3, 2 * N):
        assert not prove_lt(expr, bound) or value < bound.eval(env)


@settings(max_examples=200, deadline=None)
@given(TREES, TREES, bindings())
def test_substitution_agrees_with_eval(tree, other, env):
    expr, replacement = build(tree), build(other) % 4  # within the range of k
    partial = expr.substitute({"N": env["N"], k: replacement})
    assert partial.eval(env) == expr.eval({**env, "k": replacement.eval(env)})


POLY_TREES = st.recursive(LEAVES, lambda sub: st.one_of(
    st.tuples(st.sampled_from(["add", "sub", "mul"]), sub, sub),
    st.tuples(st.just("exact"), sub, DIVISORS.filter(lambda d: d != ("add", ("var", "M"), ("const", 1)))),
), max_leaves=8)


@settings(max_examples=100, deadline=None)
@given(POLY_TREES, POLY_TREES, POLY_TREES)
def test_algebraic_identities_hold_structurally(a, b, c):
    a, b, c = build(a), build(b), build(c)
    assert (a + b) + c == a + (b + c)
    assert a * (b + c) == a * b + a * c
    assert (a - b) + b == a
    assert a * b == b * a
    assert (a * 12) / 4 == 3 * a
    assert (a * N) / N == a


@settings(max_examples=60, deadline=None)
@given(POLY_TREES)
def test_polynomials_match_sympy(tree):
    sympy = pytest.importorskip("sympy")
    symbols = {name: sympy.Symbol(name, integer=True) for name in VARS}

    def to_sympy(t):
        kind, a, b = t if len(t) == 3 else (*t, None)
        if kind == "var":
            return symbols[a]
        if kind == "const":
            return sympy.Integer(a)
        left, right = to_sympy(a), to_sympy(b)
        return {"add": left + right, "sub": left - right, "mul": left * right, "exact": left}[kind]

    ours = sympy.sympify(str(build(tree)), locals=symbols)
    assert sympy.cancel(ours - to_sympy(tree)) == 0


@settings(max_examples=200, deadline=None)
@given(TREES)
def test_str_is_python_that_rebuilds_the_expression(tree):
    expr = build(tree)
    assert as_arith(eval(str(expr), {"__builtins__": {}}, VARS)) is expr


@settings(max_examples=60, deadline=None)
@given(TREES, bindings())
def test_str_parses_back_to_the_same_value(tree, env):
    sympy = pytest.importorskip("sympy")
    expr = build(tree)
    symbols = {name: sympy.Symbol(name, integer=True) for name in VARS}
    parsed = sympy.sympify(str(expr), locals=symbols)
    assert parsed.subs({symbols[name]: value for name, value in env.items()}) == expr.eval(env), str(expr)
