"""Program files: the Python modules that hold lift programs (`examples/asum.py`).

The convention, documented in the README:
- every module-level lambda built with `fun([types], ...)` is a kernel, named by its variable;
- `SIZES = {"N": 1 << 24}` gives default values of the size variables (the CLI's `--size` overrides);
- an optional `inputs(kernel, sizes, rng)` returns the kernel's input arrays, for programs whose inputs
  must be valid (MD's neighbour indices); otherwise inputs are random values of the parameter types;
- an optional `TOLERANCE = {"rtol": 1e-2, "atol": 0.5}` (or `{kernel: {...}}`, per kernel) is how far a
  candidate's output may be from the reference interpreter's in `lift explore` (`--rtol`, `--atol` override).

A program file is Python: loading it runs its code, with the rights of the user who runs lift. Load only
files you trust.

The file's own folder is importable while it loads, so programs can share user functions (`blas.py`).
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional

import numpy as np

from lift.errors import LiftError
from lift.files import check_name
from lift.ir.binding import host_dtype, host_shape
from lift.ir.footprint import array_bytes, available_host_bytes, check_fits
from lift.ir.nodes import Lambda
from lift.ir.typecheck import infer
from lift.types.types import ArrayType, TupleType, Type, VectorType


class ProgramFileError(LiftError):
    """A program file that cannot be used: missing, broken, or without the kernel asked for."""


@dataclass
class ProgramFile:
    """The kernels, default sizes and input generator of one program file."""

    path: Path
    kernels: dict
    sizes: dict = field(default_factory=dict)
    input_generator: Optional[Callable] = None
    namespace: dict = field(default_factory=dict)
    tolerance: dict = field(default_factory=dict)

    def tolerance_of(self, name: str) -> dict:
        """The `rtol` and `atol` the file's `TOLERANCE` gives kernel `name` (those it gives; none by default)."""
        per_kernel = self.tolerance.get(name)
        return dict(per_kernel) if isinstance(per_kernel, dict) else \
            {k: v for k, v in self.tolerance.items() if k in TOLERANCE_KEYS}

    def kernel(self, name: Optional[str] = None) -> tuple:
        """The kernel `name`, or the one named after the file, or the only one: `(name, program)`."""
        if name is None:
            if self.path.stem in self.kernels:
                name = self.path.stem
            elif len(self.kernels) == 1:
                name = next(iter(self.kernels))
            else:
                raise ProgramFileError(
                    f"{self.path} defines several kernels ({', '.join(self.kernels)}): choose one with --kernel")
        if name not in self.kernels:
            raise ProgramFileError(
                f"{self.path} has no kernel {name!r}; it defines: {', '.join(self.kernels) or 'none'}")
        return check_name(name), self.kernels[name]

    def bind(self, overrides: Optional[Mapping[str, int]] = None) -> dict:
        """The file's default sizes with `overrides` applied."""
        sizes = dict(self.sizes)
        sizes.update(overrides or {})
        return sizes

    def size_names(self, name: str) -> set:
        """The size variables kernel `name` can be given: those of its parameter and result types, and SIZES."""
        typed = infer(self.kernels[name])
        found = set(self.sizes)
        for t in (*typed.param_types, typed.type):
            found |= _size_vars(t)
        return found

    def check_overrides(self, name: str, overrides: Mapping[str, int]) -> None:
        """Refuse a size the kernel does not have (a typo such as `n` for `N` would go unnoticed)."""
        known = self.size_names(name)
        for size in overrides:
            if size not in known:
                raise ProgramFileError(f"{name} has no size variable {size!r}; its sizes are: "
                                       f"{', '.join(sorted(known)) or 'none'}")

    def inputs(self, name: str, sizes: Mapping[str, int], seed: int = 0) -> list:
        """Inputs for kernel `name` under `sizes`: the file's generator, or random values of the declared types.

        A generator that fails or returns something other than one value per parameter, and inputs too large
        for this machine's memory, are `ProgramFileError`s."""
        params = self.kernels[name].params
        rng = np.random.default_rng(seed)
        try:
            if self.input_generator is None:
                _check_fits(name, params, sizes)
                return [random_value(p.t, sizes, rng) for p in params]
            produced = self.input_generator(name, dict(sizes), rng)
        except LiftError:
            raise
        except MemoryError:
            raise ProgramFileError(f"the inputs of {name} at {_sizes_text(sizes)} do not fit in memory") from None
        except Exception as e:
            raise ProgramFileError(f"{self.path}{_line_in(self.path, e)}: inputs() raised "
                                   f"{type(e).__name__}: {e}") from None
        if not isinstance(produced, (list, tuple)) or len(produced) != len(params):
            got = type(produced).__name__ if not isinstance(produced, (list, tuple)) else f"{len(produced)} values"
            raise ProgramFileError(f"{self.path}: inputs({name!r}, ...) must return a list of {len(params)} "
                                   f"value(s), one per parameter, got {got}")
        return list(produced)


