"""lift arrays: Accelerator's lazy data-parallel arrays over lift, for numpy users.

`lift.asarray(a)` wraps a numpy array; operators and methods build an expression graph; `x.get()`,
`np.asarray(x)` or `lift.evaluate(*arrays)` compile the graph into one lift program and run it on the
device or with numpy, as `lift.config` or Brook's cost model decides; `lift.explain(x)` shows how;
`lift.arrays.tune(x)` explores the program evaluating `x` would run and stores its winner for the next ones.
"""

from lift.arrays.array import LiftArray
from lift.arrays.config import config
from lift.arrays.evaluation import evaluate
from lift.arrays.explain import explain
from lift.arrays.operators import (asarray, astype, gather, matmul, maximum, mean, minimum, pad, reshape, rotate,
                                   shift, stencil, transpose, where)
from lift.arrays.tuning import tune

__all__ = ["LiftArray", "asarray", "astype", "config", "evaluate", "explain", "gather", "matmul",
           "maximum", "mean", "minimum", "pad", "reshape", "rotate", "shift", "stencil", "transpose", "tune", "where"]
