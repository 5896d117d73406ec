"""Mappers: one traversal per concern, dispatched on the class of a node along its class hierarchy.

A mapper is a class with a method `map_<Class>` per kind of node it handles (pymbolic's and loopy's
mappers): calling the mapper on a node runs the method of the node's class, or of its nearest base class
that has one (`map_AbstractMap` serves `Map`, `MapSeq`, `MapGlb`, ...), else `map_default`. Each pass of
the compiler (type inference, the interpreter, code generation, cost model, printing) is a mapper, so a
new pattern is handled by every pass that handles its base class, and `handles` tells which passes do not
(the pattern-coverage test asks it for every pattern class).

`Node.map_children` is the one place that rebuilds a node from transformed children, for the pure
expression-to-expression functions (substitution, size binding, rewriting).
"""

from __future__ import annotations

from lift.errors import LiftError


class Mapper:
    """Dispatch `self(node, ...)` to `self.map_<C>(node, ...)` for the first class `C` in `type(node).__mro__`
    that has one; `map_default` is called when none does. The method is looked up once per class of node."""

    prefix = "map_"
    _dispatch: dict = {}
    _methods: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._dispatch = {}
        cls._methods = {}

    @classmethod
    def method_name(cls, node_cls: type):
        """The name of the method that handles instances of `node_cls`, or None."""
        cache = cls._dispatch
        if node_cls not in cache:
            cache[node_cls] = next((cls.prefix + c.__name__ for c in node_cls.__mro__
                                    if hasattr(cls, cls.prefix + c.__name__)), None)
        return cache[node_cls]

    def __call__(self, node, *args, **kwargs):
        try:
            method = self._methods[type(node)]
        except KeyError:
            name = self.method_name(type(node))
            method = self._methods[type(node)] = getattr(type(self), name or "map_default")
        return method(self, node, *args, **kwargs)

    def map_default(self, node, *args, **kwargs):
        raise LiftError(f"{type(self).__name__} has no meaning for {type(node).__name__}")


def handles(mapper_cls: type, node_cls: type) -> bool:
    """Whether `mapper_cls` has a method for `node_cls` or one of its bases (not only `map_default`)."""
    return mapper_cls.method_name(node_cls) is not None

