"""Bytes of values in OpenCL buffers: one function (`lift.opencl_gen.memory.value_bytes`) for the kernel-fusion
graph and the code generator, with vectors, doubles and tuples at their real sizes."""

import pytest

from lift import ArrayType, Double, Float, Int, SizeVar, TupleType, VectorType
from lift.explore.fusion_graph import KernelFusionError, _value_bytes
from lift.opencl_gen.memory import value_bytes

N, M = SizeVar("N"), SizeVar("M")


@pytest.mark.parametrize("t, nbytes", [
    (ArrayType(Float, N), 4 * 10),
    (ArrayType(Double, N), 8 * 10),
    (ArrayType(VectorType(Float, 4), N), 16 * 10),
    (ArrayType(VectorType(Double, 2), N), 16 * 10),
    (ArrayType(VectorType(Float, 3), N), 16 * 10),          # a float3 takes a float4's room
    (ArrayType(ArrayType(Double, M), N), 8 * 3 * 10),
    (ArrayType(TupleType(Float, Float), N), 8 * 10),
    (TupleType(ArrayType(Float, N), ArrayType(Int, M)), 4 * 10 + 4 * 3),
    (Double, 8),
])
def test_value_bytes_counts_vectors_doubles_and_tuples(t, nbytes):
    assert value_bytes(t, {"N": 10, "M": 3}) == nbytes


def test_an_unbound_length_is_a_clear_fusion_error():
    with pytest.raises(KernelFusionError, match="give every size"):
        _value_bytes(ArrayType(Float, N), {})
