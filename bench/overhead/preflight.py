"""The preflight: every instrumented kernel compiles and launches once in a
child process first, so that a hard abort (LLVM ERROR, segfault) marks only
that kernel of that variant failed instead of killing the benchmark. The
child is bench/bench_overhead.py itself, run with the hidden `--_preflight`
option."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

from . import MAIN_SCRIPT
from .cases import make_case
from .config import COMPILE_KERNELS, DEVICE_CASES
from .profilers import Sessions
from .util import err_str


def run_preflight(bench):
    """Compiles and launches every instrumented kernel once in a child
    process, so that a hard abort (LLVM ERROR, segfault) only marks that
    (variant, kernel) failed instead of killing this process."""
    kernels_needed = []
    if "device" in bench.args.only:
        kernels_needed += [DEVICE_CASES[c][0] for c in bench.args.cases]
    if "dobench" in bench.args.only:
        kernels_needed.append("vector_add")
    if "compile" in bench.args.only:
        kernels_needed += list(COMPILE_KERNELS)
    kernels_needed = list(dict.fromkeys(kernels_needed))
    env = dict(os.environ, TRITON_CACHE_DIR=bench.cache_dir)
    for variant in bench.args.variants:
        if variant == "plain" or not kernels_needed:
            continue
        log = bench.results["preflight"][variant] = {}
        remaining = list(kernels_needed)
        while remaining:
            cmd = [
                sys.executable,
                MAIN_SCRIPT,
                "--_preflight",
                variant,
                "--_preflight-kernels",
                ",".join(remaining),
            ]
            if bench.args.max_launches is not None:
                cmd += ["--max-launches", str(bench.args.max_launches)]
            if bench.args.proton_mode is not None:
                cmd += ["--proton-mode", bench.args.proton_mode]
            if bench.args.reference_mode is not None:
                cmd += ["--reference-mode", bench.args.reference_mode]
            print(f"  preflight {variant}: {', '.join(remaining)}", flush=True)
            timed_out = False
            try:
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
                stdout, stderr, rc = proc.stdout, proc.stderr, proc.returncode
            except subprocess.TimeoutExpired as exc:
                stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
                stderr = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
                rc, timed_out = None, True
            begun, finished = [], set()
            for line in stdout.splitlines():
                parts = line.split(" ", 2)
                if parts[0] == "PREFLIGHT-BEGIN":
                    begun.append(parts[1])
                elif parts[0] in ("PREFLIGHT-OK", "PREFLIGHT-EXC"):
                    finished.add(parts[1])
                    log[parts[1]] = (
                        "ok"
                        if parts[0] == "PREFLIGHT-OK"
                        else (
                            "python error (recorded again by the measurement): " + (parts[2] if len(parts) > 2 else "")
                        )
                    )
            if rc == 0 and not timed_out:
                break
            inflight = begun[-1] if begun and begun[-1] not in finished else None
            tail = " | ".join((stderr or "").strip().splitlines()[-6:])[-1500:]
            if timed_out:
                why = "timed out after 600 s"
            elif rc is not None and rc < 0:
                try:
                    why = f"killed by {signal.Signals(-rc).name}"
                except ValueError:
                    why = f"killed by signal {-rc}"
            else:
                why = f"exit status {rc}"
            if inflight is None:
                # Died outside a kernel (start-up, import): mark all remaining.
                for k in remaining:
                    if k not in finished:
                        bench.crashed[(variant, k)] = f"{why}: {tail}"
                        log[k] = f"child died before/after this kernel: {why}: {tail}"
                break
            bench.crashed[(variant, inflight)] = f"{why}: {tail}"
            log[inflight] = f"child died: {why}: {tail}"
            print(f"    ! preflight {variant}/{inflight}: {why}: {tail[-300:]}")
            remaining = remaining[remaining.index(inflight) + 1 :]


def preflight_child(args):
    """Compiles + launches each kernel once under the variant's session and
    prints PREFLIGHT-BEGIN/OK/EXC lines; a hard abort shows as a BEGIN without
    an end. Small problem sizes: same specializations as the real ones."""
    import torch
    import kernels

    variant = args._preflight
    trace_dir = tempfile.mkdtemp(prefix="proton-bench-preflight-")
    args.keep_traces = False
    sessions = Sessions(args, trace_dir)
    try:
        for key in [k for k in args._preflight_kernels.split(",") if k]:
            print(f"PREFLIGHT-BEGIN {key}", flush=True)
            try:
                case = make_case(key, small=True)
                info = {}
                with sessions.session(variant, f"preflight_{key}", info, data="tree"):
                    case.launch(kernels.build(case.template, variant, case.tag), case.output())
                    torch.cuda.synchronize()
                print(f"PREFLIGHT-OK {key}", flush=True)
            except Exception as exc:  # noqa: BLE001
                print(f"PREFLIGHT-EXC {key} {err_str(exc).splitlines()[0][:500]}", flush=True)
    finally:
        shutil.rmtree(trace_dir, ignore_errors=True)
    return 0
