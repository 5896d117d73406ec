"""The `lift` command line: devices, evaluating and compiling program files, rules, derivations, search.

Every failure the user can cause (a missing or broken program file, an unknown kernel or device, sizes
the expression cannot take) prints one line on stderr and exits with status 1, never a traceback.
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

import click
import numpy as np

import lift
from lift.errors import LiftError


class CommandError(click.ClickException):
    """A lift error shown as one line: `error: ...`."""

    def show(self, file=None) -> None:
        click.echo(f"error: {self.format_message()}", err=True, file=file)


def reports_errors(command):
    """Turn lift's errors (and interrupted runs) into one line and a non-zero exit."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except LiftError as e:
            raise CommandError(str(e).replace("\n", "\n  ")) from None
        except OSError as e:
            raise CommandError(f"{e.filename or ''}: {e.strerror}".lstrip(": ")) from None
        except KeyboardInterrupt:
            raise CommandError("interrupted") from None
    return wrapper


def parse_sizes(values) -> dict:
    """`--size N=4096` options as a dict."""
    sizes = {}
    for v in values:
        name, sep, number = v.partition("=")
        if not sep or not name.isidentifier():
            raise CommandError(f"--size takes NAME=VALUE, got {v!r}")
        try:
            sizes[name] = int(number.replace("_", ""), 0)
        except ValueError:
            raise CommandError(f"--size {name}: {number!r} is not an integer") from None
        if sizes[name] <= 0:
            raise CommandError(f"--size {name}: must be positive, got {sizes[name]}")
    return sizes


class WorkGroupSizes(click.ParamType):
    """`--work-group-sizes 0,1,64`: distinct work-group sizes, 0 standing for the driver's choice (None)."""

    name = "N,N,..."

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            sizes = tuple(int(v) for v in str(value).split(","))
        except ValueError:
            self.fail(f"{value!r} is not a comma-separated list of integers such as 0,1,64", param, ctx)
        if any(n < 0 for n in sizes) or len(set(sizes)) != len(sizes):
            self.fail(f"{value!r}: the sizes must be distinct and not negative (0: the driver's choice)", param, ctx)
        return tuple(None if n == 0 else n for n in sizes)


size_option = click.option("--size", "sizes", multiple=True, metavar="NAME=VALUE",
                           help="Bind a size variable (repeatable); overrides the program file's SIZES.")
kernel_option = click.option("--kernel", default=None, help="Kernel to use (default: the one named after the file).")
device_option = click.option("--device", default=None,
                             help="OpenCL device: a name substring (nvidia, intel, pocl, cpu, gpu) or #index.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(lift.__version__, prog_name="lift")
def main():
    """lift: functional data-parallel patterns rewritten into fast OpenCL kernels."""


@main.command()
@reports_errors
def devices():
    """List the OpenCL platforms and devices present."""
    from lift.opencl_gen import runtime

    found = runtime.devices()
    if not found:
        raise CommandError(runtime.INSTALL_HINT)
    default = runtime.select_device()
    for d in found:
        mark = "*" if d.name == default.name.strip() and d.platform == default.platform.name.strip() else " "
        click.echo(f"{mark} {d.describe()}")
        click.echo(f"      {d.version}; driver {d.driver}; work-group up to {d.max_work_group_size}; "
                   f"local memory {d.local_mem_size // 1024} KiB; global memory {d.global_mem_size >> 20} MiB")
    click.echo("(* the default device; choose another with --device NAME or --device #INDEX)")


@main.command("eval")
@click.argument("program", type=click.Path(dir_okay=False))
@kernel_option
@size_option
@click.option("--seed", default=0, show_default=True, help="Seed of the random inputs.")
@reports_errors
def eval_command(program, kernel, sizes, seed):
    """Evaluate a kernel of a program file with the reference interpreter on random inputs."""
    from lift.ir.program_file import load_program_file

    pf = load_program_file(program)
    name, expr = pf.kernel(kernel)
    bound = pf.bind(parse_sizes(sizes))
    inputs = pf.inputs(name, bound, seed)
    start = time.perf_counter()
    result = lift.interpret(expr, *inputs, sizes=bound)
    elapsed = time.perf_counter() - start
    click.echo(f"{name} = {lift.paper(expr)}")
    click.echo(f"type: {lift.infer(expr).type}    sizes: {', '.join(f'{k}={v}' for k, v in bound.items())}")
    several = isinstance(result, tuple)
    for i, part in enumerate(result if several else (result,)):
        summary = np.array2string(np.asarray(part).ravel()[:8], precision=6) if part.dtype.fields is None else \
            str(part.ravel()[:4])
        label = f"result {i}" if several else "result"
        click.echo(f"{label} shape {part.shape}: {summary}{' ...' if part.size > 8 else ''}")
    click.echo(f"interpreted in {elapsed * 1e3:.1f} ms")


@main.command("compile")
@click.argument("program", type=click.Path(dir_okay=False))
@kernel_option
@size_option
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="The .cl file to write (default: KERNEL.cl); the manifest goes beside it as KERNEL.json.")
@click.option("--check/--no-check", default=True, show_default=True,
              help="Build the file with the default OpenCL device (when one is present) before writing it.")
