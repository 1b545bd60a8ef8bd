"""`proton-view [options] PROFILE.hatchet`: prints a profile tree in the terminal.

A drop-in for Triton's `proton-viewer`: the same options (-l, -m, -i, -e, -t,
-d, -f, --print-sorted, --diff-profile/-diff) and metric names, with the same
meaning, plus a few of its own (-s/--sorted, --format short, --color).

Reads `.hatchet` files as Proton's host and instrumentation sessions and
Triton's Proton write them (docs/profile-tree-format.md): `[ROOT,
{"CUDA"|"HIP": {index: device}}]` with each node's own (exclusive) metrics,
summed here into inclusive values as Triton's viewer does (frames
`__proton_launch_metadata` and empty leaves dropped); `.hatchet_msgpack`
files (the same tree as MessagePack) are read by name. (Files of an older
layout are still accepted: see parse_tree.)

Each line shows the chosen metrics of one node, then the node's name, indented
as a tree:

    $ proton-view -m time/ms,time/% run.hatchet
    time/ms   time/%  name
    10.0000  100.00%  ROOT
     8.0000   80.00%  ├─ forward
     6.0000   60.00%  │  ├─ matmul_kernel
     2.0000   20.00%  │  └─ add_kernel

Metrics (`-m`, comma separated; `--list` prints those a file has):
  time/s, time/ms, time/us, time/ns     from `time (ns)` (cpu_time/... from `cpu_time (ns)`)
  avg_time/s ... avg_time/ns            time / count (avg_cpu_time/... likewise)
  flop/s, gflop/s, tflop/s              `flops` / time (without `flops`: all flopsN summed)
  flop8/s, gflop16/s, tflop32/s ...     one precision
  byte/s, gbyte/s, tbyte/s              bytes / time
  util                                  max(sum over N of flopsN / peak flopsN, bytes / peak bandwidth) / time,
                                        peaks as in Triton's specs (CUDA sm80/89/90/100, HIP gfx90a/942/950)
  any metric stored in the file         case-insensitive, with or without its unit (`time` = `time (ns)`):
                                        count, cycles, normalized_cycles, num_samples, user metrics
  METRIC/%                              percentage of the root's value (per root)

Filters follow Triton's viewer: -i/-e match a regular expression at the start
of a node's full name (Python's re.match), -t keeps nodes whose first metric
is >= the threshold (and their ancestors), -d N shows N levels. Values are not
recomputed after filtering. With `--diff-profile OTHER` each value is this
file's minus OTHER's for the node with the same path of names (METRIC/% is
the difference of the two shares); a node in one file only shows `-`.

Errors (unreadable file, bad structure, unknown metric, a metric the file has
no data for) print one line to stderr and return exit code 2.

The module also has the Python functions of Triton's viewer (get_raw_metrics,
read, parse, derive_metrics, format_frames, filter_frames, get_min_time_flops,
get_min_time_bytes, apply_diff_profile, print_tree, show_metrics, ...), working
on hatchet GraphFrames (they need llnl-hatchet and pandas; the command does not).
The viewer lives in proton.commands.viewer.
"""

import sys

from .commands.viewer.command import main
from .commands.viewer.derived_metrics import resolve
from .commands.viewer.parsing import ViewerError, load
from .commands.viewer.printing import short_cxx_name
from .commands.viewer.triton_functions import (
    apply_diff_profile,
    avg_cpu_time_factor_dict,
    avg_time_factor_dict,
    bytes_factor_dict,
    cpu_time_factor_dict,
    derivable_metrics,
    derive_metrics,
    emit_warnings,
    FactorDict,
    filter_frames,
    format_frames,
    get_min_time_bytes,
    get_min_time_flops,
    get_raw_metrics,
    match_available_metrics,
    parse,
    print_tree,
    read,
    remove_frames,
    show_metrics,
    time_factor_dict,
)

__all__ = [
    "apply_diff_profile",
    "avg_cpu_time_factor_dict",
    "avg_time_factor_dict",
    "bytes_factor_dict",
    "cpu_time_factor_dict",
    "derivable_metrics",
    "derive_metrics",
    "emit_warnings",
    "FactorDict",
    "filter_frames",
    "format_frames",
    "get_min_time_bytes",
    "get_min_time_flops",
    "get_raw_metrics",
    "load",
    "main",
    "match_available_metrics",
    "parse",
    "print_tree",
    "read",
    "remove_frames",
    "resolve",
    "short_cxx_name",
    "show_metrics",
    "time_factor_dict",
    "ViewerError",
]

if __name__ == "__main__":
    sys.exit(main())
