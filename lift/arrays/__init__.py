"""lift arrays: Accelerator's lazy data-parallel arrays over lift, for numpy users.

`lift.asarray(a)` wraps a numpy array; operators and methods build an expression graph; `x.get()`,
`np.asarray(x)` or `lift.evaluate(*arrays)` compile the graph into one lift program and run it on the
device or with numpy, as `lift.config` or Brook's cost model decides; `lift.explain(x)` shows how.
"""

from lift.arrays.array import LiftArray
from lift.arrays.config import config
from lift.arrays.evaluation import evaluate
from lift.arrays.explain import explain
from lift.arrays.operators import (asarray, astype, gather, matmul, maximum, mean, minimum, pad, reshape, rotate,
                                   shift, stencil, transpose, where)
from lift.arrays.operators import elementwise as _elementwise
from lift.ir.operators import LIFT_MATH


def _math_overload(name: str, scalar_function):
    """lift's math function `name` on lift arrays too (`lift.sqrt(x)`), as before on IR values and numbers."""
    def function(*args):
        if any(isinstance(a, LiftArray) for a in args):
            return _elementwise(name, *args)
        return scalar_function(*args)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = scalar_function.__doc__ + " On lift arrays: element-wise, as numpy's."
    return function


ARRAY_MATH = {name: _math_overload(name, f) for name, f in LIFT_MATH.items() if name not in ("fmin", "fmax")}
ARRAY_MATH.update(fmin=_math_overload("minimum", LIFT_MATH["fmin"]),
                  fmax=_math_overload("maximum", LIFT_MATH["fmax"]))

__all__ = ["ARRAY_MATH", "LiftArray", "asarray", "astype", "config", "evaluate", "explain", "gather", "matmul",
           "maximum", "mean", "minimum", "pad", "reshape", "rotate", "shift", "stencil", "transpose", "where"]
