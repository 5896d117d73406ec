"""The programs of issue 18's new user (`examples/layernorm.py`, `conv5x5.py`, `cosine.py`, `horner.py`,
`argmax.py`, `gemv_relu.py`, `complex_mul.py`, `box3d.py`; `attention.py`, `logreg_grad.py`, `sobel.py`, `life.py`,
`spmv_ell.py`, `gauss_sep.py`, `maxpool.py`, `lse_outer.py`, `batched_matmul.py`; a second user's `minplus.py`,
`moving_average.py`, `permute3d.py`, `grayscale.py`, `bilinear.py`, `frobenius.py`, `box27.py`, `montecarlo.py`,
`batched_gemv.py`; a third's `syrk.py`, `doitgen.py`, `quaternion.py`, `rgb2hsv.py`, `median9.py`,
`softmax_cols.py`, `vandermonde.py`, `fdtd2d.py`; a fourth's `dft.py`, `correlation.py`, `threemm.py`, `conv1d.py`,
`nearest_centroid.py`, `bilateral.py`, `dense_gelu.py`, `cross_entropy.py`: written from the README, nothing tuned)
compiled by `lift.compile` with the default lowering at small odd sizes, against their numpy references and the
interpreter."""

import numpy as np
import pytest

import lift

from opencl_device import needs_device, vector_lowering


def _flat(a):
    """A struct array (tuples) as a float64 array with a last axis of its fields."""
    a = np.asarray(a)
    return (np.stack([a[f] for f in a.dtype.names], axis=-1) if a.dtype.fields else a).astype(np.float64)


@needs_device
@pytest.mark.parametrize("name, sizes", [
    ("layernorm", {"R": 7, "C": 19}), ("conv5x5", {"M": 11, "N": 13}), ("cosine", {"M": 5, "N": 7, "K": 17}),
    ("horner", {"N": 101, "D": 5}), ("argmax", {"N": 1009}), ("gemv_relu", {"M": 13, "N": 31}),
    ("complex_mul", {"N": 67}), ("box3d", {"O": 5, "M": 7, "N": 3}),
    ("attention", {"S": 13, "D": 7}), ("logreg_grad", {"N": 101, "D": 7}), ("sobel", {"M": 11, "N": 13}),
    ("life", {"M": 11, "N": 13}), ("spmv_ell", {"N": 101, "M": 37}), ("gauss_sep", {"M": 11, "N": 13}),
    ("maxpool", {"M": 5, "N": 7}), ("lse_outer", {"M": 17, "N": 13}), ("batched_matmul", {"B": 13}),
    ("minplus", {"N": 13, "K": 11, "M": 7}), ("moving_average", {"N": 1001}), ("permute3d", {"I": 5, "J": 7, "K": 3}),
    ("grayscale", {"H": 11, "W": 13}), ("bilinear", {"M": 13, "N": 17}), ("frobenius", {"M": 13, "N": 17}),
    ("box27", {"O": 5, "M": 7, "N": 3}), ("montecarlo", {"N": 1001}), ("batched_gemv", {"B": 13}),
    ("syrk", {"N": 13, "M": 11}), ("doitgen", {"R": 5, "Q": 7, "P": 11}), ("quaternion", {"N": 1001}), ("rgb2hsv", {"H": 11, "W": 13}),
    ("median9", {"M": 11, "N": 13}), ("softmax_cols", {"R": 17, "C": 13}), ("vandermonde", {"N": 101, "D": 7}),
    ("fdtd2d", {"X": 11, "Y": 13}),
    ("dft", {"N": 101}), ("correlation", {"M": 13, "N": 37}), ("threemm", {"NI": 7, "NJ": 9, "NK": 11, "NL": 13, "NM": 5}),
    ("conv1d", {"N": 1001}), ("nearest_centroid", {"N": 101, "K": 7, "D": 5}), ("bilateral", {"M": 11, "N": 13}),
    ("dense_gelu", {"B": 13, "I": 17, "O": 11}), ("cross_entropy", {"R": 17, "C": 13}),
])
def test_new_user_programs_compute_numpy_s(examples, name, sizes):
    pf = examples[name]
    inputs = pf.inputs(name, sizes, seed=3)
    got = _flat(lift.compile(pf.kernels[name], lowering="default")(*inputs))
    want = np.asarray(pf.namespace["reference"](*inputs), np.float64)
    np.testing.assert_allclose(got, want.reshape(got.shape), rtol=1e-4, atol=1e-5)
    interpreted = _flat(lift.interpret(pf.kernels[name], *inputs, numpy_shapes=True))
    np.testing.assert_allclose(got, interpreted.reshape(got.shape), rtol=1e-4, atol=1e-5)


