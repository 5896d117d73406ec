"""Run one kernel of a program file on oclgrind's simulated device (the tests start it under `oclgrind`).

    python oclgrind_run.py PROGRAM.py KERNEL SIZES_JSON inputs.npz outputs.npz
"""

import json
import sys

import numpy as np

from lift.ir.program_file import load_program_file
from lift.opencl_gen.compiled import compile

path, kernel, sizes, inputs, out = sys.argv[1:6]
stored = np.load(inputs)
arrays = [stored[f"arr_{i}"] for i in range(len(stored.files))]
result = compile(load_program_file(path).kernels[kernel], device="oclgrind", sizes=json.loads(sizes),
                 name=kernel)(*arrays)
np.savez(out, *(result if isinstance(result, tuple) else (result,)))
