"""Console entry points for the binaries shipped inside the package."""

import os
import sys
from pathlib import Path

from . import standard_output


def _binary(name: str) -> Path:
    path = Path(__file__).resolve().parents[1] / "bin" / name  # proton/bin, beside proton/commands
    if not path.exists():
        sys.exit(f"{name} is not installed at {path}; reinstall the proton-profiler package")
    return path


def proton_opt() -> None:
    """`proton-opt`: MLIR's optimizer driver with Proton's dialects and passes."""
    binary = _binary("proton-opt")
    os.execv(binary, [str(binary), *sys.argv[1:]])


def _run(prog: str, main) -> None:
    """Runs a command's main: expected failures are its own one-line
    errors (exit status 2), as is a standard output that cannot be written
    (standard_output; a reader that left at the end, as `| head` does, is
    no error); anything else is a bug, shown with its traceback and a line
    asking to report it (exit status 1)."""
    standard_output.install()
    try:
        status = main()
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception:  # noqa: BLE001 - see above
        if standard_output.failed() is None:
            import traceback

            traceback.print_exc()
            print(
                f"{prog}: this is a bug in Proton; please report it with the command line and inputs",
                file=sys.stderr,
            )
            sys.exit(1)
        status = None
    if standard_output.failed() is None:
        try:
            sys.stdout.flush()
        except OSError:
            pass  # the guard holds the error
    failure = standard_output.failed()
    if failure is not None:
        if status is None or (status == 0 and not isinstance(failure, BrokenPipeError)):
            status = standard_output.report(prog)
        else:
            standard_output.silence()
    standard_output.restore()
    sys.exit(status)


def insert_proton_records() -> None:
    """`insert_proton_records`: insert proton.record scopes into dumped TTGIR."""
    from .insert_proton_records import main

    _run("insert_proton_records", main)


def dump_ttgir() -> None:
    """`proton-dump-ttgir`: run a command and keep the TTGIR Triton compiles."""
    from .dump_ttgir import main

    _run("proton-dump-ttgir", main)


def merge_traces() -> None:
    """`proton-merge-traces`: one Perfetto file from per-GPU traces."""
    from .merge_traces import main

    _run("proton-merge-traces", main)


def view() -> None:
    """`proton-view`: print a profile tree in the terminal."""
    from .viewer.command import main

    _run("proton-view", main)


def profile_command() -> None:
    """`proton-profile`: run a script, module or pytest under the profiler."""
    from .profile import main

    sys.exit(main())
