"""The predicates on data types that several layers share (`lift.types.types`)."""

from lift.types.arith import SizeVar
from lift.types.types import ArrayType, Float, TupleType, VectorType, element_type, is_one_element


def test_element_type_is_under_every_array_dimension():
    assert element_type(ArrayType(ArrayType(VectorType(Float, 4), 8), SizeVar("N"))) == VectorType(Float, 4)
    assert element_type(ArrayType(TupleType(Float, Float), 3)) == TupleType(Float, Float)
    assert element_type(Float) == Float


def test_one_element_arrays_are_those_of_constant_length_one():
    assert is_one_element(ArrayType(Float, 1))
    assert is_one_element(ArrayType(ArrayType(Float, 4), 1))
    assert not is_one_element(ArrayType(Float, 2))
    assert not is_one_element(ArrayType(Float, SizeVar("N")))
    assert not is_one_element(Float)