@needs_device
def test_a_batch_of_small_products_is_register_blocked(examples):
    """10,007 8x8 products (`examples/batched_matmul.py`, here 13): `BLOCK`'s 4 × 16 does not divide 8, so the default
    lowering blocks each product's rows in `SMALL_BLOCK`s, 8 results of float4 updates in private accumulators
    (0.54x numpy before, 2.9x after, at B = 10,007 on PoCL), and computes numpy's products."""
    pf, sizes = examples["batched_matmul"], {"B": 13}
    compiled = lift.compile(pf.kernels["batched_matmul"], sizes=sizes, lowering="default")
    lowered = lift.paper(compiled.lowered())
    assert "toPrivate(reduce-seq" in lowered and "vectorize-4(add_mult)" in lowered, lowered
    inputs = pf.inputs("batched_matmul", sizes, seed=4)
    np.testing.assert_allclose(compiled(*inputs), pf.namespace["reference"](*inputs), rtol=1e-5, atol=1e-6)


@needs_device
def test_a_result_that_only_rearranges_its_inputs_is_copied(examples):
    """`transpose ∘ map(transpose)` (`examples/permute3d.py`) computes nothing a kernel would write: `lift.compile`
    with no lowering given copies it (`copy-view`, the default lowering's first step), as numpy's `transpose(2, 0, 1)`;
    it used to fail in code generation, the program counted as lowered."""
    pf, sizes = examples["permute3d"], {"I": 5, "J": 7, "K": 3}
    compiled = lift.compile(pf.kernels["permute3d"])
    (x,) = pf.inputs("permute3d", sizes, seed=2)
    np.testing.assert_array_equal(compiled(x), x.transpose(2, 0, 1))
    assert lift.paper(compiled.lowered(sizes)).startswith("map-global[1](map-global(map-seq(id)))")


@needs_device
@pytest.mark.parametrize("name, sizes", [("syrk", {"N": 61, "M": 7}), ("doitgen", {"R": 3, "Q": 13, "P": 31})])
def test_products_of_rows_and_maps_of_products_are_register_blocked(examples, name, sizes):
    """syrk's `A Aᵀ` walks the rows of `A` (`examples/syrk.py`), doitgen maps one product over the slabs of a 3-D
    array (`examples/doitgen.py`): at bound sizes the default lowering reshapes each into a matrix product
    (`transpose-copy-rows`, `flatten-map`) and register-blocks it (0.12x and 0.09x numpy before, at 1001x999 and
    61x67x127 on PoCL; syrk then as fast as matmul's default lowering, doitgen 1.2x numpy), and computes numpy's
    result."""
    pf = examples[name]
    compiled = lift.compile(pf.kernels[name], sizes=sizes, lowering="default")
    assert "toPrivate(reduce-seq" in lift.paper(compiled.lowered(sizes))
    inputs = pf.inputs(name, sizes, seed=5)
    np.testing.assert_allclose(compiled(*inputs), pf.namespace["reference"](*inputs), rtol=1e-4, atol=1e-4)


