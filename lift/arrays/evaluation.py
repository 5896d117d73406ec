"""Evaluating lift arrays: the graph as one program, compiled once per structure and device, run where
the placement says.

`plan` finds the graph below the arrays asked for, its structural key (`lift.arrays.graph.structure`), the
cached compiled program for that key on the arrays' device (`lift.compile`: the tuning database's winner
where present, else the default lowering) and the placement (`lift.config`, else Brook's cost model:
`lift.arrays.placement`, whose model of the program is kept with it). `evaluate` runs the plan and makes
each array asked for a leaf holding its value (on the device after a device program: a later program
reads it there, `get()` downloads it). `forget` drops a structure's programs (after `lift.arrays.tune`).
Where the code generator cannot take the program (a view of a computed array that the default lowering
fuses into its producer), the arrays that views read are evaluated first and the rest is planned again
(Accelerator's shader breaks). `run_on_device` is the one function that moves data between numpy and the
device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from lift.arrays.array import LiftArray
from lift.arrays.config import config
from lift.arrays.graph import Structure, build, stored, structure
from lift.arrays.host import evaluate_on_host
from lift.arrays.placement import Prediction, model, predict
from lift.errors import LiftCodegenError, LiftError
from lift.explore.tuned_compile import compile as lift_compile
from lift.opencl_gen import runtime

_PROGRAMS: dict = {}
_MODELS: dict = {}  # the placement's model of each compiled program (`lift.arrays.placement.model`)
_SPLIT: set = set()  # structures the code generator could not take: split at the arrays views read
COUNTS = {"compiled": 0, "reused": 0, "device": 0, "host": 0}


@dataclass
class Plan:
    """One evaluation: the arrays, their graph's structure, program, compiled program and placement."""

    targets: list
    structure: Structure
    device: object
    compiled: object
    prediction: Optional[Prediction]
    placement: str

    @property
    def program(self):
        return self.compiled.program


def _target(targets, st: Structure) -> runtime.Target:
    """Where the program runs: the queue of a device array it reads, else the arrays' or `lift.config`'s
    device (lift's own queue on it)."""
    queue = next((n.on_device.queue for n in st.inputs if n.on_device is not None), None)
    if queue is not None:
        return runtime.target(queue=queue)
    spec = next((t.device for t in targets if t.device is not None), config.device)
    return runtime.target(queue=spec) if type(spec).__name__ == "CommandQueue" else runtime.target(spec)


def _cache_key(st: Structure, target: runtime.Target) -> tuple:
    """The key of the program of this structure on `target`'s device and context."""
    return st.key, runtime.device_label(target.device), target.context.int_ptr


def compiled_program(targets, st: Structure, target: runtime.Target):
    """The compiled program of this structure on `target`'s context, compiled on first use."""
    key = _cache_key(st, target)
    if key in _PROGRAMS:
        COUNTS["reused"] += 1
    else:
        COUNTS["compiled"] += 1
        _PROGRAMS[key] = lift_compile(build(targets, st), name="lift_arrays", queue=target.queue)
    return _PROGRAMS[key]


def forget(st: Structure) -> None:
    """Drop the compiled programs of this structure (on every device): the next evaluation compiles it again,
    with what the tuning database holds then (`lift.arrays.tuning`)."""
    for key in [k for k in _PROGRAMS if k[0] == st.key]:
        del _PROGRAMS[key]
        _MODELS.pop(key, None)
    _SPLIT.discard(st.key)


def plan(*arrays, predict_always: bool = False) -> Plan:
    """The plan for evaluating `arrays` (those not evaluated yet); `predict_always` also predicts where
    the placement is forced."""
    targets = list(dict.fromkeys(a for a in arrays if isinstance(a, LiftArray) and not a.evaluated))
    st = structure(targets)
    placement = config.placement
    if placement == "host" and not predict_always:
        return Plan(targets, st, None, None, None, "host")
    try:
        target = _target(targets, st)
    except LiftError:
        if placement == "device":
            raise
        return Plan(targets, st, None, None, None, "host")
    device = target.device
    breaks = [a for n in st.nodes if n.op in ("transpose", "reshape", "pad", "section", "shift") for a in n.args
              if not stored(a)]
    if st.key not in _SPLIT:
        compiled = compiled_program(targets, st, target)
        try:
            compiled.generated()
        except LiftCodegenError:
            if not breaks:
                raise
            _SPLIT.add(st.key)
    if st.key in _SPLIT:
        evaluate(*breaks)
        return plan(*arrays, predict_always=predict_always)
    prediction = None
    if placement == "auto" or predict_always:
        key = _cache_key(st, target)
        if key not in _MODELS:
            _MODELS[key] = model(st, compiled.generated(), device)
        prediction = predict(st, targets, _MODELS[key], device)
    return Plan(targets, st, device, compiled, prediction,
                prediction.choice if placement == "auto" else placement)


def run_on_device(compiled, leaves: list) -> list:
    """Run `compiled` on the values of `leaves`, each uploaded once to the program's context and kept on the
    leaf; its results as `pyopencl.array.Array`s, which stay on the device (a 0-d value is passed as one
    element). The one place where data moves from the host to the device."""
    import pyopencl.array as cla

    arrays = []
    for n in leaves:
        if n.on_device is None or n.on_device.context != compiled.context:
            host = n.host_value()
            n.on_device = cla.to_device(compiled.queue, np.ascontiguousarray(host.reshape(host.shape or (1,))))
        arrays.append(n.on_device.reshape(1) if n.on_device.shape == () else n.on_device)
    result = compiled(*arrays)
    return list(result) if isinstance(result, tuple) else [result]


def evaluate(*arrays):
    """Compute the `arrays` not yet evaluated in one program (`plan`), where the placement says; returns
    `arrays` (one, or a tuple), each now holding its value (on the device after a device program)."""
    p = plan(*arrays)
    if p.targets:
        if p.placement == "device":
            values = run_on_device(p.compiled, list(p.structure.inputs))
        else:
            values = evaluate_on_host(p.targets)
        COUNTS[p.placement] += 1
        for t, v in zip(p.targets, values):
            t.set_value(v)
    return arrays[0] if len(arrays) == 1 else arrays
