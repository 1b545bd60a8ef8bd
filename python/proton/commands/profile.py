"""`proton-profile [options] TARGET...`: runs a Python program under the profiler.

    proton-profile [options] script.py args...     runs the script as __main__
    proton-profile [options] --module mod args...  runs the module as __main__ (like python -m)
    proton-profile [options] pytest args...        runs pytest.main(args) in this process

The profiler is started with proton.start(NAME, **options) before the target
runs, and proton.finalize() is called after it, also when it raises or exits.
Only the options given are passed on, so the library's defaults apply to the
others. The target's exit code is returned (SystemExit(n) gives n, an uncaught
exception prints its traceback and gives 1); the profiler's errors print one
line `proton-profile: <message>` and give 2.

Options go before the target; everything after it is the target's own.
They are those of Triton's `proton` command (-n/--name, -b/--backend,
-c/--context, -d/--data, -k/--hook, -m/--mode): as there, `-m` is the mode,
so a module is run with `--module`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import runpy
import sys
import traceback
from pathlib import Path

PROG = "proton-profile"
VALUE_OPTIONS = {"--name", "--backend", "--context", "--data", "--hook", "--mode", "-n", "-b", "-c", "-d", "-k", "-m"}
START_OPTIONS = ("backend", "context", "data", "hook", "mode")


class UsageError(Exception):
    """A command line that names no target; one line for the user."""


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        usage=f"{PROG} [options] (script.py | --module module | pytest) [args...]",
        description="Run a Python script, module or pytest under the Proton profiler "
        "(the options of Triton's `proton` command).",
    )
    p.add_argument(
        "-n",
        "--name",
        help="session name, the outputs' file stem (default: the script's stem, "
        "the module's last component, or 'pytest')",
    )
    p.add_argument(
        "-b",
        "--backend",
        choices=["instrumentation", "cupti", "rocprofiler", "roctracer", "host"],
        help="profiling backend (default: the library's)",
    )
    p.add_argument(
        "-c",
        "--context",
        choices=["shadow", "python"],
        help="calling context of kernels: proton.scope nesting (shadow) or Python frames (python)",
    )
    p.add_argument("-d", "--data", choices=["tree", "trace"], help="what the session records")
    p.add_argument("-k", "--hook", choices=["triton"], help="read flops/bytes from Triton kernels' launch_metadata")
    p.add_argument("-m", "--mode", help="backend mode string, e.g. pcsampling or default:optimizations=clock32")
    p.add_argument(
        "--module",
        metavar="MODULE",
        help="run a module as __main__, like python -m (the words after it are its arguments)",
    )
    p.add_argument("target", nargs=argparse.REMAINDER, help="script.py args... | pytest args...")
    return p


def split_argv(argv: list[str]) -> tuple[list[str], str, str, list[str]]:
    """(this program's options, kind of target, target, the target's arguments)."""
    own = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            i += 1
            break
        if word == "--module" or word.startswith("--module="):
            module = word[9:] if "=" in word else (argv[i + 1] if i + 1 < len(argv) else "")
            if not module:
                raise UsageError("--module needs a module name")
            return own, "module", module, argv[i + (1 if "=" in word else 2) :]
        if word.split("=", 1)[0] in VALUE_OPTIONS and "=" not in word:
            own += argv[i : i + 2]
            i += 2
            continue
        if word.startswith("-"):
            own.append(word)  # --opt=value, --help, or unknown: argparse judges
            i += 1
            continue
        break
    if i >= len(argv):
        if any(w in ("-h", "--help") for w in own):
            return own, "", "", []
        raise UsageError("no target: give script.py, --module module or pytest, then its arguments")
    target = argv[i]
    return own, ("pytest" if os.path.basename(target) == "pytest" else "script"), target, argv[i + 1 :]


def default_name(kind: str, target: str) -> str:
    if kind == "pytest":
        return "pytest"
    if kind == "module":
        return target.rsplit(".", 1)[-1]
    return Path(target).stem


def check_target(kind: str, target: str) -> None:
    if kind == "script" and not Path(target).is_file():
        raise UsageError(f"{target}: no such file")
    if kind == "module":
        sys.path.insert(0, os.getcwd())
        try:
            found = importlib.util.find_spec(target) is not None
        except (ImportError, ValueError):
            found = False
        finally:
            sys.path.pop(0)
        if not found:
            raise UsageError(f"no module named {target!r}")


def exit_code(code) -> int:
    """What Python exits with for SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run_target(kind: str, target: str, args: list[str]) -> int:
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    try:
        if kind == "pytest":
            import pytest

            sys.argv = ["pytest", *args]
            return int(pytest.main(args))
        sys.argv = [target, *args]
        if kind == "module":
            sys.path.insert(0, os.getcwd())
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, str(Path(target).resolve().parent))
            runpy.run_path(target, run_name="__main__")
        return 0
    except SystemExit as e:
        return exit_code(e.code)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path


def profile(args, kind: str, target: str, target_args: list[str]) -> int:
    from ..contract.errors import ProfilerError
    from ..profiling import api
    from ..session.modes import ModeError

    kwargs = {key: getattr(args, key) for key in START_OPTIONS if getattr(args, key) is not None}
    try:
        session = api.start(args.name or default_name(kind, target), **kwargs)
    except (ProfilerError, ModeError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    code = 1
    # As in Triton's Proton, the script's own start/finalize calls are ignored.
    api.run_from_command_line(session)
    try:
        code = run_target(kind, target, target_args)
    finally:
        api.run_from_command_line(None)
        try:
            api.finalize()
        except ProfilerError as e:
            print(f"{PROG}: {e}", file=sys.stderr)
            code = code or 2
    return code


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = make_parser()
    try:
        own, kind, target, target_args = split_argv(argv)
        args = parser.parse_args(own)
        check_target(kind, target)
    except SystemExit as e:  # --help, or a usage error argparse has printed
        return exit_code(e.code)
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    try:
        return profile(args, kind, target, target_args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
