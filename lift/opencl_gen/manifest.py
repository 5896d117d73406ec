"""Standalone `.cl` files and their JSON manifests, for host programs in other languages.

The `.cl` file compiles with no part of lift: bound sizes are constants, unbound ones kernel
arguments. Its header comment gives the expression in the paper's notation, each kernel's arguments in
order with types and sizes, the launch configuration, and the kernels' order and temporary buffers.
The manifest says the same as data (the shapes and sizes are size expressions in the size variables);
it lists every output in order (one per component of a result that is a tuple of arrays). A kernel the host
launches repeatedly (`iterate-host`) has a `host_loop`: how often, and which buffers its two arguments take
at each launch (`_host_loop`). An element
that is a tuple is a C struct: its dtype lists the struct's named fields with their offsets
(`describe_dtype`), from which a host program builds the matching record type (numpy, a C struct).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from lift.files import UnsafePathError, write_text
from lift.ir.binding import host_dtype
from lift.ir.printer import paper
from lift.opencl_gen.index_width import DTYPES
from lift.opencl_gen.kernels import GeneratedProgram
from lift.opencl_gen.memory import Memory, output_types
from lift.opencl_gen.program import HostLoop
from lift.types.types import ArrayType, Type, VectorType


def _shape(t: Type) -> list:
    shape = []
    while isinstance(t, ArrayType):
        shape.append(str(t.length))
        t = t.elem
    if isinstance(t, VectorType):
        shape.append(str(t.width))
    return shape


def _dtype(t: Type):
    return describe_dtype(host_dtype(t))


def describe_dtype(d: np.dtype):
    """A numpy dtype as JSON any host program can rebuild: a scalar's name (`"float32"`), or for a struct (a
    tuple element) its named fields with their offsets and the struct's size, the C compiler's layout:
    `{"fields": [{"name": "_0", "dtype": "float32", "offset": 0}, ...], "itemsize": 8}`; a field that is a
    vector has a `shape` (its lanes), a field that is a tuple a `dtype` of its own fields."""
    if d.fields is None:
        return d.name
    described = []
    for name in d.names:
        sub, offset = d.fields[name][:2]
        base, shape = (sub.subdtype if sub.subdtype is not None else (sub, ()))
        entry = {"name": name, "dtype": describe_dtype(base), "offset": offset}
        if shape:
            entry["shape"] = list(shape)
        described.append(entry)
    return {"fields": described, "itemsize": d.itemsize}


def manifest(g: GeneratedProgram) -> dict:
    """The manifest of a generated program (see the module docstring)."""
    lam = g.typed.expr
    sizes = {name: "symbolic" for name in g.free_sizes}
    sizes.update({k: v for k, v in g.sizes.items()})
    inputs = [{"name": p.name, "dtype": _dtype(p.t), "shape": _shape(p.t)} for p in lam.params]
    outputs = [{"name": m.name, "dtype": _dtype(t), "shape": _shape(t)}
               for m, t in zip(g.outputs, output_types(g.typed.type))]
    temporaries = [{"name": m.name, "dtype": _mem_dtype(m), "shape": [str(m.size)] + _lanes(m)}
                   for m in g.temporaries if any(m in k.buffers for k in g.kernels)]
    kernels = [{"name": k.name,
                "args": [m.name for m in k.params] + list(k.size_params),
                "size_args": {s: np.dtype(DTYPES[g.index]).name for s in k.size_params},
                "global_size": [str(n) for n in k.launch.global_size],
                "local_size": None if k.launch.local_size is None else [str(n) for n in k.launch.local_size],
                **({} if k.loop is None else {"host_loop": _host_loop(k.loop)})}
               for k in g.kernels]
    return {"expression": paper(lam), "sizes": sizes, "index_type": g.index, "inputs": inputs, "outputs": outputs,
            "temporaries": temporaries, "kernels": kernels}


def _host_loop(loop: HostLoop) -> dict:
    """A kernel the host launches `count` times (`HostLoop`): argument `reads` takes `first` at the first launch,
    then the buffer the launch before wrote; argument `writes` takes `buffers[0]` at the launches `i` (from 0)
    where `count - 1 - i` is even, else `buffers[1]`."""
    return {"count": str(loop.count), "reads": loop.source.name, "writes": loop.target.name, "first": loop.first.name,
            "buffers": [m.name for m in loop.buffers]}


def _mem_dtype(m: Memory):
    return describe_dtype(host_dtype(m.elem))


def _lanes(m: Memory) -> list:
    return [str(m.elem.width)] if isinstance(m.elem, VectorType) else []


def _c_name(d) -> str:
    """A described dtype as the header prints it: `float32`, or a struct's fields `{_0: float32, _1: float32}`."""
    if isinstance(d, str):
        return d
    return "{" + ", ".join(f"{f['name']}: {_c_name(f['dtype'])}" + (f"[{f['shape'][0]}]" if "shape" in f else "")
                           for f in d["fields"]) + "}"


def _buffer(b: dict) -> str:
    return f"{b['name']}: {_c_name(b['dtype'])}[{', '.join(b['shape'])}]"


def header(g: GeneratedProgram) -> str:
    """The comment that opens a standalone `.cl` file."""
    m = manifest(g)
    lines = [f"lift kernel {g.name}", "", "expression:", f"  {m['expression']}", ""]
    lines.append("sizes: " + (", ".join(f"{k} = {v}" for k, v in m["sizes"].items()) or "none"))
    lines.append(f"indices and size arguments: {m['index_type']}")
    lines.append("inputs: " + ", ".join(map(_buffer, m["inputs"])))
    lines.append("outputs: " + ", ".join(map(_buffer, m["outputs"])))
    if m["temporaries"]:
        lines.append("temporaries (allocate, uninitialised): " + ", ".join(map(_buffer, m["temporaries"])))
    lines.append("")
    lines.append(f"kernels, launched in this order ({len(m['kernels'])}):")
    for i, k in enumerate(m["kernels"]):
        local = "driver's choice" if k["local_size"] is None else f"[{', '.join(k['local_size'])}]"
        lines.append(f"  {i + 1}. {k['name']}({', '.join(k['args'])})  global [{', '.join(k['global_size'])}], "
                     f"local {local}")
        if "host_loop" in k:
            h = k["host_loop"]
            lines.append(f"     launched {h['count']} times, i = 0, 1, ...: {h['reads']} is {h['first']} at i = 0, "
                         f"then what launch i - 1 wrote; {h['writes']} is {h['buffers'][0]} where {h['count']} - 1 - i "
                         f"is even, else {h['buffers'][1]} (the result lands in {h['buffers'][0]})")
    return "/*\n" + "\n".join((" * " + l).rstrip() for l in lines) + "\n */\n"


def write_cl(g: GeneratedProgram, path) -> tuple:
    """Write `NAME.cl` and `NAME.json` beside it, each whole (`lift.files.write_text`); return both paths.

    A path whose manifest would be itself (a `.json` path) is refused."""
    path = Path(path)
    manifest_path = path.with_suffix(".json")
    if manifest_path == path or not path.name or path.name.startswith("."):
        raise UnsafePathError(f"{path}: the .cl file needs a name other than its manifest's (NAME.cl, NAME.json)")
    write_text(path, header(g) + g.source.split("\n", 1)[1])
    write_text(manifest_path, json.dumps(manifest(g), indent=2) + "\n")
    return path, manifest_path
