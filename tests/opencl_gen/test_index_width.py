"""Index width: 32-bit indices where every array and size fits, 64-bit where one may not (issue 17)."""

import json
import re

import numpy as np
import pytest

import lift
from lift import ArrayType, Float, MapGlb, MapSeq, SizeVar, fun
from lift.errors import LiftSizeError
from lift.opencl_gen.index_width import INT_MAX, LONG, array_lengths, index_type
from lift.opencl_gen.kernels import generate
from lift.opencl_gen.manifest import manifest
from lift.rules.default_lowering import lower
from lift.types.arith import Cst
from opencl_device import needs_device

INT_DECL = re.compile(r"\bint [A-Za-z_]+_\d+ =|for \(int ")


def _scal(n):
    return fun([ArrayType(Float, n)], lambda x: MapGlb(lambda v: v * 2.0)(x))


def test_the_paper_programs_keep_32_bit_indices(examples):
    for stem in ("asum", "dot", "scal", "gemv", "blackscholes", "md"):
        pf = examples[stem]
        program = pf.kernels[stem]
        sizes = pf.bind({})
        g = generate(lower(program, sizes), stem, sizes)
        assert g.index == "int" and " long " not in g.source and "(long " not in g.source, stem
        symbolic = generate(lower(program, sizes), stem)
        assert symbolic.index == "int"
        assert all(t == "int32" for k in manifest(symbolic)["kernels"] for t in k["size_args"].values())


def test_a_size_of_2_to_the_33_gives_64_bit_indices(examples):
    program = examples["asum"].kernels["asum"]
    sizes = {"N": 1 << 33}
    g = generate(lower(program, sizes), "asum", sizes)
    assert g.index == LONG
    assert not INT_DECL.search(g.source), g.source
    assert re.search(r"\blong [a-z]+_\d+ = get_(global|group|local)_id", g.source)
    assert manifest(g)["index_type"] == "long"


def test_a_bounded_size_variable_gives_64_bit_size_arguments_and_runs():
    N = SizeVar("N", hi=1 << 34)
    program = _scal(N)
    g = generate(program, "scal")
    assert g.index == LONG and "const long N" in g.source and not INT_DECL.search(g.source)
    assert manifest(g)["kernels"][0]["size_args"] == {"N": "int64"}
    small = generate(_scal(SizeVar("N", hi=1 << 20)), "scal")
    assert small.index == "int" and "const int N" in small.source


@needs_device
def test_a_64_bit_kernel_computes_the_right_answer():
    x = np.random.default_rng(1).uniform(-1, 1, 1001).astype(np.float32)
    compiled = lift.compile(_scal(SizeVar("N", hi=1 << 34)))
    assert compiled.generated().index == LONG
    np.testing.assert_allclose(compiled(x), 2 * x, rtol=1e-6)


def test_the_width_follows_every_array_of_the_program():
    N = SizeVar("N")
    nested = fun([ArrayType(ArrayType(Float, 4), N)], lambda x: MapGlb(MapSeq(lambda v: v * 2.0))(x))
    lengths = list(array_lengths(nested))
    assert index_type(lengths, {"N": INT_MAX // 4}, "p") == "int"
    assert index_type(lengths, {"N": INT_MAX // 4 + 1}, "p") == LONG  # 4 N elements exceed 2^31 - 1
    assert index_type([Cst(5)], {}, "p") == "int"


def test_a_size_beyond_64_bits_is_one_clear_error():
    N = SizeVar("N")
    nested = fun([ArrayType(ArrayType(Float, 4), N)], lambda x: MapGlb(MapSeq(lambda v: v * 2.0))(x))
    with pytest.raises(LiftSizeError, match="cannot be indexed by a 64-bit integer"):
        generate(nested, "big", {"N": 1 << 62})
