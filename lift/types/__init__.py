"""Lift's types: symbolic sizes (`arith`, with `polynomial` and `ranges`) and data types (`types`).

This layer imports nothing of `lift.ir` or `lift.opencl_gen`. `arith` is imported first: the arithmetic
modules call back into its classes.
"""

from lift.types import arith

__all__ = ["arith"]
