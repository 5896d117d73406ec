"""Cost of building and evaluating size and index expressions with `lift.types.arith`.

Prints microseconds per construction (with simplification) and per `eval` of a few index
expressions that the code generator builds, and the cost of `sympy.simplify` on the same
expression where sympy is installed. Run: `python benchmarks/bench_arith.py`.
"""

import timeit

from lift.types.arith import SizeVar, Var

N, M = SizeVar("N"), SizeVar("M")
g = Var("g", 0, N / 1024)  # work-group id
l = Var("l", 0, 256)  # local id
v = Var("v", 0, 4)  # vector lane
i = Var("i", 0, N)
j = Var("j", 0, M)

CASES = {
    "((g*1024 + l*4 + v)//4) % 256": (lambda: ((g * 1024 + l * 4 + v) // 4) % 256,
                                       {"N": 4096, "g": 3, "l": 17, "v": 2}),
    "(i*M + j)//M": (lambda: (i * M + j) // M, {"N": 64, "M": 48, "i": 5, "j": 47}),
    "(i*M + j) % M": (lambda: (i * M + j) % M, {"N": 64, "M": 48, "i": 5, "j": 47}),
    "(N/1024)*1024 - N/4": (lambda: (N / 1024) * 1024 - N / 4, {"N": 4096}),
    "((4*i + v)//4 + j) % M": (lambda: ((4 * i + v) // 4 + j) % M, {"N": 64, "M": 48, "i": 5, "j": 47, "v": 1}),
}


def per_call_us(fn, number: int) -> float:
    """The best of 5 timings, in microseconds per call."""
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def sympy_simplify_us(name: str):
    """Microseconds per `sympy.simplify` of the same expression, with the ranges as far as sympy
    can state them (integer, non-negative, positive), or None without sympy."""
    try:
        import sympy
    except ImportError:
        return None
    s = {n: sympy.Symbol(n, integer=True, nonnegative=True) for n in "glvij"}
    s.update({n: sympy.Symbol(n, integer=True, positive=True) for n in "NM"})
    expr = sympy.sympify(name.replace("//", " // "), locals=s)
    return per_call_us(lambda: sympy.simplify(expr), 3)


def main() -> None:
    print(f"{'expression':34} {'build us':>9} {'eval us':>8} {'sympy.simplify us':>18}  result")
    for name, (build, env) in CASES.items():
        built = build()
        build_us = per_call_us(build, 2000)
        eval_us = per_call_us(lambda: built.eval(env), 20000)
        sympy_us = sympy_simplify_us(name)
        sympy_text = "not installed" if sympy_us is None else f"{sympy_us:.0f}"
        print(f"{name:34} {build_us:9.1f} {eval_us:8.2f} {sympy_text:>18}  {built}")


if __name__ == "__main__":
    main()