def _size_vars(t: Type) -> set:
    if isinstance(t, ArrayType):
        return {v.name for v in t.length.free_vars()} | _size_vars(t.elem)
    if isinstance(t, TupleType):
        return set().union(*(_size_vars(e) for e in t.elems))
    return set()


def _sizes_text(sizes: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items()) or "no sizes"


def _check_fits(name: str, params: list, sizes: Mapping[str, int]) -> None:
    """Refuse random inputs larger than the host's available memory before allocating them (which could thrash
    or be killed)."""
    check_fits([(p.name, array_bytes(p.t, sizes)) for p in params], available_host_bytes(),
               "the host's available memory", purpose=f" for the inputs of {name} at {_sizes_text(sizes)}",
               error=ProgramFileError)


def random_value(t: Type, sizes: Mapping[str, int], rng: np.random.Generator):
    """A random value of type `t`: floats in [-1, 1), ints in [0, 100); a numpy scalar for scalar types."""
    elem = t
    while isinstance(elem, ArrayType):
        elem = elem.elem
    shape = host_shape(t, sizes)
    if isinstance(elem, TupleType):
        out = np.zeros(shape, dtype=host_dtype(t))
        for i, e in enumerate(elem.elems):
            out[f"_{i}"] = _fill(e, out[f"_{i}"].shape, rng)
        return out
    data = _fill(elem, shape, rng)
    return data if shape else host_dtype(t).type(data)


def _fill(elem: Type, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    scalar = elem.elem if isinstance(elem, VectorType) else elem
    if scalar.name in ("float", "double"):
        return rng.uniform(-1.0, 1.0, shape).astype(scalar.dtype)
    if scalar.name == "bool":
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(0, 100, shape).astype(scalar.dtype)


def load_program_file(path) -> ProgramFile:
    """Load a program file; every failure is a `ProgramFileError` with one clear line."""
    path = Path(path)
    if not path.is_file():
        raise ProgramFileError(f"no such program file: {path}")
    module_name = f"_lift_program_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ProgramFileError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except LiftError as e:
        raise ProgramFileError(f"{path}: {e}") from None
    except SyntaxError as e:
        raise ProgramFileError(f"{path}, line {e.lineno}: syntax error: {e.msg}") from None
    except SystemExit as e:
        raise ProgramFileError(f"{path}{_line_in(path, e)}: exits while loading (sys.exit({e.code!r}))") from None
    except Exception as e:
        line = _line_in(path, e)
        raise ProgramFileError(f"{path}{line}: {type(e).__name__}: {e}") from None
    finally:
        sys.path.remove(folder)
    kernels = {name: v for name, v in vars(module).items() if isinstance(name, str) and name.isidentifier()
               and isinstance(v, Lambda) and v.params and all(p.t is not None for p in v.params)}
    if not kernels:
        raise ProgramFileError(f"{path} defines no lift program (a module-level fun([types], lambda ...))")
    sizes = getattr(module, "SIZES", {})
    if not isinstance(sizes, dict) or not all(isinstance(k, str) and k.isidentifier() and isinstance(v, int)
                                              and not isinstance(v, bool) and v > 0 for k, v in sizes.items()):
        raise ProgramFileError(f"{path}: SIZES must be a dict of size names to positive integers, got {sizes!r:.80}")
    generator = getattr(module, "inputs", None)
    return ProgramFile(path, kernels, dict(sizes), generator if callable(generator) else None, vars(module),
                       _tolerance(path, getattr(module, "TOLERANCE", {}), kernels))


TOLERANCE_KEYS = ("rtol", "atol")


def _tolerance(path: Path, value, kernels: dict) -> dict:
    """`TOLERANCE`, checked: `{"rtol": r, "atol": a}` (either may be left out), or such a dict per kernel."""
    def valid(d) -> bool:
        return isinstance(d, dict) and all(k in TOLERANCE_KEYS and isinstance(v, (int, float))
                                           and not isinstance(v, bool) and 0 <= v <= sys.float_info.max
                                           for k, v in d.items())

    if valid(value) or (isinstance(value, dict) and all(k in kernels and valid(v) for k, v in value.items())):
        return dict(value)
    raise ProgramFileError(f"{path}: TOLERANCE must be {{'rtol': r, 'atol': a}} (non-negative numbers, either may be "
                           f"left out) or such a dict per kernel name, got {value!r:.80}")


def _line_in(path: Path, e: BaseException) -> str:
    for frame in reversed(traceback.extract_tb(e.__traceback__)):
        if Path(frame.filename).resolve() == path.resolve():
            return f", line {frame.lineno}"
    return ""
