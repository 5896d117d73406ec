"""The names a user function's body sees outside itself: its closure, then its module, then Python's builtins.

They are static: known when the function is translated (`math.pi`, a numeric constant of the module, a lift type
such as `VectorType(Float, 4)`, a function the body may call such as `math.sqrt` or `range`), unlike the body's
parameters and the names it assigns. The front end (`lift.ir.userfun_typing`) resolves them here.
"""

from __future__ import annotations

import ast
import builtins
import inspect
from collections import ChainMap
from typing import Callable, Mapping

from lift.types.types import Type

MISSING = object()
"""What `ModuleScope.lookup` returns for a name defined nowhere."""


def namespace(fn: Callable) -> Mapping:
    """The names that a function's body sees outside itself: its closure, then its module."""
    return ChainMap(inspect.getclosurevars(fn).nonlocals, fn.__globals__)


class ModuleScope:
    """The static names of the user function `fun`, whose body's own names are `body_names`; `error(node, message)`
    makes the `LiftTypeError` that names the line."""

    def __init__(self, fun, body_names: set, error: Callable):
        self.namespace = namespace(fun.function)
        self.body_names = body_names
        self.error = error

    def is_static(self, node) -> bool:
        """Whether `node` names something of the module (`math.pi`, a constant, a type such as
        `VectorType(Float, 4)`), not a value of the body."""
        if isinstance(node, ast.Attribute):
            return self.is_static(node.value)
        if isinstance(node, ast.Call):
            return not node.keywords and self.is_static(node.func) and all(
                isinstance(a, ast.Constant) or self.is_static(a) for a in node.args)
        return isinstance(node, ast.Name) and node.id not in self.body_names

    def lookup(self, name: str):
        """What `name` refers to in the closure, the module or the builtins; `MISSING` where it is defined nowhere."""
        return self.namespace[name] if name in self.namespace else getattr(builtins, name, MISSING)

    def static(self, node):
        """The Python object that a module-level name or attribute refers to."""
        if isinstance(node, ast.Name):
            value = self.lookup(node.id)
            if value is MISSING:
                raise self.error(node, f"`{node.id}` is not defined")
            return value
        if isinstance(node, ast.Call):
            return self.type_of_call(node)
        base = self.static(node.value)
        if not hasattr(base, node.attr):
            raise self.error(node, f"`{ast.unparse(node)}` is not defined")
        return getattr(base, node.attr)

    def type_of_call(self, node: ast.Call) -> Type:
        """The lift type that a call of a type's class with module-level arguments builds (`VectorType(Float, 4)`,
        so that `VectorType(Float, 4)(a, b, c, d)` builds a vector as `Quat(a, b, c, d)` does)."""
        cls = self.static(node.func)
        if not (isinstance(cls, type) and issubclass(cls, Type)):
            raise self.error(node, f"`{ast.unparse(node)}`: only lift types are called in user functions")
        args = [a.value if isinstance(a, ast.Constant) else self.static(a) for a in node.args]
        try:
            return cls(*args)
        except (TypeError, ValueError) as e:
            raise self.error(node, f"`{ast.unparse(node)}`: {e}") from None
