"""`lift.config`: where lift arrays are evaluated, for the whole program or within a `with` block.

`placement` is "auto" (Brook's cost model decides per evaluation: `lift.arrays.placement`), "device" or
"host"; `device` names the OpenCL device of arrays created without one (`lift.opencl_gen.runtime`'s
`select_device` spec: None for the default, "cpu", "gpu", a name...).
"""

from __future__ import annotations

from contextlib import contextmanager

from lift.errors import LiftError

PLACEMENTS = ("auto", "device", "host")


class Config:
    """The settings (module docstring); `config(placement="host")` sets them for a `with` block."""

    def __init__(self):
        self._placement, self.device = "auto", None

    @property
    def placement(self) -> str:
        return self._placement

    @placement.setter
    def placement(self, value: str) -> None:
        if value not in PLACEMENTS:
            raise LiftError(f"lift.config.placement must be one of {PLACEMENTS}, got {value!r}")
        self._placement = value

    @contextmanager
    def __call__(self, placement=None, device=None):
        saved = self._placement, self.device
        try:
            if placement is not None:
                self.placement = placement
            if device is not None:
                self.device = device
            yield self
        finally:
            self._placement, self.device = saved

    def __repr__(self) -> str:
        return f"lift.config(placement={self.placement!r}, device={self.device!r})"


config = Config()
