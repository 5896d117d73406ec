"""`inline-routine` (β-reduction of a routine call) on the kernel-fusion paper's sequences, and the default
lowering of programs written as routine calls: each rewrite against the interpreter, each compiled program
against numpy at sizes no chunk divides."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lift
from lift import infer, interpret
from lift.rules import RewriteEngine
from lift.rules.default_lowering import default_lowering
from routine_sequences import SEQUENCES, assert_matches, has_routine

ENGINE = RewriteEngine()


def _inlines(program):
    return [rw for rw in ENGINE.rewrites(program) if rw.rule == "inline-routine"]


@pytest.mark.hypothesis
@settings(max_examples=30, deadline=None)
@given(st.sampled_from(SEQUENCES), st.integers(1, 9), st.integers(1, 9), st.integers(1, 9),
       st.lists(st.integers(0, 1 << 16), min_size=1, max_size=6))
def test_inlining_calls_one_at_a_time_preserves_meaning(seq, name, k, m, n, walk):
    program = seq.kernels[name]
    inputs = seq.inputs(name, {"K": k, "M": m, "N": n}, seed=k + m + n)
    expected, t = interpret(program, *inputs), infer(program).type
    for choice in walk:
        rewrites = _inlines(program)
        if not rewrites:
            break
        program = ENGINE.apply(program, rewrites[choice % len(rewrites)])
        assert infer(program).type == t
        assert_matches(interpret(program, *inputs), expected)


@pytest.mark.parametrize("name", SEQUENCES)
def test_the_default_lowering_inlines_every_call_first(seq, name):
    program = seq.kernels[name]
    steps = default_lowering(program, {"K": 67, "M": 37, "N": 53}).steps
    inlined = [s for s in steps if s.rule == "inline-routine"]
    assert inlined and list(steps[:len(inlined)]) == inlined
    assert not has_routine(default_lowering(program, {"K": 67, "M": 37, "N": 53}).replay(program))


@pytest.mark.parametrize("name", SEQUENCES)
def test_lift_compile_of_routine_calls_matches_numpy_at_odd_sizes(seq, device, name):
    sizes = {"K": 4099, "M": 37, "N": 53}
    inputs = seq.inputs(name, sizes, seed=5)
    assert_matches(lift.compile(seq.kernels[name], device)(*inputs), seq.namespace["NUMPY"][name](*inputs),
                   compiled=True)