@device_option
@reports_errors
def compile_command(program, kernel, sizes, output, check, device):
    """Write a lowered kernel as a standalone OpenCL C file and a JSON manifest."""
    from lift.ir.program_file import load_program_file
    from lift.opencl_gen import runtime
    from lift.opencl_gen.kernels import generate
    from lift.opencl_gen.manifest import write_cl

    pf = load_program_file(program)
    name, expr = pf.kernel(kernel)
    g = generate(expr, name, parse_sizes(sizes))
    if check:
        try:
            dev = runtime.select_device(device)
        except lift.LiftDeviceError:
            if device is not None:
                raise
            dev = None
        if dev is not None:
            runtime.build(g.source, dev)
    cl_path, manifest_path = write_cl(g, Path(output or f"{name}.cl"))
    click.echo(f"wrote {cl_path} ({len(g.kernels)} kernel{'s' if len(g.kernels) > 1 else ''}) and {manifest_path}")


@main.command()
@click.argument("program", type=click.Path(dir_okay=False))
@kernel_option
@device_option
@size_option
@click.option("--budget", default="10m", show_default=True, help="Time to search: 90s, 10m, 1h.")
@click.option("--max-candidates", type=click.IntRange(min=1), default=None, help="Stop after this many candidates.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Candidates built in parallel while one runs on the device.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default: lift-out/KERNEL); a re-run with the same folder resumes.")
@click.option("--baseline", default=None, help="A hand-lowered kernel of the same file, measured for comparison.")
@click.option("--plot", is_flag=True, help="Write a PNG of every candidate's throughput.")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds allowed per build and run.")
@click.option("--seed", default=0, show_default=True, help="Seed of the inputs and of the search.")
@click.option("--work-group-sizes", type=WorkGroupSizes(), default="0,1,64", show_default=True,
              help="Work-group sizes tried for kernels whose size the generator leaves to the driver "
                   "(map-global); 0 is the driver's choice.")
@reports_errors
def explore(program, kernel, device, sizes, budget, max_candidates, jobs, out_dir, baseline, plot, timeout, seed,
            work_group_sizes):
    """Search the rewrite space of a kernel for the fastest correct OpenCL kernel on a device."""
    from rich.console import Console

    from lift.explore import explore as run_explore
    from lift.explore import parse_budget
    from lift.explore.kernel_fusion import SequenceSearch, is_program_of_calls
    from lift.explore.rewrite_search import RewriteSearch
    from lift.ir.program_file import load_program_file
    from lift.opencl_gen import runtime

    budget_s = parse_budget(budget)
    runtime.select_device(device)
    pf = load_program_file(program)
    name, expr = pf.kernel(kernel)
    bound = pf.bind(parse_sizes(sizes))
    lift.infer(expr).check_sizes(bound)
    search = SequenceSearch(expr, bound) if is_program_of_calls(expr) else RewriteSearch(expr, bound, seed)
    result = run_explore(pf, name, bound, search, budget_s=budget_s, out_dir=out_dir or Path("lift-out") / name,
                         device=device, max_candidates=max_candidates, jobs=jobs, plot=plot, baseline=baseline,
                         timeout_s=timeout, seed=seed, progress=sys.stderr.isatty(),
                         work_group_sizes=work_group_sizes)
    console = Console(width=None if sys.stdout.isatty() else 160)
    console.print(result.table())
    for line in result.summary():
        console.print(line)
    if result.winner is not None and "partition" in result.winner.params:
        console.print(f"partition: {result.winner.params['partition']} (chunk {result.winner.params['chunk']}, "
                      f"{result.winner.params['kernels']} kernel groups)")


@main.command()
@reports_errors
def rules():
    """List every rewrite rule with its figure, description and equation."""
    from lift.rules import catalogue

    for r in catalogue():
        click.echo(f"{r['name']:<28} {r['figure']:<6} {r['description']}")
        click.echo(f"{'':<35}{r['equation']}")


@main.command()
@click.argument("program", type=click.Path(dir_okay=False))
@kernel_option
@click.option("--steps", "steps_file", required=True, type=click.Path(dir_okay=False),
              help="The derivation, as JSON (lift explore writes KERNEL.derivation.json).")
@click.option("--python", "as_python", is_flag=True, help="Also print the result as DSL source.")
@reports_errors
def derive(program, kernel, steps_file, as_python):
    """Replay a derivation on a kernel and print it as the paper's Figure 8."""
    from lift.ir.program_file import load_program_file
    from lift.rules import Derivation

    pf = load_program_file(program)
    _, expr = pf.kernel(kernel)
    try:
        derivation = Derivation.from_json(Path(steps_file).read_text())
    except (ValueError, KeyError, TypeError) as e:
        raise CommandError(f"{steps_file} is not a derivation: {e}") from None
    click.echo(derivation.format_figure8(expr))
    if as_python:
        click.echo(lift.python_source(derivation.replay(expr)))


if __name__ == "__main__":
    sys.exit(main())
