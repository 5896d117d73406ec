"""The copy of a `map-seq-unswitch` iteration that checks each read (the vectors at a grid's edges), its windows'
folds unrolled or rolled (`map-seq-unswitch(f, rolled)`, `lift.rules.default_lowering.MAX_UNROLLED_CHECKS`): both
forms of conv5x5, box27, the 3-D 27-point Jacobi and heat3d against numpy at odd sizes (shorter than a vector,
around it, prime), the rolled kernel a fraction of the unrolled one's C, its fast copy unchanged."""

import re

import numpy as np
import pytest

from lift import ArrayType, Float, SizeVar, fun, paper
from lift.opencl_gen.compiled import compile
from lift.rules.default_lowering import LoweringError, default_lowering
from lift.rules.stencil_lowering import MAX_UNROLLED_CHECKS, MIN_ROLLED_ROW
from lift.rules.engine import RewriteEngine

from opencl_device import needs_device

O, M, N = SizeVar("O"), SizeVar("M"), SizeVar("N")

FORMS = ("unrolled", "rolled")
"""`checked_copies` of `lift.rules.default_lowering.default_lowering`."""

CASES = [("conv5x5", "conv5x5", {"M": 7, "N": 37}), ("conv5x5", "conv5x5", {"M": 3, "N": 5}),
         ("box27", "box27", {"O": 3, "M": 5, "N": 19}), ("stencils", "jacobi3d_high", {"O": 4, "M": 3, "N": 17}),
         ("heat3d", "step", {"O": 5, "M": 3, "N": 23})]
"""(example file, kernel, sizes); heat3d's one step (`step`), the ten of its kernel being ten kernels."""


def _kernel(pf, kernel: str):
    if kernel == "step":
        return "heat3d_step", fun([ArrayType(ArrayType(ArrayType(Float, N), M), O)], pf.namespace["step"])
    return pf.kernel(kernel)


def _lowered(pf, kernel: str, sizes: dict, checked_copies=None):
    name, expr = _kernel(pf, kernel)
    derivation = default_lowering(expr, sizes, checked_copies=checked_copies)
    return name, derivation.replay(expr, RewriteEngine(sizes=dict(sizes)))


def _shifted_sum(a: np.ndarray, k: np.ndarray) -> np.ndarray:
    """numpy's 3x3x3 stencil of weights `k` over `a` clamped at its faces."""
    p = np.pad(a.astype(np.float64), 1, mode="edge")
    return sum(k[o] * p[tuple(slice(j, j + n) for j, n in zip(o, a.shape))] for o in np.ndindex(3, 3, 3))


def _inputs_and_numpy(pf, kernel: str, sizes: dict):
    rng = np.random.default_rng(5)
    if kernel == "step":
        a = rng.uniform(-1, 1, (sizes["O"], sizes["M"], sizes["N"])).astype(np.float32)
        k = np.zeros((3, 3, 3))
        k[1, 1, 1] = 1 - 6 * 0.125
        for o in ((0, 1, 1), (2, 1, 1), (1, 0, 1), (1, 2, 1), (1, 1, 0), (1, 1, 2)):
            k[o] = 0.125
        return [a], _shifted_sum(a, k)
    inputs = pf.inputs(kernel, sizes, seed=5)
    if kernel == "jacobi3d_high":
        return inputs, _shifted_sum(inputs[0], inputs[1].reshape(3, 3, 3).astype(np.float64))
    return inputs, pf.namespace["reference"](*inputs)


@pytest.mark.parametrize("stem, kernel, sizes", CASES + [
    ("conv5x5", "conv5x5", {"M": 3, "N": MIN_ROLLED_ROW}), ("box27", "box27", {"O": 3, "M": 2, "N": MIN_ROLLED_ROW})])
def test_the_lowering_rolls_the_checked_copies_of_large_windows_on_long_rows_alone(examples, stem, kernel, sizes):
    """Each form is what `checked_copies` asks for; the default rolls those of a 2-D window of more than
    `MAX_UNROLLED_CHECKS` elements (conv5x5's 25) on rows of `MIN_ROLLED_ROW` windows or more, not a 3-D one's."""
    pf = examples[stem]
    forms = {form: paper(_lowered(pf, kernel, sizes, form)[1]) for form in FORMS}
    assert "map-seq-unswitch(" in forms["unrolled"] and ", rolled)" not in forms["unrolled"], forms["unrolled"]
    assert ", rolled)" in forms["rolled"], forms["rolled"]
    rolled = stem == "conv5x5" and 25 > MAX_UNROLLED_CHECKS and sizes["N"] >= MIN_ROLLED_ROW
    assert paper(_lowered(pf, kernel, sizes)[1]) == forms["rolled" if rolled else "unrolled"]
    with pytest.raises(LoweringError, match="checked_copies is 'unrolled', 'rolled' or None, got 'rolling'"):
        _lowered(pf, kernel, sizes, "rolling")


def test_a_window_folded_in_a_loop_has_nothing_to_roll(examples):
    """conv1d's 31 taps are folded in a loop (`MAX_UNROLLED_WINDOW`) in both copies whatever `checked_copies` says."""
    pf, sizes = examples["conv1d"], {"N": 4099}
    forms = {paper(_lowered(pf, "conv1d", sizes, form)[1]) for form in (None,) + FORMS}
    assert len(forms) == 1 and "map-seq-unswitch(λ w. reduce-seq(" in forms.pop()


@needs_device
@pytest.mark.parametrize("stem, kernel, sizes", CASES)
def test_both_forms_compute_numpy_s(examples, stem, kernel, sizes):
    """Both forms against numpy; the rolled kernel under a third of the unrolled one's bytes, with the same fast
    copy (the vectors clear of the edges: straight-line code, no loop)."""
    pf = examples[stem]
    sources = {}
    for form in FORMS:
        name, program = _lowered(pf, kernel, sizes, form)
        compiled = compile(program, name=name)
        inputs, want = _inputs_and_numpy(pf, kernel, sizes)
        sources[form] = compiled.generated_for(*inputs).source
        got = np.asarray(compiled(*inputs), np.float64)
        np.testing.assert_allclose(got, np.reshape(want, got.shape), rtol=1e-4, atol=1e-5, err_msg=form)
    assert 3 * len(sources["rolled"]) < len(sources["unrolled"]), {f: len(s) for f, s in sources.items()}
    (unrolled, unrolled_checks), (rolled, rolled_checks) = (_at_first_checked_copy(sources[form]) for form in FORMS)
    assert unrolled == rolled and "for (" not in unrolled[unrolled.index("reads in bounds"):]
    assert "for (" not in unrolled_checks[:unrolled_checks.index("vstore")], unrolled_checks[:2000]
    assert "for (" in rolled_checks[:rolled_checks.index("vstore")], rolled_checks[:2000]


def _at_first_checked_copy(source: str) -> tuple:
    """`source` (without its first line, the program) up to the first unswitched iteration's checked copy, its
    names' numbers dropped, and the rest, from that copy on."""
    test = re.search(r"\{ if \((.*)\) \{ /\* the clamped vector reads in bounds", source).group(1)
    start = source.index(f"{{ if (!({test})) {{")
    return re.sub(r"_\d+\b", "_", source[source.index("\n"):start]), source[start:]
