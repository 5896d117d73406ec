"""OpenCL C names of lift's data types (`lift.types.types`): scalars and vectors by their C names, tuples
as structs named after their components, with fields `_0, _1, ...` (`tuple_field`)."""

from __future__ import annotations

from lift.types.types import ScalarType, TupleType, Type, VectorType, tuple_field


def c_type_name(t: Type) -> str:
    """The OpenCL C name of a scalar, vector or tuple type (tuples become structs named after their fields)."""
    if isinstance(t, ScalarType):
        return t.name
    if isinstance(t, VectorType):
        return f"{t.elem.name}{t.width}"
    if isinstance(t, TupleType):
        return "Tuple_" + "_".join(c_type_name(e) for e in t.elems)
    raise TypeError(f"{t} has no OpenCL C scalar name (arrays are pointers)")


def c_struct_definition(t: TupleType) -> str:
    """The OpenCL C typedef of a tuple type; its name is `c_type_name(t)` and its fields `_0, _1, ...`."""
    fields = " ".join(f"{c_type_name(e)} {tuple_field(i)};" for i, e in enumerate(t.elems))
    return f"typedef struct {{ {fields} }} {c_type_name(t)};"
