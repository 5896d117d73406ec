"""A host program in bare PyOpenCL that runs a generated `.cl` file from its JSON manifest alone.

    python manifest_host.py K.cl K.json inputs.npz outputs.npz

The tests run it in a subprocess, so that nothing of lift is loaded: the manifest must say everything,
struct (tuple) elements included: their named fields, offsets and size, and a kernel the host launches
repeatedly (`host_loop`: which buffers its arguments take at each launch).
"""

import json, sys
import numpy as np
import pyopencl as cl

def dtype(d):
    if isinstance(d, str):
        return np.dtype(d)
    formats = [(dtype(f["dtype"]), tuple(f["shape"])) if "shape" in f else dtype(f["dtype"]) for f in d["fields"]]
    return np.dtype({"names": [f["name"] for f in d["fields"]], "formats": formats,
                     "offsets": [f["offset"] for f in d["fields"]], "itemsize": d["itemsize"]})

source = open(sys.argv[1]).read()
manifest = json.load(open(sys.argv[2]))
stored = np.load(sys.argv[3])
device = [d for p in cl.get_platforms() for d in p.get_devices()][0]
ctx = cl.Context([device])
queue = cl.CommandQueue(ctx)
program = cl.Program(ctx, source).build()
sizes = {k: int(v) for k, v in manifest["sizes"].items() if v != "symbolic"}
def shape(dims):
    return tuple(int(eval(s, {}, dict(sizes))) for s in dims)
flags = cl.mem_flags
arguments = {}
for i in manifest["inputs"]:
    data = stored[i["name"]].astype(dtype(i["dtype"]))
    arguments[i["name"]] = data[()] if not i["shape"] else cl.Buffer(ctx, flags.READ_ONLY | flags.COPY_HOST_PTR,
                                                                      hostbuf=data)
outputs = {o["name"]: np.empty(shape(o["shape"]), dtype(o["dtype"])) for o in manifest["outputs"]}
for name, host in outputs.items():
    arguments[name] = cl.Buffer(ctx, flags.READ_WRITE, host.nbytes)
for t in manifest["temporaries"]:
    nbytes = dtype(t["dtype"]).itemsize * int(np.prod(shape(t["shape"])))
    arguments[t["name"]] = cl.Buffer(ctx, flags.READ_WRITE, nbytes)
def launches(k):
    """The buffer each argument takes at each launch: one launch, or a host loop's (`host_loop`)."""
    loop = k.get("host_loop")
    if loop is None:
        return [{}]
    count, read, found = int(eval(loop["count"], {}, dict(sizes))), loop["first"], []
    for i in range(count):
        write = loop["buffers"][(count - 1 - i) % 2]
        found.append({loop["reads"]: read, loop["writes"]: write})
        read = write
    return found
for k in manifest["kernels"]:
    kernel = cl.Kernel(program, k["name"])
    sized = {a: np.dtype(t).type(sizes[a]) for a, t in k.get("size_args", {}).items()}
    glb = list(shape(k["global_size"]))
    loc = None if k["local_size"] is None else list(shape(k["local_size"]))
    for bound in launches(k):
        kernel.set_args(*[sized[a] if a in sized else arguments[bound.get(a, a)] for a in k["args"]])
        cl.enqueue_nd_range_kernel(queue, kernel, glb, loc)
for name, host in outputs.items():
    cl.enqueue_copy(queue, host, arguments[name])
np.savez(sys.argv[4], **outputs)
