"""The errors lift raises: one base class, so that callers can catch everything lift rejects.

Every message names what was wrong (the pattern, the expected and the actual type) and where
(a printed path into the expression), so that the CLI can print it as one line.
"""


class LiftError(Exception):
    """Base class of every error lift reports to its user."""


class LiftTypeError(LiftError):
    """An ill-typed expression: a pattern applied to a value of the wrong type."""


class LiftSizeError(LiftError):
    """Sizes that an expression cannot take: an unbound size, or a binding breaking a divisibility constraint."""


class LiftEvalError(LiftError):
    """The reference interpreter cannot evaluate an expression (for example a user function with no Python body)."""


class LiftCodegenError(LiftError):
    """An expression the OpenCL code generator cannot emit (for example a mapping OpenCL cannot run)."""


class LiftDeviceError(LiftError):
    """No OpenCL device matches, or the device cannot run a launch configuration."""


class LiftMemoryError(LiftError):
    """Values too large for the host's or the device's memory at the bound sizes, refused before allocation."""
