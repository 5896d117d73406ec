"""The `lift` command line: devices, evaluating and compiling program files, rules, derivations, search.

Every failure the user can cause (a missing or broken program file, an unknown kernel, device or size
variable, sizes the expression cannot take, an option out of its range, click's own usage errors) prints
one line on stderr starting `error:` and exits with status 1, never a traceback (`LiftGroup`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
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


def one_line(message: str) -> str:
    """A message as one line: its first, and the first later line that says `error` (a compiler's log)."""
    lines = [l.strip() for l in str(message).strip().splitlines() if l.strip()] or ["(no message)"]
    detail = next((l for l in lines[1:] if "error" in l.lower()), lines[1] if len(lines) > 1 else None)
    return lines[0] if detail is None else f"{lines[0].rstrip(':')}: {detail}"


def reports_errors(command):
    """Turn lift's errors (and interrupted runs) into one line and a non-zero exit."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except LiftError as e:
            raise CommandError(one_line(str(e))) from None
        except BrokenPipeError:
            raise
        except MemoryError:
            raise CommandError("out of memory: the sizes are too large for this machine") from None
        except OSError as e:
            raise CommandError(f"{e.filename or ''}: {e.strerror or e}".lstrip(": ")) from None
        except KeyboardInterrupt:
            raise CommandError("interrupted") from None
    return wrapper


class LiftGroup(click.Group):
    """The `lift` group, the one handler of the error contract: every error, click's usage errors included,
    is one line on stderr starting `error:`, with exit status 1 (a closed pipe, `lift rules | head`, ends
    quietly: click's own handling). An unexpected exception is reported the same way, as an internal error
    (`LIFT_TRACEBACK=1` shows its traceback)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            status = super().main(args, prog_name or "lift", complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as e:
            click.echo(e.ctx.get_help())  # `lift` alone asks for help
            status = 0
        except click.ClickException as e:
            where = f"{e.ctx.command_path}: " if getattr(e, "ctx", None) is not None and \
                isinstance(e, click.UsageError) else ""
            click.echo(f"error: {where}{one_line(e.format_message())}", err=True)
            status = 1
        except click.Abort:
            click.echo("error: interrupted", err=True)
            status = 1
        except Exception as e:
            if os.environ.get("LIFT_TRACEBACK"):
                raise
            click.echo(f"error: internal error: {type(e).__name__}: {one_line(str(e))} "
                       "(LIFT_TRACEBACK=1 shows where; please report it)", err=True)
            status = 1
        if not standalone_mode:
            return status
        sys.exit(status if isinstance(status, int) else 0)


@contextlib.contextmanager
def native_stderr_silenced():
    """The OpenCL compiler's own messages (written straight to file descriptor 2) kept off the terminal while
    it builds: its error is in the exception, which the command reports as one line."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def path_argument(value, what: str) -> Path:
    if value is None:
        return None
    if not str(value).strip():
        raise CommandError(f"{what} is an empty path")
    return Path(value)


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
    """`--work-group-sizes 0,1,64,balanced`: distinct work-group sizes, 0 standing for the driver's choice (None) and
    `balanced` for each candidate's balanced size (`lift.explore.balanced_groups`)."""

    name = "N,N,..."

    def convert(self, value, param, ctx):
        from lift.explore.balanced_groups import BALANCED

        if isinstance(value, tuple):
            return value
        try:
            sizes = tuple(v if v == BALANCED else int(v) for v in str(value).split(","))
        except ValueError:
            self.fail(f"{value!r} is not a comma-separated list of integers or {BALANCED} such as 0,1,64,{BALANCED}",
                      param, ctx)
        if any(n != BALANCED and n < 0 for n in sizes) or len(set(sizes)) != len(sizes):
            self.fail(f"{value!r}: the sizes must be distinct and not negative (0: the driver's choice)", param, ctx)
        return tuple(None if n == 0 else n for n in sizes)


def not_nan(value: float, ctx, param) -> float:
    """`value`, unless it is NaN (which passes FloatRange, every comparison with it being false)."""
    if value != value:
        raise click.BadParameter("nan is not a number.", ctx, param)
    return value


def seed_option(help_text: str):
    return click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True, help=help_text)


def load(program, kernel, sizes) -> tuple:
    """The program file, the kernel's name and program, and its sizes with `--size` applied (names checked)."""
    from lift.ir.program_file import load_program_file

    pf = load_program_file(path_argument(program, "PROGRAM"))
    name, expr = pf.kernel(kernel)
    overrides = parse_sizes(sizes)
    pf.check_overrides(name, overrides)
    return pf, name, expr, pf.bind(overrides)


size_option = click.option("--size", "sizes", multiple=True, metavar="NAME=VALUE",
                           help="Bind a size variable (repeatable); overrides the program file's SIZES.")
kernel_option = click.option("--kernel", default=None, help="Kernel to use (default: the one named after the file).")
device_option = click.option("--device", default=None,
                             help="OpenCL device: a name substring (nvidia, intel, pocl, cpu, gpu) or #index.")


@click.group("lift", cls=LiftGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
@seed_option("Seed of the random inputs.")
@reports_errors
def eval_command(program, kernel, sizes, seed):
    """Evaluate a kernel of a program file with the reference interpreter on random inputs."""
    pf, name, expr, bound = load(program, kernel, sizes)
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
@click.option("--lowering", default=None, metavar="default|tuned|PATH",
              help="How a high-level kernel is lowered: by default the tuning database's winner for these sizes on "
                   "the device where one applies, else the default lowering; 'default'; 'tuned' (the tuning "
                   "database's winner, else the one of `lift explore` in lift-out/KERNEL); or a .derivation.json "
                   "file or its folder.")
@reports_errors
def compile_command(program, kernel, sizes, output, check, device, lowering):
    """Write a kernel as a standalone OpenCL C file and a JSON manifest (a high-level kernel lowered first)."""
    from lift.explore.tuned_compile import KnownLowerings
    from lift.opencl_gen import runtime
    from lift.opencl_gen.compiled import generate_lowered
    from lift.opencl_gen.kernels import generate
    from lift.opencl_gen.manifest import write_cl
    from lift.rules.default_lowering import LANES
    from lift.rules.lowering_choice import lowering_for

    output = path_argument(output, "-o")
    if output is not None and output.suffix == ".json":
        raise CommandError(f"-o {output}: the manifest is written beside the .cl file as NAME.json; give NAME.cl")
    pf, name, expr, bound = load(program, kernel, sizes)
    output = output or Path(f"{name}.cl")
    try:
        dev = runtime.select_device(device)
    except lift.LiftDeviceError:
        if device is not None:
            raise
        dev = None
    tuned = KnownLowerings(expr, runtime.device_label(dev)) if dev is not None else None
    width = dev.native_vector_width_float if dev is not None else LANES
    lower = lowering_for(expr, lowering, name, tuned, width)
    g = generate(expr, name, parse_sizes(sizes)) if lower is None else \
        generate_lowered(lower(bound), name, parse_sizes(sizes), dev)
    if check:
        if dev is not None:
            with native_stderr_silenced():
                runtime.build(g.source, dev)
    cl_path, manifest_path = write_cl(g, output)
    click.echo(f"wrote {cl_path} ({len(g.kernels)} kernel{'s' if len(g.kernels) > 1 else ''}) and {manifest_path}")


@main.command()
@click.argument("program", type=click.Path(dir_okay=False))
@kernel_option
@click.option("--device", "devices", multiple=True,
              help="OpenCL device: a name substring (nvidia, intel, pocl, cpu, gpu) or #index; with --cluster, "
                   "repeat it to search several devices at once (each node's matching devices).")
@size_option
@click.option("--budget", default="10m", show_default=True, help="Time to search: 90s, 10m, 1h.")
@click.option("--max-candidates", type=click.IntRange(min=1), default=None, help="Stop after this many candidates.")
@click.option("--jobs", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Candidates built in parallel while one runs on the device.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default: lift-out/KERNEL); a re-run with the same folder resumes.")
@click.option("--baseline", default=None, help="A hand-lowered kernel of the same file, measured for comparison.")
@click.option("--plot", is_flag=True, help="Write a PNG of every candidate's throughput.")
@click.option("--timeout", type=click.FloatRange(0, 86400, min_open=True), default=60.0, show_default=True,
              callback=lambda ctx, param, v: not_nan(v, ctx, param),
              help="Seconds allowed per build and run.")
@seed_option("Seed of the inputs and of the search.")
@click.option("--work-group-sizes", type=WorkGroupSizes(), default="0,1,64", show_default=True,
              help="Work-group sizes tried for kernels whose size the generator leaves to the driver "
                   "(map-global); 0 is the driver's choice, balanced each candidate's size that deals its kernels "
                   "out in many groups for the compute units to share.")
@click.option("--retry-failed", is_flag=True,
              help="Evaluate every failure in the log again (timeouts, crashes and failed launches are retried "
                   "anyway, a few times).")
@click.option("--rtol", type=click.FloatRange(min=0), default=None,
              callback=lambda ctx, param, v: not_nan(v, ctx, param),
              help="Relative tolerance of the check against the reference, times the output's magnitude "
                   "(default: the program file's TOLERANCE, else 1e-3).")
@click.option("--atol", type=click.FloatRange(min=0), default=None,
              callback=lambda ctx, param, v: not_nan(v, ctx, param),
              help="Absolute tolerance added to it (default: the program file's TOLERANCE, else 0).")
@click.option("--fp-contract", type=click.Choice(["on", "off"]), default="on", show_default=True,
              help="off: forbid the OpenCL compiler to fuse a*b+c into one multiply-add, as the reference never "
                   "does (#pragma OPENCL FP_CONTRACT OFF). Failures logged under another setting need "
                   "--retry-failed.")
@click.option("--final-top", type=click.IntRange(min=0), default=5, show_default=True,
              help="The final round times this many of the fastest candidates again, interleaved, and the median "
                   "picks the winner (0 or 1: no final round).")
@click.option("--final-rounds", type=click.IntRange(min=1), default=5, show_default=True,
              help="Rounds of the final round (each candidate evaluated once per round).")
@click.option("--cluster", default=None, metavar="auto|ray://HOST:PORT|HOST:PORT",
              help="Search on the devices of a Ray cluster (pip install 'lift[cluster]'): auto is the cluster this "
                   "machine runs; each device label gets its own search and folder OUT/LABEL.")
@reports_errors
def explore(program, kernel, devices, sizes, budget, max_candidates, jobs, out_dir, baseline, plot, timeout, seed,
            work_group_sizes, retry_failed, rtol, atol, fp_contract, final_top, final_rounds, cluster):
    """Search the rewrite space of a kernel for the fastest correct OpenCL kernel on a device (or on the devices
    of a Ray cluster)."""
    from rich.console import Console

    from lift.explore import explore as run_explore
    from lift.explore import parse_budget
    from lift.explore.final_round import FinalRound
    from lift.explore.search_strategy import search_for
    from lift.opencl_gen import runtime

    budget_s = parse_budget(budget)
    out_dir = path_argument(out_dir, "--out")
    if plot and importlib.util.find_spec("matplotlib") is None:
        raise CommandError("--plot needs matplotlib: pip install matplotlib (or lift's [bench] extra)")
    pf, name, expr, bound = load(program, kernel, sizes)
    lift.infer(expr).check_sizes(bound)
    if baseline is not None:
        pf.kernel(baseline)
    if len(devices) > 1 and cluster is None:
        raise CommandError("several --device need --cluster (a local search runs on one device)")

    def search():
        return search_for(expr, bound, seed)

    options = dict(budget_s=budget_s, out_dir=out_dir or Path("lift-out") / name, max_candidates=max_candidates,
                    jobs=jobs, plot=plot, baseline=baseline, timeout_s=timeout, seed=seed,
                    work_group_sizes=work_group_sizes, retry_failed=retry_failed, rtol=rtol, atol=atol,
                    fp_contract=fp_contract == "on", final=FinalRound(final_top, final_rounds))
    if cluster is None:
        device = devices[0] if devices else None
        runtime.select_device(device)
        results = [run_explore(pf, name, bound, search(), device=device, progress=sys.stderr.isatty(), **options)]
    else:
        from lift.explore.cluster import explore_cluster

        results = explore_cluster(pf, name, bound, search, cluster=cluster, devices=devices, **options)
    console = Console(width=None if sys.stdout.isatty() else 160)
    for result in results:
        console.print(result.table())
        for line in result.summary():
            console.print(line)
        if result.winner is not None and "partition" in result.winner.params:
            console.print(f"partition: {result.winner.params['partition']} (chunk {result.winner.params['chunk']}, "
                          f"{result.winner.params['kernels']} kernel groups)")
    failed = [r for r in results if r.winner is None]
    if failed:
        raise CommandError(f"no candidate of {name} worked ({sum(len(r.ranked) for r in failed)} failed on "
                           f"{', '.join(r.device for r in failed)}; see the table's caption and "
                           f"{', '.join(str(Path(r.out_dir) / 'log.jsonl') for r in failed)})")


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
    from lift.rules import Derivation

    steps_path = path_argument(steps_file, "--steps")
    pf, name, expr, _ = load(program, kernel, ())
    text = steps_path.read_text()
    try:
        derivation = Derivation.from_json(text)
        recorded = json.loads(text)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise CommandError(f"{steps_path} is not a derivation: {one_line(str(e))}") from None
    if isinstance(recorded, dict) and recorded.get("kernel", name) != name:
        raise CommandError(f"{steps_path} is a derivation of kernel {recorded['kernel']!r}, not of {name!r} "
                           f"(choose the kernel with --kernel)")
    click.echo(derivation.format_figure8(expr))
    if as_python:
        click.echo(lift.python_source(derivation.replay(expr)))


@main.group()
def tuning():
    """The tuning database: every candidate `lift explore` measured, kept per user (LIFT_TUNING_DB moves it)."""


@tuning.command("show")
@click.argument("program", type=click.Path(dir_okay=False), required=False)
@kernel_option
@size_option
@reports_errors
def tuning_show(program, kernel, sizes):
    """Where the database is and what it holds: each program's records, devices and best times (of PROGRAM's
    kernel alone where given)."""
    from lift.explore.candidate import program_key
    from lift.explore.tuning_database import TuningDatabase

    store = TuningDatabase()
    if not store.enabled:
        click.echo("the tuning database is turned off (LIFT_TUNING_DB=off)")
        return
    click.echo(f"tuning database: {store.root}")
    chosen = store.programs()
    if program is not None:
        _, _, expr, _ = load(program, kernel, sizes)
        chosen = [h for h in chosen if h == program_key(expr)]
    for h in chosen:
        records = list(store.records(h))
        problems = {}
        for r in records:
            best = problems.get((r.kernel, r.device, tuple(sorted(r.sizes.items()))))
            if r.ok and (best is None or r.time_ms < best):
                best = r.time_ms
            problems[(r.kernel, r.device, tuple(sorted(r.sizes.items())))] = best
        click.echo(f"{h}: {len(records)} records")
        for (name, device, bound), best in sorted(problems.items(), key=str):
            shown = "no working candidate" if best is None else f"best {best:.4g} ms"
            click.echo(f"  {name} ({', '.join(f'{k}={v}' for k, v in bound)}) on {device}: {shown}")


@tuning.command("export")
@click.argument("program", type=click.Path(dir_okay=False))
@kernel_option
@size_option
@device_option
@click.option("--format", "form", type=click.Choice(["jsonl", "kernel_tuner"]), default="jsonl", show_default=True,
              help="The database's JSON lines (the log's schema), or a kernel_tuner cache file (one device and "
                   "sizes).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="The file to write.")
@reports_errors
def tuning_export(program, kernel, sizes, device, form, output):
    """Write a kernel's records from the tuning database to a file."""
    from lift.explore.candidate import program_key
    from lift.explore.tuning_database import TuningDatabase
    from lift.files import write_text
    from lift.opencl_gen import runtime

    _, name, expr, bound = load(program, kernel, sizes)
    label = runtime.device_label(runtime.select_device(device)) if device is not None or form == "kernel_tuner" \
        else None
    try:
        text = TuningDatabase().export(program_key(expr), label, bound if form == "kernel_tuner" or sizes else None,
                                       form)
    except ValueError as e:
        raise CommandError(f"{name}: {e}") from None
    if not text:
        raise CommandError(f"the tuning database holds no record of kernel {name!r} with these sizes and device "
                           f"(run `lift explore` on it first)")
    click.echo(f"wrote {write_text(path_argument(output, '-o'), text)}")


if __name__ == "__main__":
    sys.exit(main())
