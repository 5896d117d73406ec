"""Standalone `.cl` files and their JSON manifests, for host programs in other languages.

The `.cl` file compiles with no part of lift: bound sizes are constants, unbound ones kernel
arguments. Its header comment gives the expression in the paper's notation, each kernel's arguments in
order with types and sizes, the launch configuration, and the kernels' order and temporary buffers.
The manifest says the same as data (the shapes and sizes are size expressions in the size variables);
it lists every output in order (one per component of a result that is a tuple of arrays).
"""

from __future__ import annotations

import json
from pathlib import Path

from lift.ir.binding import host_dtype
from lift.ir.printer import paper
from lift.opencl_gen.c_types import c_type_name
from lift.opencl_gen.kernels import GeneratedProgram
from lift.opencl_gen.memory import Memory, output_types
from lift.types.types import ArrayType, Type, VectorType


def _shape(t: Type) -> list:
    shape = []
    while isinstance(t, ArrayType):
        shape.append(str(t.length))
        t = t.elem
    if isinstance(t, VectorType):
        shape.append(str(t.width))
    return shape


def _dtype(t: Type) -> str:
    d = host_dtype(t)
    return d.name if d.fields is None else c_type_name(_elem(t))


def _elem(t: Type) -> Type:
    while isinstance(t, ArrayType):
        t = t.elem
    return t


def manifest(g: GeneratedProgram) -> dict:
    """The manifest of a generated program (see the module docstring)."""
    lam = g.typed.expr
    sizes = {name: "symbolic" for name in g.free_sizes}
    sizes.update({k: v for k, v in g.sizes.items()})
    inputs = [{"name": p.name, "dtype": _dtype(p.t), "shape": _shape(p.t)} for p in lam.params]
    outputs = [{"name": m.name, "dtype": _dtype(t), "shape": _shape(t)}
               for m, t in zip(g.outputs, output_types(g.typed.type))]
    temporaries = [{"name": m.name, "dtype": _mem_dtype(m), "shape": [str(m.size)] + _lanes(m)}
                   for m in g.temporaries if any(m in k.params for k in g.kernels)]
    kernels = [{"name": k.name,
                "args": [m.name for m in k.params] + list(k.size_params),
                "global_size": [str(n) for n in k.launch.global_size],
                "local_size": None if k.launch.local_size is None else [str(n) for n in k.launch.local_size]}
               for k in g.kernels]
    return {"expression": paper(lam), "sizes": sizes, "inputs": inputs, "outputs": outputs,
            "temporaries": temporaries, "kernels": kernels}


def _mem_dtype(m: Memory) -> str:
    d = host_dtype(m.elem)
    return d.name if d.fields is None else c_type_name(m.elem)


def _lanes(m: Memory) -> list:
    return [str(m.elem.width)] if isinstance(m.elem, VectorType) else []


def header(g: GeneratedProgram) -> str:
    """The comment that opens a standalone `.cl` file."""
    m = manifest(g)
    lines = [f"lift kernel {g.name}", "", "expression:", f"  {m['expression']}", ""]
    lines.append("sizes: " + (", ".join(f"{k} = {v}" for k, v in m["sizes"].items()) or "none"))
    lines.append("inputs: " + ", ".join(f"{i['name']}: {i['dtype']}[{', '.join(i['shape'])}]" for i in m["inputs"]))
    lines.append("outputs: " + ", ".join(f"{o['name']}: {o['dtype']}[{', '.join(o['shape'])}]" for o in m["outputs"]))
    if m["temporaries"]:
        lines.append("temporaries (allocate, uninitialised): "
                     + ", ".join(f"{t['name']}: {t['dtype']}[{', '.join(t['shape'])}]" for t in m["temporaries"]))
    lines.append("")
    lines.append(f"kernels, launched in this order ({len(m['kernels'])}):")
    for i, k in enumerate(m["kernels"]):
        local = "driver's choice" if k["local_size"] is None else f"[{', '.join(k['local_size'])}]"
        lines.append(f"  {i + 1}. {k['name']}({', '.join(k['args'])})  global [{', '.join(k['global_size'])}], "
                     f"local {local}")
    return "/*\n" + "\n".join((" * " + l).rstrip() for l in lines) + "\n */\n"


def write_cl(g: GeneratedProgram, path) -> tuple:
    """Write `NAME.cl` and `NAME.json` beside it; return both paths."""
    path = Path(path)
    path.write_text(header(g) + g.source.split("\n", 1)[1])
    manifest_path = path.with_suffix(".json")
    manifest_path.write_text(json.dumps(manifest(g), indent=2) + "\n")
    return path, manifest_path
