"""Iterate decomposition (Figure 3(a)): an iteration splits into two consecutive ones, and one iteration is
its function; and an iteration whose step is one kernel is a host loop of that kernel.

    iterate^(m+n)(f) → iterate^m(f) ∘ iterate^n(f)
    iterate^1(f) → f
    iterate^0(f) → map^d(id)             (the identity, written as a copy)
    iterate^n(f) → iterate-host^n(f)     (outside every pattern, f : T -> T one kernel, n ≥ 1)

`f^(m+n) = f^m ∘ f^n` by the definition `f^0 = id`, `f^(k+1) = f^k ∘ f` (Section 3.1); it holds for
an `f` that shrinks its array too, since both sides apply `f` to the same arrays in the same order. Together
they unroll an iteration into its steps (`f ∘ f ∘ .. ∘ f`): outside every map each step is then kernels of its
own, its maps on global work-items, where the code generator's `iterate` is a loop inside one work-item.
`iterate-host` means what `iterate` means (`f` applied `n` times); it says where the loop runs: on the host,
which launches the step's one kernel `n` times over two buffers (`lift.opencl_gen.host_loops`), instead of `n`
copies of the kernel. Its step must be that one kernel, a computation of views of its input (`host_step`), and
keep its array's type, so that the two buffers hold every step's input and result; its input and result are
whole buffers (not views), which the launches read and write as the step's.
"""

from __future__ import annotations

from typing import Optional

from lift.ir.nodes import FunCall, Lambda, Node, Param
from lift.ir.patterns import Iterate, IterateHost, is_view
from lift.rules.rule import requires, rule
from lift.rules.simplification import identity_copy
from lift.rules.sizes import integer


@rule("iterate-decomposition", figure="3(a)", heads=Iterate,
      description="iterate m+n times: iterate n times, then m times",
      equation="iterate^(m+n)(f) → iterate^m(f) ∘ iterate^n(f)",
      choices=lambda call, ctx: [{"m": m} for m in range(1, integer(call.f.n))])
def iterate_decomposition(call, m):
    it = call.f
    requires(isinstance(m, int) and 1 <= m < integer(it.n), f"cannot take {m} of {it.n} iterations")
    return Iterate(m, it.f)(Iterate(it.n - m, it.f)(*call.args))


@rule("iterate-once", figure="3(a)", heads=Iterate,
      match=lambda call: requires(call.f.n.is_constant and integer(call.f.n) == 1, "not one iteration"),
      description="one iteration is its function applied once",
      equation="iterate^1(f) → f")
def iterate_once(call):
    return FunCall(call.f.f, call.args)


@rule("iterate-zero", figure="3(a)", heads=Iterate,
      match=lambda call: requires(call.f.n.is_constant and integer(call.f.n) == 0, "not zero iterations"),
      description="no iteration is the identity, a copy of the input (f^0 = id)",
      equation="iterate^0(f) → map^d(id)")
def iterate_zero(call):
    return identity_copy(call.t)(*call.args)


def host_step(call: FunCall) -> Optional[FunCall]:
    """The one computation of the step of the iteration `call` (`iterate` or `iterate-host`): for a step
    `λx. v(c(w(x)))`, the call `c` its body reaches through views `v`, whose arguments are views `w` of `x`
    alone; for a step `f` that is a computation itself, `f` applied to the iteration's input; None for a step of
    another form (several computations: several kernels) or a view."""
    f = call.f.f
    if not isinstance(f, Lambda):
        return None if is_view(f) else FunCall(f, call.args, call.t)
    if len(f.params) != 1:
        return None
    x, e = f.params[0], f.body
    while isinstance(e, FunCall) and is_view(e.f) and len(e.args) == 1:
        e = e.args[0]
    if not isinstance(e, FunCall) or is_view(e.f) or isinstance(e.f, Lambda):
        return None
    return e if all(_views_of(a, x) for a in e.args) else None


def one_kernel_step(it) -> bool:
    """Whether the step of the iteration `it` is one kernel (`host_step`), whatever it is applied to."""
    return host_step(FunCall(it, (Param("x"),))) is not None


def _views_of(e: Node, x) -> bool:
    return e == x or (isinstance(e, FunCall) and is_view(e.f) and all(_views_of(a, x) for a in e.args))


def _one_kernel_step(call) -> None:
    it = call.f
    requires(it.n.is_constant and integer(it.n) >= 1, "a host loop launches its kernel a constant number of times, "
                                                       "once at least")
    requires(call.t == call.args[0].t, "the step changes its array's type")
    requires(host_step(call) is not None, "the step is not one computation of views of its input")


def _stored_in_and_out(call, ctx) -> None:
    requires(next(ctx.enclosing(), None) is None, "inside a pattern's function")
    (x,) = call.args
    requires(not (isinstance(x, FunCall) and is_view(x.f)), "its input is a view, not a buffer of its own")
    consumer = ctx.parent.node if ctx.parent is not None else None
    requires(not (isinstance(consumer, FunCall) and is_view(consumer.f)), "its result is viewed, not stored whole")


@rule("iterate-host", figure="host", heads=Iterate, match=_one_kernel_step, allowed=_stored_in_and_out,
      description="an iteration whose step is one kernel: the host launches the kernel n times",
      equation="iterate^n(f) → iterate-host^n(f)")
def iterate_host(call):
    return IterateHost(call.f.n, call.f.f)(*call.args)


RULES = (iterate_decomposition, iterate_once, iterate_zero, iterate_host)