@needs_device
def test_a_weighted_sum_of_row_products_folds_its_rows_in_blocks_as_gemv(examples):
    """`xᵀ A y` (`examples/bilinear.py`) as `x_i · dot(row_i, y)`: the product is split off the weighting
    (`map-subterm-fission`) and its rows folded in blocks of `ROW_BLOCK` into private accumulators, padded at an odd
    row count, as gemv's (at 4096² on PoCL as fast as gemv, 4.5 ms each, in one run), and computes numpy's form."""
    pf, sizes = examples["bilinear"], {"M": 1001, "N": 515}
    compiled = lift.compile(pf.kernels["bilinear"], sizes=sizes, lowering=vector_lowering(pf.kernels["bilinear"], sizes))
    lowered = lift.paper(compiled.lowered())
    assert "split-4 ∘ pad-to-multiple-4(clamp)" in lowered and "toPrivate(reduce-seq" in lowered, lowered
    x, A, y = pf.inputs("bilinear", sizes, seed=5)
    want = x.astype(np.float64) @ (A.astype(np.float64) @ y)
    np.testing.assert_allclose(compiled(x, A, y), [want], rtol=1e-4, atol=1e-4)


@needs_device
def test_a_user_function_reads_a_row_of_any_length_where_it_is(examples):
    """A row of a matrix in memory, of a length only known at run time, is passed to a user function as a pointer
    into the matrix (`views.memory_row`): cross-entropy's `row_loss(.., row, label)` over `zip(logits, labels)`
    (`examples/cross_entropy.py`) failed in code generation (`its array argument must be in memory`); so does a
    row of a plane of a 3-D array, two indices into it."""
    from lift import ArrayType, Float, Get, Int, Map, SizeVar, Zip, fun, userfun
    P, R, C = SizeVar("P"), SizeVar("R"), SizeVar("C")

    @userfun
    def pick(row: ArrayType(Float, C), k: Int) -> Float:
        return row[k] - row[0]

    rows = fun([ArrayType(ArrayType(Float, C), R), ArrayType(Int, R)],
               lambda a, ks: Map(lambda q: pick(Get(q, 0), Get(q, 1)))(Zip(a, ks)))
    planes = fun([ArrayType(ArrayType(ArrayType(Float, C), R), P), ArrayType(Int, R)],
                 lambda t, ks: Map(lambda plane: Map(lambda q: pick(Get(q, 0), Get(q, 1)))(Zip(plane, ks)))(t))
    rng = np.random.default_rng(8)
    a, t, ks = rng.standard_normal((7, 13)).astype(np.float32), rng.standard_normal((3, 7, 13)).astype(np.float32), \
        rng.integers(0, 13, 7).astype(np.int32)
    compiled = lift.compile(rows, lowering="default")
    np.testing.assert_array_equal(compiled(a, ks), a[np.arange(7), ks] - a[:, 0])
    assert "pick(a + " in compiled.generated_for(a, ks).source
    np.testing.assert_array_equal(lift.compile(planes, lowering="default")(t, ks), t[:, np.arange(7), ks] - t[:, :, 0])
    pf = examples["cross_entropy"]
    inputs = pf.inputs("cross_entropy", {"R": 31, "C": 17}, seed=6)
    np.testing.assert_allclose(lift.compile(pf.kernels["cross_entropy"])(*inputs), pf.namespace["reference"](*inputs),
                               rtol=1e-5)


@needs_device
def test_the_fast_copy_of_an_unswitched_window_declares_nothing_it_does_not_read(examples):
    """The in-bounds copy of a `map-seq-unswitch` iteration (`c_ast.assumed`) reads its windows by plain vector loads,
    so the clamped indices of the padded reads are no longer declared there (`c_ast.without_unused`): the 31-tap
    convolution's default kernel (`examples/conv1d.py`, N = 1,000,003) shrank from 192 to 151 KB of C."""
    import re

    pf, sizes = examples["conv1d"], {"N": 1001}
    compiled = lift.compile(pf.kernels["conv1d"], sizes=sizes, lowering=vector_lowering(pf.kernels["conv1d"], sizes))
    source = compiled.source
    assert "the clamped vector reads in bounds" in source
    declared = re.findall(r"\b(?:int|float\d*) (\w+) = ", source)
    assert declared and all(len(re.findall(rf"\b{name}\b", source)) > 1 for name in declared)
    inputs = pf.inputs("conv1d", sizes, seed=2)
    np.testing.assert_allclose(compiled(*inputs).ravel(), pf.namespace["reference"](*inputs).ravel(), rtol=1e-5,
                               atol=1e-5)
