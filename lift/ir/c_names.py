"""The names user code may give: user names become C identifiers as they are, so none may be a C keyword, an
OpenCL C type or built-in, or have the form of an identifier the code generator makes.

A name the user gives (a program's parameter, a size variable, a user function and its parameters) appears
in the generated C unchanged, next to the code generator's own identifiers: loop indices (`g_0`, `l_1`,
`wg_2`, `i_3`), temporaries (`tmp_0`, `lmem_1`, `pmem_2`), accumulators (`acc_2`), values (`v_4`), the
output buffers (`out`, `out0`, ...) and kernels (`lift_k0`). Where a user name could be one of those the
kernel silently computes something else; so such names are refused with one `LiftError` naming them
(`check_c_name`), where the program or function is defined or, for names the IR does not check (a
`Param` built directly), where its kernel is generated.
"""

from __future__ import annotations

import re
from typing import Callable

C_RESERVED = set("""
    auto break case char const continue default do double else enum extern float for goto if inline int long
    register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
    bool half uchar ushort uint ulong size_t ptrdiff_t intptr_t uintptr_t global local constant private kernel
    read_only write_only read_write true false
    acos acosh acospi asin asinh asinpi atan atan2 atanh atanpi atan2pi cbrt ceil copysign cos cosh cospi erf
    erfc exp exp2 exp10 expm1 fabs fdim floor fma fmax fmin fmod fract frexp hypot ilogb ldexp lgamma lgamma_r
    log log2 log10 log1p logb mad maxmag minmag modf nan nextafter pow pown powr remainder remquo rint rootn
    round rsqrt sin sincos sinh sinpi sqrt tan tanh tanpi tgamma trunc
    abs abs_diff add_sat hadd rhadd clamp clz ctz mad_hi mad_sat max min mul_hi rotate sub_sat upsample popcount
    mad24 mul24 degrees mix radians step smoothstep sign cross dot distance length normalize fast_distance
    fast_length fast_normalize isequal isnotequal isgreater isgreaterequal isless islessequal islessgreater
    isfinite isinf isnan isnormal isordered isunordered signbit any all bitselect select shuffle shuffle2
    get_global_id get_local_id get_group_id get_global_size get_local_size get_num_groups get_work_dim
    get_global_offset barrier mem_fence read_mem_fence write_mem_fence printf
""".split())
C_RESERVED_PATTERN = re.compile(r"((convert_|as_)?(u?(char|short|int|long)|float|double|half|bool)(2|3|4|8|16)?"
                                 r"|(native|half|atomic|async|vload|vstore|read_image|write_image)\w*)")


def check_c_name(name: str, error: Callable, generated: bool = False):
    """Names become C identifiers as they are: reject non-identifiers, OpenCL C's keywords, types and built-in
    functions, and, for names that share the kernel's scope (`generated`: a program's parameters, size
    variables, user function names), the identifiers the code generator makes (`GENERATED`). `error(message)`
    makes the exception to raise."""
    if not isinstance(name, str) or not name.isidentifier() or not name.isascii():
        raise error(f"{name!r} is not a C identifier")
    if name in C_RESERVED or C_RESERVED_PATTERN.fullmatch(name):
        raise error(f"`{name}` is a keyword or built-in of OpenCL C: rename it")
    if generated and GENERATED.fullmatch(name):
        raise error(f"`{name}` has the form of a name the code generator makes ({GENERATED_FORMS}): rename it")


GENERATED_FORMS = "g_0, l_0, wg_0, i_0, it_0, tmp_0, lmem_0, pmem_0, acc_0, v_0, len_0, in_0, out_0, out, out0, *_k0"
GENERATED = re.compile(r"(g|l|wg|i|it|tmp|lmem|pmem|acc|v|len|in|out)_\d+|out\d*|\w+_k\d+")
