"""`proton-view`'s command line (proton.viewer's documentation says what it
shows): options, the run that reads, derives, filters and prints, and the
one-line errors of expected failures; deep trees run in a thread with a
deep stack."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys

from ...writers.files import STDOUT
from .derived_metrics import default_metric, describe, parse_metrics, resolve
from .diff import diff_rows
from .parsing import Profile, ViewerError, load
from .printing import FORMATS, Row, build_rows, exclude, include, render, sort_rows, sorted_lines, threshold

PROG = "proton-view"

METRICS_HELP = """comma-separated metrics (default: time/s for host profiles, cycles for
intra-kernel trees). Names are Triton's viewer's:
- time/s, time/ms, time/us, time/ns: time (cpu_time/... likewise)
- avg_time/s, avg_time/ms, avg_time/us, avg_time/ns: time / count
- flop[8|16|32|64]/s, gflop[...]/s, tflop[...]/s: flops / time
- byte/s, gbyte/s, tbyte/s: bytes / time
- util: max(sum(flops<width>) / peak flops<width>, bytes / peak bandwidth) / time
- any metric in the file, case-insensitive, with or without its unit
  (time = time (ns), count, cycles, normalized_cycles, ...)
- <metric>/%%: the node's share of the root's value"""


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        formatter_class=argparse.RawTextHelpFormatter,
        description="Print a Proton profile tree (.hatchet) in the terminal; accepts Triton's proton-viewer options.",
    )
    p.add_argument(
        "profile",
        help="a .hatchet file written by Proton or by Triton's Proton\n"
        "(with --timeline: an intra-kernel .chrome_trace)",
    )
    p.add_argument("-l", "--list", action="store_true", help="print the metrics available in the file and exit")
    p.add_argument("-m", "--metrics", help=METRICS_HELP)
    p.add_argument(
        "-i",
        "--include",
        metavar="REGEX",
        help="keep the paths through nodes whose name matches (re.match: from the start\n"
        "of the full name), with the nodes' ancestors and descendants",
    )
    p.add_argument(
        "-e", "--exclude", metavar="REGEX", help="drop nodes whose name matches (re.match), with their subtrees"
    )
    p.add_argument(
        "-t",
        "--threshold",
        type=float,
        metavar="T",
        help="keep nodes whose first metric is >= T (in its unit), and their ancestors",
    )
    p.add_argument("-d", "--depth", type=int, metavar="N", help="show N levels of the tree (1: the roots only)")
    p.add_argument(
        "-f",
        "--format",
        choices=FORMATS,
        default="full",
        help="names of Python frames (file:line@function):\n"
        "- full (default): as recorded, with the path\n"
        "- file_function_line: file name, line and function\n"
        "- function_line: line@function\n"
        "- file_function: file@function\n"
        "- short: frames without directories, C++ kernel names without\n"
        "  templates and parameters",
    )
    p.add_argument(
        "--print-sorted",
        action="store_true",
        help="after the tree, list the nodes sorted by the first metric, largest first",
    )
    p.add_argument(
        "-s", "--sorted", action="store_true", help="sort each node's children by the first metric, largest first"
    )
    p.add_argument(
        "--diff-profile", "-diff", metavar="OTHER", help="show this profile's values minus OTHER's, node by node"
    )
    timeline = p.add_argument_group("a picture of one launch, from an intra-kernel .chrome_trace")
    timeline.add_argument(
        "--timeline",
        metavar="OUT.svg",
        help="draw one launch as SVG: a row per warp, a bar per scope ('-': to standard output)",
    )
    timeline.add_argument("--launch", metavar="'KERNEL #N'", help="the launch to draw (default: the first)")
    timeline.add_argument("--ctas", metavar="0-3,7", help="the CTAs to draw (default: all, sampled past 96 warps)")
    timeline.add_argument("--warps", metavar="0,4", help="the warps of each CTA to draw (default: all)")
    colors = p.add_mutually_exclusive_group()
    colors.add_argument("--color", dest="color", action="store_true", default=None, help="always use ANSI colours")
    colors.add_argument("--no-color", dest="color", action="store_false", help="never use ANSI colours")
    return p


def _compile(pattern: str, option: str):
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ViewerError(f"{option}: invalid regular expression {pattern!r}: {e}") from None


def _use_color(choice) -> bool:
    if choice is not None:
        return choice
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def print_list(profile: Profile) -> None:
    raw = sorted({name.split("(")[0].strip().lower() for name in profile.metric_names})
    print("Available inclusive metrics:")
    for name in raw:
        print(f"- {name}")
    entries = [(n, t) for n, t in describe(profile) if n not in profile.metric_names]
    print("Derived metrics (any metric also as METRIC/%, the share of the root):")
    width = max([len(name) for name, _ in entries], default=0)
    for name, text in entries:
        print(f"- {name.ljust(width)}  {text}")


def _rows_for(profile: Profile, metrics: list, fmt: str, limit) -> list[Row]:
    roots = build_rows(profile, metrics, [resolve(m.base, profile) for m in metrics], fmt)
    return roots if limit is None else threshold(roots, limit)


def run(args) -> int:
    if args.timeline:
        from ...writers import timeline_svg

        try:
            path = timeline_svg.write(args.profile, args.timeline, launch=args.launch, ctas=args.ctas, warps=args.warps)
        except timeline_svg.TimelineError as e:
            raise ViewerError(f"{args.profile}: {e}") from None
        except OSError as e:
            where = "standard output" if args.timeline == STDOUT else args.timeline
            raise ViewerError(f"{where}: cannot write: {e.strerror or e}") from None
        if path != STDOUT:  # on standard output, the picture is all that goes there
            print(f"wrote {path}")
        return 0
    profile = load(args.profile)
    if args.list:
        print_list(profile)
        return 0
    metrics = parse_metrics(args.metrics or default_metric(profile))
    include_re = _compile(args.include, "--include") if args.include else None
    exclude_re = _compile(args.exclude, "--exclude") if args.exclude else None
    if args.depth is not None and args.depth < 1:
        raise ViewerError(f"--depth must be >= 1, got {args.depth}")
    roots = _rows_for(profile, metrics, args.format, args.threshold)
    if args.diff_profile:
        other = load(args.diff_profile)
        roots = diff_rows(roots, _rows_for(other, metrics, args.format, args.threshold), len(metrics))
    if exclude_re:
        roots = exclude(roots, exclude_re)
    if include_re:
        roots = include(roots, include_re)
    if args.sorted:
        for root in roots:
            sort_rows(root)
    if not roots:
        print(f"{PROG}: no nodes left after --include/--exclude/--threshold", file=sys.stderr)
        return 0
    if args.diff_profile:
        print(f"# {profile.path} minus {args.diff_profile}")
    depth = None if args.depth is None else args.depth - 1
    print("\n".join(render(roots, metrics, depth, _use_color(args.color), bool(args.diff_profile))))
    if args.print_sorted:
        print()
        print("\n".join(sorted_lines(roots, metrics[0].name)))
    return 0


#: The viewer walks trees recursively, in a thread with this much stack and
#: recursion limit: a tree's depth is then limited by memory (about 100,000
#: levels), not by Python's default limit of about 1,000.
DEEP_STACK_BYTES = 1 << 30
DEEP_RECURSION_LIMIT = 400_000


def main(argv=None) -> int:
    try:
        args = make_parser().parse_args(argv)
    except SystemExit as e:  # --help, or a usage error argparse has printed
        return e.code if isinstance(e.code, int) else 2
    if args.threshold is not None and not math.isfinite(args.threshold):
        print(f"{PROG}: --threshold must be a finite number, got {args.threshold}", file=sys.stderr)
        return 2
    return _with_deep_stack(lambda: _run_reporting(args))


def _with_deep_stack(work):
    """Runs `work` in a thread with a deep stack: the largest of 1 GiB, 256
    and 64 MiB that the process may reserve (a memory limit, `ulimit -v`,
    can refuse the first), with a recursion limit in proportion; in this
    thread, as Python's defaults allow, where none can be had."""
    import threading

    result = []
    previous_stack, previous_limit = threading.stack_size(), sys.getrecursionlimit()
    try:
        for stack in (DEEP_STACK_BYTES, DEEP_STACK_BYTES >> 2, DEEP_STACK_BYTES >> 4):
            threading.stack_size(stack)
            sys.setrecursionlimit(max(previous_limit, DEEP_RECURSION_LIMIT * stack // DEEP_STACK_BYTES))
            thread = threading.Thread(target=lambda: result.append(_reporting_bugs(work)), name="proton-view")
            try:
                thread.start()
            except RuntimeError:  # "can't start new thread": no room for this stack
                continue
            thread.join()
            break
        else:
            sys.setrecursionlimit(previous_limit)
            result.append(_reporting_bugs(work))
    finally:
        threading.stack_size(previous_stack)
        sys.setrecursionlimit(previous_limit)
    return result[0] if result else 2


def _reporting_bugs(work) -> int:
    """An unexpected exception is a bug: its traceback, and a line asking to
    report it (exit status 1); expected failures never come here."""
    from .. import standard_output

    try:
        return work()
    except Exception:  # noqa: BLE001 - see above
        if standard_output.failed() is not None:  # proton-view's own standard output: no bug
            return standard_output.report(PROG)
        import traceback

        traceback.print_exc()
        print(f"{PROG}: this is a bug in Proton; please report it with the command line and the file", file=sys.stderr)
        return 1


def _run_reporting(args) -> int:
    which = args.profile + (f" or {args.diff_profile}" if args.diff_profile else "")
    try:
        return run(args)
    except ViewerError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except RecursionError:
        print(f"{PROG}: {which}: the tree is too deep to show", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{PROG}: {which}: not enough memory to show the tree", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
