#!/usr/bin/env python3
"""Proton overhead benchmark: plain vs proton vs Triton's built-in instrumentation.

Runs in one process, on the same kernels (bench/kernels.py), three variants:

    plain      no profiling (the kernels' markers are no-op builtins)
    proton     this project: proton.start(backend="instrumentation") ... proton.finalize()
    reference  Triton 3.6's own: triton.profiler.start(backend="instrumentation") ... finalize()

and measures
    device   CUPTI kernel durations (torch.profiler) of vector add 1M / 64M, a
             4096^3 fp16 matmul (one outer scope / one scope in the K loop), a fused
             row softmax (4096 x 4096 fp32) and a flash-attention forward
             (4 x 32 heads x 4096 x 64 fp16; scopes per KV block)
    dobench  wall time of a whole profiling session around a do_bench-style run of
             vector add 1M (start -> launches -> finalize), and the trace files' sizes
    compile  cold compile time (fresh Triton cache directory per compile)

Results: <out>/overhead_<gpu-slug>.json and .md (see bench/README.md).
Without a GPU it prints why and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import glob
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

SECTIONS = ("device", "dobench", "compile")
ALL_VARIANTS = ("plain", "proton", "reference")

#: The issue's targets (proton vs plain).
TARGETS = {
    "device:vector_add_1m": ("<=", 1.10),
    "device:vector_add_64m": ("<=", 1.05),
    "device:matmul_outer": ("<=", 1.02),
    "device:matmul_kloop": ("<=", 1.06),
    "device:softmax": ("<=", 1.10),  # informative
    "device:attention_fwd": ("<=", 1.10),  # informative
    "dobench:session": ("<=", 3.0),
    "dobench:trace_size": (">=", 5.0),
    "compile": ("<=", 1.3),
}

#: Device-time cases: key -> (kernel key, description).
DEVICE_CASES = {
    "vector_add_1m": ("vector_add", "vector add, 1M fp32, 3 scopes"),
    "vector_add_64m": ("vector_add", "vector add, 64M fp32, 3 scopes"),
    "matmul_outer": ("matmul_outer", "matmul 4096^3 fp16, one outer scope"),
    "matmul_kloop": ("matmul_kloop", "matmul 4096^3 fp16, scope around tl.dot in the K loop"),
    "softmax": ("softmax", "fused row softmax 4096x4096 fp32, one scope (max, exp, sum, divide)"),
    "attention_fwd": ("attention_fwd", "flash attention fwd 4x32x4096x64 fp16, scopes per KV block: "
                      "kv_block > softmax"),
}
COMPILE_KERNELS = ("vector_add", "matmul_outer", "matmul_kloop", "softmax", "attention_fwd")

CLOCK_RE = re.compile(r"%clock(?:64)?\b")
GLOBALTIMER_RE = re.compile(r"%globaltimer")


# --------------------------------------------------------------------------- arguments

def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description="Proton overhead benchmark (plain vs proton vs Triton's instrumentation), GPU only.")
    p.add_argument("--only", action="append", choices=SECTIONS,
                   help="run only this measurement (repeatable); default: all")
    p.add_argument("--quick", action="store_true", help="small counts for a smoke run")
    p.add_argument("--out", default=os.path.join(HERE, "results"), help="results folder (default: bench/results)")
    p.add_argument("--variants", default=",".join(ALL_VARIANTS),
                   help="comma-separated subset of plain,proton,reference (ratios need plain)")
    p.add_argument("--cases", default=",".join(DEVICE_CASES),
                   help="comma-separated subset of the device cases: " + ",".join(DEVICE_CASES))
    p.add_argument("--proton-mode", default=None,
                   help="mode for proton.start (e.g. 'default:optimizations=clock32'); default: proton's default")
    p.add_argument("--reference-mode", default=None,
                   help="mode for triton.profiler.start (e.g. 'default:optimizations=clock32'); default: Triton's")
    p.add_argument("--max-launches", type=int, default=1, help="proton max_launches_per_kernel (default 1, proton's default: the last launch of each kernel)")
    p.add_argument("--reference-device-data", default="tree", choices=("tree", "trace"),
                   help="triton.profiler data= for the device and compile sessions (default tree: the "
                        "device-side code does not depend on it and a trace of 100 64M launches is huge)")
    p.add_argument("--reference-dobench-data", default="trace", choices=("tree", "trace"),
                   help="triton.profiler data= for the do_bench session (default trace: writes a Chrome trace)")
    p.add_argument("--dobench-reps", type=int, default=None, help="timed repetitions (default 300, quick 30)")
    p.add_argument("--dobench-warmup-ms", type=float, default=None, help="do_bench warmup= in ms (default 25)")
    p.add_argument("--compile-reps", type=int, default=None, help="cold compiles per kernel and variant (default 3)")
    p.add_argument("--trace-dir", default=None, help="where sessions write traces (default: a temporary folder)")
    p.add_argument("--keep-traces", action="store_true", help="keep trace files (default: size them, then delete)")
    p.add_argument("--reuse-cache", action="store_true",
                   help="use the normal Triton cache dir (default: a fresh one for this run)")
    p.add_argument("--no-preflight", action="store_true",
                   help="skip compiling+launching each instrumented kernel once in a child process first "
                        "(that guards this process against hard aborts such as 'LLVM ERROR')")
    # Internal: the preflight child.
    p.add_argument("--_preflight", default=None, help=argparse.SUPPRESS)
    p.add_argument("--_preflight-kernels", default="", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.only = tuple(dict.fromkeys(args.only)) if args.only else SECTIONS
    args.variants = tuple(v for v in ALL_VARIANTS if v in {x.strip() for x in args.variants.split(",") if x.strip()})
    bad = {x.strip() for x in args.cases.split(",") if x.strip()} - set(DEVICE_CASES)
    if bad:
        p.error(f"unknown --cases {sorted(bad)}; choose from {list(DEVICE_CASES)}")
    args.cases = tuple(c for c in DEVICE_CASES if c in {x.strip() for x in args.cases.split(",")})
    q = args.quick
    args.device_counts = {  # case key prefix -> (warm-up launches after the compiling one, measured launches)
        "vector_add": (3, 10) if q else (10, 100),
        "matmul": (2, 5) if q else (5, 20),
        "softmax": (3, 10) if q else (10, 100),
        "attention_fwd": (2, 5) if q else (5, 20),
    }
    if args.dobench_reps is None:
        args.dobench_reps = 30 if q else 300
    if args.dobench_warmup_ms is None:
        args.dobench_warmup_ms = 2.0 if q else 25.0
    if args.compile_reps is None:
        args.compile_reps = 1 if q else 3
    return args


def gpu_status():
    """(available, reason or device name)."""
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - any import failure means no usable GPU stack
        return False, f"torch is not importable ({type(exc).__name__}: {exc})"
    try:
        if not torch.cuda.is_available():
            return False, "torch.cuda.is_available() is False"
        return True, torch.cuda.get_device_name(0)
    except Exception as exc:  # noqa: BLE001
        return False, f"CUDA query failed ({type(exc).__name__}: {exc})"


# --------------------------------------------------------------------------- small helpers

def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "gpu"


def err_str(exc):
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 2000 else text[:2000] + " ..."


def median(xs):
    return statistics.median(xs) if xs else None


def mean(xs):
    return statistics.fmean(xs) if xs else None


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def git_commit():
    try:
        out = subprocess.run(["git", "-C", HERE, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", HERE, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        if out.returncode == 0:
            return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except Exception:  # noqa: BLE001
        pass
    return None


def ptx_info(compiled):
    ptx = compiled.asm.get("ptx", "") if hasattr(compiled.asm, "get") else compiled.asm["ptx"]
    meta = compiled.metadata
    return {
        "kernel_name": compiled.name,
        "ptx_clock_reads": len(CLOCK_RE.findall(ptx)),
        "ptx_globaltimer_reads": len(GLOBALTIMER_RE.findall(ptx)),
        "profile_scratch_size": getattr(meta, "profile_scratch_size", None),
        "shared": getattr(meta, "shared", None),
        "num_warps": getattr(meta, "num_warps", None),
        "num_stages": getattr(meta, "num_stages", None),
        "instrumentation_mode": getattr(meta, "instrumentation_mode", None),
    }


def ptx_problems(variant, info):
    """The variants compile apart because both profilers set the compile option
    `instrumentation_mode`, which keys Triton's caches; this checks it worked."""
    clocks = info["ptx_clock_reads"]
    if variant == "plain" and clocks:
        return [f"plain PTX has {clocks} clock reads: it is not a plain build (cache mix-up?)"]
    if variant != "plain" and not clocks:
        return [f"{variant} PTX has no clock reads: the markers were not instrumented "
                f"(session not active at compile time, or a plain cache entry was reused)"]
    return []


def cache_entries(cache_dir):
    """The build folders in a Triton cache dir (one per compiled kernel)."""
    try:
        return {e for e in os.listdir(cache_dir) if os.path.isdir(os.path.join(cache_dir, e))}
    except OSError:
        return set()


def file_sizes(base, extra_paths=()):
    """{path: bytes} of the files a session wrote under `base`."""
    paths = set(glob.glob(glob.escape(base) + "*")) | {p for p in extra_paths if p}
    return {p: os.path.getsize(p) for p in sorted(paths) if os.path.isfile(p)}


# --------------------------------------------------------------------------- Triton global state

def triton_state():
    """What a profiling session may change in Triton's process-wide state."""
    import triton
    import triton.knobs
    from triton.runtime import _allocation
    rt = triton.knobs.runtime
    state = {
        "compilation.instrumentation_mode": triton.knobs.compilation.instrumentation_mode,
        "runtime.add_stages_inspection_hook": rt.add_stages_inspection_hook,
        "runtime.jit_cache_hook": rt.jit_cache_hook,
        "runtime.jit_post_compile_hook": rt.jit_post_compile_hook,
    }
    for name in ("launch_enter_hook", "launch_exit_hook", "kernel_load_start_hook", "kernel_load_end_hook"):
        chain = getattr(rt, name)
        state["runtime." + name] = list(chain.calls) if hasattr(chain, "calls") else chain
    allocator = _allocation._profile_allocator
    state["profile_allocator"] = allocator.get() if hasattr(allocator, "get") else allocator
    try:
        from triton.backends import backends
        state["nvidia.instrumentation"] = backends["nvidia"].compiler.instrumentation
    except Exception:  # noqa: BLE001
        pass
    return state


def _same(key, a, b):
    if key == "profile_allocator":  # Triton's finalize installs a new NullAllocator()
        return type(a) is type(b) and (type(a).__name__ == "NullAllocator" or a is b)
    if key == "nvidia.instrumentation":  # None before, {} after Triton's finalize: both "off"
        return (not a and not b) or a is b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b))
    return a is b or a == b


def restore_triton_state(saved):
    """Puts back what differs from `saved`; returns the names that differed."""
    import triton
    import triton.knobs
    from triton.runtime import _allocation
    leaked = []
    now = triton_state()
    rt = triton.knobs.runtime
    for key, value in saved.items():
        if _same(key, value, now.get(key)):
            continue
        leaked.append(key)
        if key == "compilation.instrumentation_mode":
            triton.knobs.compilation.instrumentation_mode = value
        elif key.startswith("runtime."):
            name = key.split(".", 1)[1]
            chain = getattr(rt, name)
            if hasattr(chain, "calls") and isinstance(value, list):
                chain.calls[:] = value
            else:
                setattr(rt, name, value)
        elif key == "profile_allocator":
            _allocation.set_profile_allocator(value)
        elif key == "nvidia.instrumentation":
            from triton.backends import backends
            backends["nvidia"].compiler.instrumentation = value
    return leaked


# --------------------------------------------------------------------------- profiling sessions

def report_dict(report):
    """proton.runtime.SessionReport -> plain dict (attributes per the contract)."""
    if report is None:
        return None
    out = {}
    for attr in ("events", "launches_kept", "launches_skipped", "dropped_events"):
        out[attr] = getattr(report, attr, None)
    files = getattr(report, "files", None) or {}
    out["files"] = {kind: {"path": str(path), "bytes": os.path.getsize(path) if os.path.isfile(path) else None}
                    for kind, path in dict(files).items()}
    return out


class Sessions:
    """Starts/finalizes the profiler of a variant around a block."""

    def __init__(self, args, trace_dir):
        self.args = args
        self.trace_dir = trace_dir

    def _start(self, variant, path, data):
        if variant == "proton":
            import proton
            return proton.start(path, backend="instrumentation", mode=self.args.proton_mode,
                                max_launches_per_kernel=self.args.max_launches)
        import triton.profiler as tp
        return tp.start(path, backend="instrumentation", mode=self.args.reference_mode, data=data)

    def _finalize(self, variant):
        if variant == "proton":
            import proton
            return proton.finalize()
        import triton.profiler as tp
        tp.finalize()
        return None

    @contextlib.contextmanager
    def session(self, variant, label, info, data="tree", phase=None):
        """`info` receives: trace_base, data, start_s, finalize_s, report (proton),
        files {path: bytes}, finalize_error. Finalize always runs; its error is
        recorded (and raised only if the block itself succeeded). The files are
        sized, then deleted, or with --keep-traces moved to <trace dir>/<phase>/
        (several sessions may share a label: see run_dobench)."""
        if variant == "plain":
            yield
            return
        path = os.path.join(self.trace_dir, f"{label}_{variant}")
        info["trace_base"] = path
        if variant == "reference":
            info["data"] = data
        t0 = time.perf_counter()
        try:
            self._start(variant, path, data)
        except BaseException:
            with contextlib.suppress(Exception):  # undo a half-started session
                self._finalize(variant)
            raise
        info["start_s"] = time.perf_counter() - t0
        body_failed = True
        try:
            yield
            body_failed = False
        finally:
            t0 = time.perf_counter()
            finalize_exc = None
            try:
                report = self._finalize(variant)
                info["report"] = report_dict(report) if variant == "proton" else None
            except Exception as exc:  # noqa: BLE001
                finalize_exc = exc
                info["finalize_error"] = err_str(exc)
            info["finalize_s"] = time.perf_counter() - t0
            extra = [f["path"] for f in ((info.get("report") or {}).get("files") or {}).values()]
            files = file_sizes(path, extra)
            if self.args.keep_traces:
                dest = os.path.join(self.trace_dir, phase or label)
                os.makedirs(dest, exist_ok=True)
                moved = {}
                for p, size in files.items():
                    target = os.path.join(dest, os.path.basename(p))
                    with contextlib.suppress(OSError):
                        shutil.move(p, target)
                        p = target
                    moved[p] = size
                files = moved
            else:
                for p in files:
                    with contextlib.suppress(OSError):
                        os.remove(p)
            info["files"] = files
            if finalize_exc is not None and not body_failed:
                raise finalize_exc


# --------------------------------------------------------------------------- benchmark cases

class VectorAdd:
    template, tag, kernel_key = "vector_add", "", "vector_add"

    def __init__(self, n):
        import torch
        self.torch = torch
        self.n = n
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.x = torch.randn(n, device="cuda", generator=gen)
        self.y = torch.randn(n, device="cuda", generator=gen)

    def output(self):
        return self.torch.full_like(self.x, float("nan"))

    def call(self, out):
        import triton
        import kernels
        grid = (triton.cdiv(self.n, kernels.VECTOR_ADD_BLOCK), )
        return grid, (self.x, self.y, out, self.n), dict(BLOCK=kernels.VECTOR_ADD_BLOCK, **kernels.VECTOR_ADD_OPTIONS)

    def launch(self, fn, out):
        grid, a, kw = self.call(out)
        return fn[grid](*a, **kw)

    def compile_only(self, fn, out):
        grid, a, kw = self.call(out)
        return fn.warmup(*a, grid=grid, **kw)

    def sanity(self, out):
        return {"equal_to_torch": bool(self.torch.equal(out, self.x + self.y))}

    def compare(self, out, plain_out):
        equal = bool(self.torch.equal(out, plain_out))
        return {"equal_to_plain": equal}, equal


class Matmul:
    template, kernel_key = "matmul", None

    def __init__(self, tag, size):
        import torch
        self.torch = torch
        self.tag = tag
        self.kernel_key = f"matmul_{tag}"
        self.size = size
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.a = torch.randn((size, size), device="cuda", dtype=torch.float16, generator=gen)
        self.b = torch.randn((size, size), device="cuda", dtype=torch.float16, generator=gen)

    def output(self):
        return self.torch.full((self.size, self.size), float("nan"), device="cuda", dtype=self.torch.float16)

    def call(self, out):
        import triton
        import kernels
        bm, bn, bk = (kernels.MATMUL_BLOCKS[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
        s = self.size
        assert s % bk == 0, "the kernel has no K masks"
        grid = (triton.cdiv(s, bm) * triton.cdiv(s, bn), )
        a, b = self.a, self.b
        args = (a, b, out, s, s, s, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1))
        kw = dict(**kernels.MATMUL_BLOCKS, **kernels.MATMUL_SCOPES[self.tag], **kernels.MATMUL_OPTIONS)
        return grid, args, kw

    launch = VectorAdd.launch
    compile_only = VectorAdd.compile_only

    def sanity(self, out):
        ref = self.torch.matmul(self.a.float(), self.b.float())
        err = (out.float() - ref).abs()
        return {"max_abs_err_vs_torch_fp32": float(err.max()), "finite": bool(self.torch.isfinite(out).all())}

    def compare(self, out, plain_out):
        close = bool(self.torch.allclose(out.float(), plain_out.float(), rtol=1e-2, atol=1e-2))
        return {"allclose_to_plain": close, "bitwise_equal_to_plain": bool(self.torch.equal(out, plain_out))}, close


class Softmax:
    template, tag, kernel_key = "softmax", "", "softmax"

    def __init__(self, rows, cols):
        import torch
        self.torch = torch
        self.rows, self.cols = rows, cols
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.x = torch.randn((rows, cols), device="cuda", generator=gen)

    def output(self):
        return self.torch.full_like(self.x, float("nan"))

    def call(self, out):
        import triton
        import kernels
        grid = (self.rows, )
        args = (out, self.x, self.x.stride(0), out.stride(0), self.cols)
        return grid, args, dict(BLOCK=triton.next_power_of_2(self.cols), **kernels.SOFTMAX_OPTIONS)

    launch = VectorAdd.launch
    compile_only = VectorAdd.compile_only

    def sanity(self, out):
        err = float((out - self.torch.softmax(self.x, dim=-1)).abs().max())
        return {"max_abs_err_vs_torch": err, "within_tolerance": err < 1e-5}

    compare = VectorAdd.compare


class Attention:
    template, tag, kernel_key = "attention_fwd", "", "attention_fwd"
    LOG2E = 1.4426950408889634

    def __init__(self, shape):
        import torch
        self.torch = torch
        self.shape = shape
        gen = torch.Generator(device="cuda").manual_seed(0)
        self.q, self.k, self.v = (torch.randn(shape, device="cuda", dtype=torch.float16, generator=gen)
                                  for _ in range(3))
        self.sm_scale = shape[-1]**-0.5

    def output(self):
        return self.torch.full(self.shape, float("nan"), device="cuda", dtype=self.torch.float16)

    def call(self, out):
        import kernels
        batch, heads, seqlen, head_dim = self.shape
        bm, bn = kernels.ATTENTION_BLOCKS["BLOCK_M"], kernels.ATTENTION_BLOCKS["BLOCK_N"]
        assert seqlen % bm == 0 and seqlen % bn == 0, "the kernel has no masks"
        assert all(t.is_contiguous() for t in (self.q, self.k, self.v, out)), "the kernel assumes contiguous tensors"
        assert self.q.numel() < 2**31, "32-bit offsets"
        grid = (seqlen // bm, batch * heads)
        args = (self.q, self.k, self.v, out, self.sm_scale * self.LOG2E, self.q.stride(1), self.q.stride(2), seqlen)
        return grid, args, dict(**kernels.ATTENTION_BLOCKS, HEAD_DIM=head_dim, **kernels.ATTENTION_OPTIONS)

    launch = VectorAdd.launch
    compile_only = VectorAdd.compile_only

    def sanity(self, out):
        # fp32 reference, one batch element at a time (bounded memory).
        sdpa = self.torch.nn.functional.scaled_dot_product_attention
        err = 0.0
        for i in range(self.shape[0]):
            q, k, v = (t[i:i + 1].float() for t in (self.q, self.k, self.v))
            err = max(err, float((out[i:i + 1].float() - sdpa(q, k, v, scale=self.sm_scale)).abs().max()))
        return {"max_abs_err_vs_torch_fp32": err, "within_tolerance": err < 2e-2,
                "finite": bool(self.torch.isfinite(out).all())}

    compare = Matmul.compare


def make_case(key, small=False):
    import kernels
    if key.startswith("vector_add"):
        n = 1 << 20 if (small or key == "vector_add_1m" or key == "vector_add") else 1 << 26
        return VectorAdd(n)
    if key == "softmax":
        rows, cols = kernels.SOFTMAX_SHAPE
        return Softmax(256 if small else rows, cols)  # small: same columns, so the same build
    if key == "attention_fwd":
        shape = kernels.ATTENTION_SHAPE
        return Attention((1, 2, 512, shape[3]) if small else shape)
    tag = key.split("_", 1)[1]
    return Matmul(tag, 1024 if small else 4096)


# --------------------------------------------------------------------------- measurements

def cupti_launch_durations_us(launch, launches, warmup=10):
    """Compiles (first call) and warms up `launch`, then times `launches`
    calls under torch.profiler; returns (compiled kernel, its CUPTI
    durations in us), checking that every launch was seen."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    compiled = launch()
    for _ in range(warmup):
        launch()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(launches):
            launch()
        torch.cuda.synchronize()
    durations, others = cupti_kernel_durations_us(prof, compiled.name)
    assert len(durations) == launches, f"CUPTI saw {len(durations)} of {launches} launches; others: {others}"
    return compiled, durations


def cupti_kernel_durations_us(prof, name):
    """Durations (us) of the GPU kernels called `name` in a finished
    torch.profiler.profile, and a few other kernel names seen (for errors)."""
    durations, others = [], {}
    events = None
    with contextlib.suppress(Exception):
        events = prof.profiler.kineto_results.events()
    if events is not None:
        for e in events:
            if not str(e.device_type()).endswith("CUDA"):
                continue
            if e.name() == name:
                durations.append(e.duration_ns() / 1000.0)
            else:
                others[e.name()] = others.get(e.name(), 0) + 1
    else:  # older/newer torch: the FunctionEvent list
        for e in prof.events():
            if not str(getattr(e, "device_type", "")).endswith("CUDA"):
                continue
            if e.name == name:
                durations.append(float(e.time_range.elapsed_us()))
            else:
                others[e.name] = others.get(e.name, 0) + 1
    return durations, dict(sorted(others.items(), key=lambda kv: -kv[1])[:5])


def replay_do_bench(fn, n_warmup, n_repeat):
    """triton.testing.do_bench's schedule (3.6) with fixed counts: one call,
    5 calls after L2 clears (its estimate), n_warmup calls, then n_repeat calls
    each after an L2 clear between CUDA events; returns the event times (ms)."""
    import torch
    driver, cache = _first_call(fn)
    _five_call_estimate_ms(fn, driver, cache)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for _ in range(n_warmup):
        fn()
    for i in range(n_repeat):
        driver.clear_cache(cache)
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def estimate_do_bench_ms(fn):
    """do_bench's own per-call estimate (L2 clear + call), as it computes it."""
    driver, cache = _first_call(fn)
    return _five_call_estimate_ms(fn, driver, cache)


def _first_call(fn):
    """do_bench's opening: one call, then its L2-clearing buffer."""
    import torch
    import triton
    driver = triton.runtime.driver.active
    fn()
    torch.cuda.synchronize()
    return driver, driver.get_empty_cache_for_benchmark()


def _five_call_estimate_ms(fn, driver, cache):
    """do_bench's estimate: 5 calls, each after an L2 clear, timed together."""
    import torch
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        driver.clear_cache(cache)
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 5


class Bench:

    def __init__(self, args, gpu_name):
        import torch
        import triton
        self.args = args
        self.torch = torch
        self.triton = triton
        self.gpu_name = gpu_name
        self.tmp_root = tempfile.mkdtemp(prefix="proton-bench-")
        self.trace_dir = args.trace_dir or os.path.join(self.tmp_root, "traces")
        os.makedirs(self.trace_dir, exist_ok=True)
        self.sessions = Sessions(args, self.trace_dir)
        self.cuda_broken = None
        self.crashed = {}  # (variant, kernel key) -> reason, from the preflight
        self.failures = []  # "section/case/variant: error"
        self.blocking = False
        if not args.reuse_cache:
            triton.knobs.cache.dir = os.path.join(self.tmp_root, "triton-cache")
        self.cache_dir = triton.knobs.cache.dir
        suffix = ""
        if args.quick:
            suffix += "_quick"
        if set(args.only) != set(SECTIONS):
            suffix += "_" + "_".join(args.only)
        self.stem = os.path.join(args.out, f"overhead_{slug(gpu_name)}{suffix}")
        self.results = {
            "meta": self._meta(),
            "config": self._config(),
            "device": {},
            "dobench": {},
            "compile": {},
            "preflight": {},
            "summary": [],
            "failures": self.failures,
        }

    # ---- bookkeeping

    def _meta(self):
        torch, triton = self.torch, self.triton
        props = torch.cuda.get_device_properties(0)
        try:
            import proton
            proton_version = getattr(proton, "__version__", None) or "unknown"
            proton_path = os.path.dirname(getattr(proton, "__file__", "") or "")
        except Exception as exc:  # noqa: BLE001
            proton_version, proton_path = f"not importable: {err_str(exc)}", None
        return {
            "date": now_utc(),
            "gpu": self.gpu_name,
            "gpu_capability": list(torch.cuda.get_device_capability(0)),
            "gpu_sms": getattr(props, "multi_processor_count", None),
            "gpu_memory_bytes": getattr(props, "total_memory", None),
            "torch": torch.__version__,
            "torch_cuda": torch.version.cuda,
            "triton": triton.__version__,
            "proton": proton_version,
            "proton_path": proton_path,
            "python": platform.python_version(),
            "host": platform.node(),
            "git_commit": git_commit(),
            "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        }

    def _config(self):
        import kernels
        a = self.args
        return {
            "sections": list(a.only),
            "variants": list(a.variants),
            "cases": list(a.cases),
            "quick": a.quick,
            "proton_mode": a.proton_mode,
            "proton_max_launches_per_kernel": a.max_launches,
            "reference_mode": a.reference_mode,
            "reference_device_data": a.reference_device_data,
            "reference_dobench_data": a.reference_dobench_data,
            "device_counts": {k: {"warmup": w, "measured": n} for k, (w, n) in a.device_counts.items()},
            "dobench_reps": a.dobench_reps,
            "dobench_warmup_ms": a.dobench_warmup_ms,
            "compile_reps": a.compile_reps,
            "vector_add": {"BLOCK": kernels.VECTOR_ADD_BLOCK, **kernels.VECTOR_ADD_OPTIONS},
            "matmul": {**kernels.MATMUL_BLOCKS, **kernels.MATMUL_OPTIONS, "scopes": kernels.MATMUL_SCOPES},
            "softmax": {"shape": list(kernels.SOFTMAX_SHAPE), **kernels.SOFTMAX_OPTIONS},
            "attention_fwd": {"shape": list(kernels.ATTENTION_SHAPE), **kernels.ATTENTION_BLOCKS,
                              **kernels.ATTENTION_OPTIONS},
            "triton_cache_dir": self.cache_dir,
            "fresh_triton_cache": not a.reuse_cache,
            "trace_dir": self.trace_dir,
            "keep_traces": a.keep_traces,
            "targets": {k: f"{op} {v}" for k, (op, v) in TARGETS.items()},
        }

    def save(self):
        os.makedirs(self.args.out, exist_ok=True)
        self.results["summary"] = summary_rows(self.results)
        with open(self.stem + ".json", "w") as f:
            json.dump(self.results, f, indent=1, default=str)
        with open(self.stem + ".md", "w") as f:
            f.write(render_markdown(self.results))

    def note_failure(self, where, message):
        """Every problem is listed; only those of plain/proton (or of a whole
        section) make the exit status 1: the reference is what we compare to."""
        self.failures.append(f"{where}: {message}")
        if not where.endswith("/reference"):
            self.blocking = True

    def fail(self, where, rec, message):
        rec.setdefault("problems", []).append(message)
        self.note_failure(where, message)

    def cuda_ok(self):
        if self.cuda_broken:
            return False
        try:
            self.torch.cuda.synchronize()
            (self.torch.ones(1, device="cuda") + 1).item()
            return True
        except Exception as exc:  # noqa: BLE001
            self.cuda_broken = err_str(exc)
            print(f"  !! the CUDA context is unusable from here on: {self.cuda_broken}")
            return False

    def guarded(self, where, rec, variant, kernel_key, func, *a, **kw):
        """Runs one variant's measurement; an exception (or a preflight crash,
        or a dead CUDA context) becomes rec["error"] and never stops the rest."""
        if self.cuda_broken:
            rec["error"] = f"skipped: CUDA context unusable after an earlier error ({self.cuda_broken})"
            self.note_failure(where, rec["error"])
            return None
        crash = self.crashed.get((variant, kernel_key))
        if crash:
            rec["error"] = f"skipped: the preflight child died on this kernel: {crash}"
            self.note_failure(where, rec["error"])
            return None
        saved = triton_state()
        try:
            return func(*a, **kw)
        except Exception as exc:  # noqa: BLE001 - record any failure of this variant
            rec["error"] = err_str(exc)
            rec["traceback"] = traceback.format_exc()[-6000:]
            self.note_failure(where, rec["error"])
            print(f"    ! {where}: {rec['error'].splitlines()[0][:300]}")
            return None
        finally:
            leaked = restore_triton_state(saved)
            if leaked:
                self.fail(where, rec, "left Triton's process state modified after finalize (restored): "
                          + ", ".join(leaked))
            self.cuda_ok()

    # ---- preflight (child processes)

    def preflight(self):
        """Compiles and launches every instrumented kernel once in a child
        process, so that a hard abort (LLVM ERROR, segfault) only marks that
        (variant, kernel) failed instead of killing this process."""
        kernels_needed = []
        if "device" in self.args.only:
            kernels_needed += [DEVICE_CASES[c][0] for c in self.args.cases]
        if "dobench" in self.args.only:
            kernels_needed.append("vector_add")
        if "compile" in self.args.only:
            kernels_needed += list(COMPILE_KERNELS)
        kernels_needed = list(dict.fromkeys(kernels_needed))
        env = dict(os.environ, TRITON_CACHE_DIR=self.cache_dir)
        for variant in self.args.variants:
            if variant == "plain" or not kernels_needed:
                continue
            log = self.results["preflight"][variant] = {}
            remaining = list(kernels_needed)
            while remaining:
                cmd = [sys.executable, os.path.abspath(__file__), "--_preflight", variant,
                       "--_preflight-kernels", ",".join(remaining), "--max-launches", str(self.args.max_launches)]
                if self.args.proton_mode is not None:
                    cmd += ["--proton-mode", self.args.proton_mode]
                if self.args.reference_mode is not None:
                    cmd += ["--reference-mode", self.args.reference_mode]
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
                        log[parts[1]] = "ok" if parts[0] == "PREFLIGHT-OK" else (
                            "python error (recorded again by the measurement): " + (parts[2] if len(parts) > 2 else ""))
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
                            self.crashed[(variant, k)] = f"{why}: {tail}"
                            log[k] = f"child died before/after this kernel: {why}: {tail}"
                    break
                self.crashed[(variant, inflight)] = f"{why}: {tail}"
                log[inflight] = f"child died: {why}: {tail}"
                print(f"    ! preflight {variant}/{inflight}: {why}: {tail[-300:]}")
                remaining = remaining[remaining.index(inflight) + 1:]

    # ---- 1. device time

    def run_device(self):
        torch = self.torch
        from torch.profiler import ProfilerActivity, profile
        import kernels
        for key in self.args.cases:
            kernel_key, what = DEVICE_CASES[key]
            warm, n = next(c for g, c in self.args.device_counts.items() if key.startswith(g))
            entry = self.results["device"][key] = {"what": what, "warmup": warm, "launches": n, "variants": {}}
            print(f"[device] {key}: {what} ({n} launches)", flush=True)
            try:
                case = make_case(key)
            except Exception as exc:  # noqa: BLE001
                entry["error"] = err_str(exc)
                self.note_failure(f"device/{key}", entry["error"])
                continue
            plain_out = None
            for variant in self.args.variants:
                rec = entry["variants"][variant] = {}
                where = f"device/{key}/{variant}"

                def measure(variant=variant, rec=rec, where=where):
                    fn = kernels.build(case.template, variant, case.tag)
                    out = case.output()
                    info = rec["session"] = {}
                    with self.sessions.session(variant, f"device_{key}", info, data=self.args.reference_device_data):
                        t0 = time.perf_counter()
                        compiled = case.launch(fn, out)  # compiles (outside the measured window)
                        torch.cuda.synchronize()
                        rec["first_launch_s"] = time.perf_counter() - t0
                        for _ in range(warm):
                            case.launch(fn, out)
                        torch.cuda.synchronize()
                        rec.update(ptx_info(compiled))
                        for problem in ptx_problems(variant, rec):
                            self.fail(where, rec, problem)
                        out.fill_(float("nan"))
                        torch.cuda.synchronize()
                        with profile(activities=[ProfilerActivity.CUDA]) as prof:
                            for _ in range(n):
                                case.launch(fn, out)
                            torch.cuda.synchronize()
                    if info.get("finalize_error"):
                        self.fail(where, rec, "finalize: " + info["finalize_error"])
                    durations, others = cupti_kernel_durations_us(prof, compiled.name)
                    rec["durations_us"] = [round(d, 3) for d in durations]
                    rec["matched_events"] = len(durations)
                    rec["median_us"] = median(durations)
                    rec["mean_us"] = mean(durations)
                    rec["min_us"] = min(durations) if durations else None
                    if len(durations) != n:
                        self.fail(where, rec, f"CUPTI matched {len(durations)} of {n} launches of "
                                  f"{compiled.name!r}; other kernels seen: {others}")
                    return out

                out = self.guarded(where, rec, variant, kernel_key, measure)
                if out is None:
                    continue
                if variant == "plain":
                    plain_out = out
                    rec["checks"] = case.sanity(out)
                    if rec["checks"].get("within_tolerance") is False:
                        self.fail(where, rec, f"plain result is off the torch reference: {rec['checks']}")
                elif plain_out is not None:
                    checks, ok = case.compare(out, plain_out)
                    rec["checks"] = checks
                    if not ok:
                        self.fail(where, rec, f"result differs from plain: {checks}")
                if rec.get("median_us") is not None:
                    print(f"    {variant:9} {rec['kernel_name']:24} median {rec['median_us']:10.2f} us  "
                          f"mean {rec['mean_us']:10.2f} us  clocks {rec['ptx_clock_reads']}", flush=True)
                if variant != "plain":
                    del out
            plain = entry["variants"].get("plain", {})
            for variant, rec in entry["variants"].items():
                rec["ratio_median"] = ratio(rec.get("median_us"), plain.get("median_us"))
                rec["ratio_mean"] = ratio(rec.get("mean_us"), plain.get("mean_us"))
            del case, plain_out
            torch.cuda.empty_cache()
            self.save()

    # ---- 2. do_bench session wall time

    def run_dobench(self):
        torch, triton = self.torch, self.triton
        import kernels
        args = self.args
        sec = self.results["dobench"]
        print(f"[dobench] vector add 1M: session wall time ({args.dobench_reps} timed reps)", flush=True)
        case = make_case("vector_add_1m")
        # Calibrate like do_bench on the plain kernel: its per-call estimate fixes
        # the warm-up count (warmup ms / estimate) and the rep= for ~N repetitions.
        plain_fn = kernels.build("vector_add", "plain")
        plain_buf = case.output()
        est = max(1e-6, median([estimate_do_bench_ms(lambda: case.launch(plain_fn, plain_buf)) for _ in range(5)]))
        n_warmup = max(1, int(args.dobench_warmup_ms / est))
        rep_ms = est * (args.dobench_reps + 0.5)
        sec["calibration"] = {"plain_estimate_ms": est, "n_warmup": n_warmup, "n_repeat": args.dobench_reps,
                              "do_bench_warmup_ms": args.dobench_warmup_ms, "do_bench_rep_ms": rep_ms,
                              "launches_per_fixed_session": 1 + 5 + n_warmup + args.dobench_reps}
        expected = case.x + case.y
        fixed = sec["fixed"] = {
            "how": "explicit replay of triton.testing.do_bench's schedule with plain's counts "
                   "(1 + 5 estimate + n_warmup + n_repeat launches, L2 clear before each timed one), "
                   "identical for every variant; window = start -> launches -> synchronize -> finalize",
            "variants": {}}
        real = sec["do_bench"] = {
            "how": "triton.testing.do_bench(fn, warmup=W, rep=R) with R = plain's estimate x n_repeat; "
                   "do_bench derives its counts from its own estimate, so slower variants run fewer "
                   "launches (counted); window = start -> do_bench -> finalize",
            "variants": {}}
        data = args.reference_dobench_data

        # All do_bench sessions of a variant share one session name (LABEL), so
        # that a profiler whose cache key depends on it still hits the kernel the
        # untimed warm-up session compiled.
        LABEL = "dobench"

        def timed(variant, rec, phase, body):
            # A fresh JITFunction: its first launch loads the kernel from Triton's
            # disk cache (filled by the warm-up session) inside the window, for
            # every variant alike, so a profiler sees the load in its own session.
            fn = kernels.build("vector_add", variant)
            out = case.output()
            count = [0]
            first = {}

            def call():
                count[0] += 1
                if count[0] == 1:
                    t = time.perf_counter()
                    case.launch(fn, out)
                    first["s"] = time.perf_counter() - t
                else:
                    case.launch(fn, out)

            info = rec["session"] = {}
            builds_before = cache_entries(self.cache_dir)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            with self.sessions.session(variant, LABEL, info, data=data, phase=phase):
                result = body(call)
                torch.cuda.synchronize()
            rec["wall_s"] = time.perf_counter() - t0
            rec["first_call_ms"] = first.get("s", 0) * 1e3  # includes loading the kernel from the disk cache
            new_builds = cache_entries(self.cache_dir) - builds_before
            if new_builds:
                self.fail(f"dobench/{phase}/{variant}", rec, f"{len(new_builds)} new Triton cache entries appeared: "
                          "the kernel was compiled inside the timed window (the warm-up's build was not reused)")
            rec["launches"] = count[0]
            rec["wall_per_launch_us"] = rec["wall_s"] / count[0] * 1e6 if count[0] else None
            rec["equal_to_torch"] = bool(torch.equal(out, expected))
            if not rec["equal_to_torch"]:
                self.fail(f"dobench/{phase}/{variant}", rec, "result differs from x + y")
            if info.get("finalize_error"):
                self.fail(f"dobench/{phase}/{variant}", rec, "finalize: " + info["finalize_error"])
            return result

        for variant in args.variants:
            rec = fixed["variants"][variant] = {}

            def run_fixed(variant=variant, rec=rec):
                # Untimed warm-up session: compiles (session active, so instrumented) into the disk cache.
                warm = {}
                with self.sessions.session(variant, LABEL, warm, data="tree", phase="dobench_warmup"):
                    compiled = case.launch(kernels.build("vector_add", variant), case.output())
                    torch.cuda.synchronize()
                rec["warmup_session"] = warm
                rec.update(ptx_info(compiled))
                for problem in ptx_problems(variant, rec):
                    self.fail(f"dobench/fixed/{variant}", rec, problem)
                times = timed(variant, rec, "fixed",
                              lambda call: replay_do_bench(call, n_warmup, args.dobench_reps))
                rec["kernel_event_ms_median"] = median(times)

            self.guarded(f"dobench/fixed/{variant}", rec, variant, "vector_add", run_fixed)
            if rec.get("wall_s") is not None:
                print(f"    fixed    {variant:9} {rec['launches']:5d} launches  wall {rec['wall_s'] * 1e3:10.1f} ms "
                      f"(start {1e3 * rec['session'].get('start_s', 0):.1f}, finalize "
                      f"{1e3 * rec['session'].get('finalize_s', 0):.1f})", flush=True)
        for variant in args.variants:
            rec = real["variants"][variant] = {}

            def run_real(variant=variant, rec=rec):
                rec["do_bench_ms"] = timed(variant, rec, "do_bench", lambda call: triton.testing.do_bench(
                    call, warmup=args.dobench_warmup_ms, rep=rep_ms))

            self.guarded(f"dobench/do_bench/{variant}", rec, variant, "vector_add", run_real)
            if rec.get("wall_s") is not None:
                print(f"    do_bench {variant:9} {rec['launches']:5d} launches  wall {rec['wall_s'] * 1e3:10.1f} ms",
                      flush=True)
        for part in (fixed, real):
            plain = part["variants"].get("plain", {})
            for rec in part["variants"].values():
                rec["ratio"] = ratio(rec.get("wall_s"), plain.get("wall_s"))
                rec["ratio_per_launch"] = ratio(rec.get("wall_per_launch_us"), plain.get("wall_per_launch_us"))
        sec["trace_size"] = trace_size_comparison(fixed["variants"])
        self.save()

    # ---- 3. compile time

    def run_compile(self):
        torch, triton = self.torch, self.triton
        import kernels
        reps = self.args.compile_reps
        sec = self.results["compile"]
        print(f"[compile] cold compiles, fresh cache dir each ({reps} timed rounds after 1 discarded)", flush=True)
        cases = {k: make_case(k, small=True) for k in COMPILE_KERNELS}
        for k in COMPILE_KERNELS:
            sec[k] = {"variants": {v: {"times_s": []} for v in self.args.variants}}
        for rnd in range(reps + 1):
            for k in COMPILE_KERNELS:
                case = cases[k]
                for variant in self.args.variants:
                    rec = sec[k]["variants"][variant]
                    if rec.get("error"):
                        continue

                    def once(variant=variant, rec=rec, case=case, k=k):
                        cache = tempfile.mkdtemp(prefix="cc-", dir=self.tmp_root)
                        saved = triton.knobs.cache.dir
                        triton.knobs.cache.dir = cache
                        try:
                            fn = kernels.build(case.template, variant, case.tag)
                            out = case.output()
                            info = {}
                            with self.sessions.session(variant, f"compile_{k}", info,
                                                       data=self.args.reference_device_data):
                                torch.cuda.synchronize()
                                t0 = time.perf_counter()
                                compiled = case.compile_only(fn, out)
                                dt = time.perf_counter() - t0
                            if info.get("finalize_error"):
                                rec["finalize_error"] = info["finalize_error"]
                            if rnd == 0:
                                rec["warmup_round_s"] = dt
                                rec.update(ptx_info(compiled))
                                for problem in ptx_problems(variant, rec):
                                    self.fail(f"compile/{k}/{variant}", rec, problem)
                            else:
                                rec["times_s"].append(dt)
                        finally:
                            triton.knobs.cache.dir = saved
                            shutil.rmtree(cache, ignore_errors=True)

                    self.guarded(f"compile/{k}/{variant}", rec, variant, k, once)
        for k in COMPILE_KERNELS:
            variants = sec[k]["variants"]
            for rec in variants.values():
                rec["median_s"] = median(rec["times_s"])
            plain = variants.get("plain", {})
            for variant, rec in variants.items():
                rec["ratio"] = ratio(rec.get("median_s"), plain.get("median_s"))
                if rec.get("median_s") is not None:
                    print(f"    {k:14} {variant:9} median {rec['median_s']:7.3f} s  ratio "
                          f"{fmt_ratio(rec['ratio'])}", flush=True)
        self.save()

    # ---- driver

    def run(self):
        print(f"GPU: {self.gpu_name}; torch {self.torch.__version__}, triton {self.triton.__version__}; "
              f"variants {', '.join(self.args.variants)}; sections {', '.join(self.args.only)}"
              f"{' (quick)' if self.args.quick else ''}", flush=True)
        if not self.args.no_preflight:
            self.preflight()
        self.save()
        steps = {"device": self.run_device, "dobench": self.run_dobench, "compile": self.run_compile}
        for name in SECTIONS:
            if name not in self.args.only:
                continue
            try:
                steps[name]()
            except Exception as exc:  # noqa: BLE001 - a broken section must not lose the others
                self.results[name]["error"] = err_str(exc)
                self.results[name]["traceback"] = traceback.format_exc()[-6000:]
                self.note_failure(name, err_str(exc))
                print(f"  !! section {name} failed: {err_str(exc)}")
            self.save()
        self.save()
        print()
        print(render_summary_table(self.results["summary"]))
        if self.failures:
            print(f"\n{len(self.failures)} problem(s):")
            for f in self.failures:
                print("  - " + f.splitlines()[0][:400])
        print(f"\nResults: {self.stem}.json, {self.stem}.md")
        if self.args.keep_traces:
            print(f"Traces kept in {self.trace_dir}")
        if self.args.keep_traces and os.path.abspath(self.trace_dir).startswith(self.tmp_root + os.sep):
            shutil.rmtree(os.path.join(self.tmp_root, "triton-cache"), ignore_errors=True)
        else:
            shutil.rmtree(self.tmp_root, ignore_errors=True)
        return 1 if self.blocking else 0


def trace_size_comparison(variants):
    """Proton's .pftrace vs the reference's trace, from the fixed-count sessions."""
    out = {}
    prot = variants.get("proton", {})
    ref = variants.get("reference", {})
    report = (prot.get("session") or {}).get("report") or {}
    files = report.get("files") or {}
    pftrace = (files.get("pftrace") or {}).get("bytes")
    chrome = (files.get("chrome_trace") or {}).get("bytes")
    ref_files = (ref.get("session") or {}).get("files") or {}
    ref_bytes = sum(ref_files.values()) if ref_files else None
    out["proton_pftrace_bytes"] = pftrace
    out["proton_chrome_trace_bytes"] = chrome
    out["proton_files"] = {k: v.get("bytes") for k, v in files.items()}
    out["proton_launches_kept"] = report.get("launches_kept")
    out["proton_launches_skipped"] = report.get("launches_skipped")
    out["proton_events"] = report.get("events")
    out["proton_dropped_events"] = report.get("dropped_events")
    out["reference_files"] = {os.path.basename(p): b for p, b in ref_files.items()}
    out["reference_bytes"] = ref_bytes
    out["reference_data"] = (ref.get("session") or {}).get("data")
    out["reference_launches"] = ref.get("launches")
    out["ratio_reference_over_pftrace"] = ratio(ref_bytes, pftrace)
    kept = report.get("launches_kept")
    per_p = pftrace / kept if pftrace and kept else None
    per_r = ref_bytes / ref["launches"] if ref_bytes and ref.get("launches") else None
    out["pftrace_bytes_per_kept_launch"] = per_p
    out["reference_bytes_per_launch"] = per_r
    out["ratio_per_launch"] = ratio(per_r, per_p)
    out["note"] = ("proton keeps at most max_launches_per_kernel launches while the reference records every "
                   "launch; ratio_per_launch compares bytes per recorded launch")
    return out


# --------------------------------------------------------------------------- reporting

def fmt_ratio(x):
    if x is None:
        return "-"
    if x < 10:
        return f"{x:.3f}x"
    return f"{x:,.1f}x" if x < 1000 else f"{x:,.0f}x"


def fmt_target(t):
    return f"{t[0]} {t[1]:.2f}x" if t else "-"


def fmt_num(x, digits=2):
    return "-" if x is None else f"{x:,.{digits}f}"


def fmt_bytes(x):
    if x is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(x) < 1024 or unit == "GiB":
            return f"{x:,.0f} {unit}" if unit == "B" else f"{x:,.1f} {unit}"
        x /= 1024


def _verdict(value, target):
    if value is None or target is None:
        return "n/a"
    op, bound = target
    ok = value <= bound if op == "<=" else value >= bound
    return "yes" if ok else "NO"


def _rec_status(rec):
    if not rec:
        return "not run"
    if rec.get("error"):
        return "ERROR"
    if rec.get("problems"):
        return "problem"
    return ""


def summary_rows(results):
    """One row per target: proton's value, the reference's, the target, pass."""
    rows = []
    for key, rec in (results.get("device") or {}).items():
        if not isinstance(rec, dict):
            continue
        if "variants" not in rec:
            rows.append({"metric": f"device time {key}", "proton": None, "reference": None,
                         "target": TARGETS.get(f"device:{key}"), "pass": "n/a",
                         "status": "ERROR " + str(rec.get("error", ""))[:200].replace("|", "/")})
            continue
        v = rec["variants"]
        target = TARGETS.get(f"device:{key}")
        p, r = v.get("proton", {}), v.get("reference", {})
        rows.append({"metric": f"device time {key} (median, CUPTI)", "proton": p.get("ratio_median"),
                     "reference": r.get("ratio_median"), "target": target,
                     "pass": _verdict(p.get("ratio_median"), target),
                     "status": " ".join(s for s in (_rec_status(p) and f"proton {_rec_status(p)}",
                                                     _rec_status(r) and f"reference {_rec_status(r)}") if s)})
    db = results.get("dobench") or {}
    for part, label in (("fixed", "do_bench session wall (fixed counts)"), ("do_bench", "do_bench session wall "
                                                                                         "(real do_bench)")):
        if part in db:
            v = db[part]["variants"]
            p, r = v.get("proton", {}), v.get("reference", {})
            target = TARGETS["dobench:session"] if part == "fixed" else None
            rows.append({"metric": label, "proton": p.get("ratio"), "reference": r.get("ratio"), "target": target,
                         "pass": _verdict(p.get("ratio"), target),
                         "status": " ".join(s for s in (_rec_status(p) and f"proton {_rec_status(p)}",
                                                         _rec_status(r) and f"reference {_rec_status(r)}") if s)})
    ts = db.get("trace_size")
    if ts:
        target = TARGETS["dobench:trace_size"]
        rows.append({"metric": "trace size: reference trace / proton .pftrace", "proton":
                     ts.get("ratio_reference_over_pftrace"), "reference": None, "target": target,
                     "pass": _verdict(ts.get("ratio_reference_over_pftrace"), target), "status": ""})
        rows.append({"metric": "trace size per recorded launch (same ratio)", "proton": ts.get("ratio_per_launch"),
                     "reference": None, "target": None, "pass": "n/a", "status": ""})
    for key, rec in (results.get("compile") or {}).items():
        if not isinstance(rec, dict) or "variants" not in rec:
            continue
        v = rec["variants"]
        p, r = v.get("proton", {}), v.get("reference", {})
        target = TARGETS["compile"]
        rows.append({"metric": f"cold compile {key}", "proton": p.get("ratio"), "reference": r.get("ratio"),
                     "target": target, "pass": _verdict(p.get("ratio"), target),
                     "status": " ".join(s for s in (_rec_status(p) and f"proton {_rec_status(p)}",
                                                     _rec_status(r) and f"reference {_rec_status(r)}") if s)})
    return rows


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_summary_table(rows):
    body = []
    for r in rows:
        t = r.get("target")
        body.append([r["metric"], fmt_ratio(r["proton"]), fmt_ratio(r["reference"]), fmt_target(t), r["pass"],
                     r.get("status", "")])
    return _table(["measurement (ratio vs plain)", "proton", "reference", "target (proton)", "met", "notes"], body)


def render_markdown(results):
    m = results.get("meta", {})
    c = results.get("config", {})
    out = [f"# Proton overhead: {m.get('gpu')}", "",
           f"- date: {m.get('date')}; torch {m.get('torch')} (CUDA {m.get('torch_cuda')}), triton {m.get('triton')}, "
           f"proton {m.get('proton')}, Python {m.get('python')}, git {m.get('git_commit')}",
           f"- command: `{m.get('command')}`",
           f"- modes: proton `{c.get('proton_mode')}` (max_launches_per_kernel {c.get('proton_max_launches_per_kernel')}),"
           f" reference `{c.get('reference_mode')}` (data: device/compile `{c.get('reference_device_data')}`, "
           f"do_bench `{c.get('reference_dobench_data')}`)", "",
           "## Summary", "", render_summary_table(results.get("summary") or summary_rows(results)), ""]
    dev = results.get("device") or {}
    if dev:
        out += ["## Device time per kernel (CUPTI, torch.profiler)", "",
                "Median / mean kernel duration over the measured launches; the profiling session is active "
                "around them; compile and warm-up happen before the profiler window, finalize after it.", ""]
        rows = []
        for key, e in dev.items():
            for variant, r in (e.get("variants") or {}).items():
                rows.append([key, variant, r.get("kernel_name", "-"), r.get("matched_events", "-"),
                             fmt_num(r.get("median_us")), fmt_num(r.get("mean_us")), fmt_ratio(r.get("ratio_median")),
                             fmt_ratio(r.get("ratio_mean")), r.get("ptx_clock_reads", "-"),
                             _checks(r.get("checks")), _err(r)])
        out += [_table(["case", "variant", "kernel", "n", "median us", "mean us", "ratio (median)", "ratio (mean)",
                        "PTX clock reads", "result", "error / problems"], rows), ""]
    db = results.get("dobench") or {}
    if db:
        cal = db.get("calibration", {})
        out += ["## Profiling session around do_bench (vector add 1M)", "",
                f"plain do_bench estimate {fmt_num(cal.get('plain_estimate_ms'), 4)} ms/call -> n_warmup "
                f"{cal.get('n_warmup')}, n_repeat {cal.get('n_repeat')}, rep= {fmt_num(cal.get('do_bench_rep_ms'), 3)} "
                f"ms.", ""]
        for part in ("fixed", "do_bench"):
            if part not in db:
                continue
            out += [f"**{part}**: {db[part].get('how', '')}", ""]
            rows = []
            for variant, r in db[part]["variants"].items():
                s = r.get("session") or {}
                rep = s.get("report") or {}
                rows.append([variant, r.get("launches", "-"), fmt_num(_ms(r.get("wall_s")), 1),
                             fmt_num(_ms(s.get("start_s")), 1), fmt_num(_ms(s.get("finalize_s")), 1),
                             fmt_ratio(r.get("ratio")), fmt_ratio(r.get("ratio_per_launch")),
                             ", ".join(f"{os.path.basename(p)} {fmt_bytes(b)}" for p, b in (s.get("files") or {}).items())
                             or "-",
                             _report_str(rep), _err(r)])
            out += [_table(["variant", "launches", "wall ms", "start ms", "finalize ms", "ratio", "ratio per launch",
                            "files", "SessionReport", "error / problems"], rows), ""]
        ts = db.get("trace_size")
        if ts:
            out += ["**Trace sizes** (fixed-count sessions): proton .pftrace "
                    f"{fmt_bytes(ts.get('proton_pftrace_bytes'))} (.chrome_trace "
                    f"{fmt_bytes(ts.get('proton_chrome_trace_bytes'))}; {ts.get('proton_launches_kept')} launches kept, "
                    f"{ts.get('proton_launches_skipped')} skipped); reference ({ts.get('reference_data')}) "
                    f"{fmt_bytes(ts.get('reference_bytes'))} for {ts.get('reference_launches')} launches "
                    f"{ts.get('reference_files')}. Reference / pftrace: "
                    f"{fmt_ratio(ts.get('ratio_reference_over_pftrace'))}; per recorded launch: "
                    f"{fmt_ratio(ts.get('ratio_per_launch'))}. {ts.get('note', '')}", ""]
    comp = results.get("compile") or {}
    if comp:
        out += ["## Cold compile time", "",
                "Fresh TRITON_CACHE_DIR per compile, `JITFunction.warmup` (compile only, no launch), session active "
                "for instrumented variants; one discarded round first.", ""]
        rows = []
        for key, e in comp.items():
            if not isinstance(e, dict) or "variants" not in e:
                continue
            for variant, r in e["variants"].items():
                rows.append([key, variant, fmt_num(r.get("median_s"), 3),
                             ", ".join(f"{t:.3f}" for t in r.get("times_s", [])) or "-",
                             fmt_ratio(r.get("ratio")), r.get("ptx_clock_reads", "-"), _err(r)])
        out += [_table(["kernel", "variant", "median s", "times s", "ratio", "PTX clock reads",
                        "error / problems"], rows), ""]
    pre = results.get("preflight") or {}
    if pre:
        out += ["## Preflight (child process per instrumented variant)", ""]
        for variant, log in pre.items():
            for k, status in log.items():
                out.append(f"- {variant} / {k}: {status}")
        out.append("")
    fails = results.get("failures") or []
    if fails:
        out += ["## Problems", ""] + [f"- {f.splitlines()[0][:600]}" for f in fails] + [""]
    return "\n".join(out)


def _ms(s):
    return None if s is None else s * 1e3


def _checks(checks):
    if not checks:
        return "-"
    return ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in checks.items())


def _err(rec):
    parts = []
    if rec.get("error"):
        parts.append(rec["error"].splitlines()[0][:300])
    parts += [p[:300] for p in rec.get("problems", [])]
    return "; ".join(parts).replace("|", "/") or ""


def _report_str(rep):
    if not rep:
        return "-"
    return ", ".join(f"{k}={rep.get(k)}" for k in ("events", "launches_kept", "launches_skipped", "dropped_events"))


# --------------------------------------------------------------------------- preflight child

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


# --------------------------------------------------------------------------- main

def main(argv=None):
    args = parse_args(argv)
    ok, why = gpu_status()
    if not ok:
        print(f"No GPU available: {why}.\n"
              "bench_overhead.py measures on an NVIDIA GPU (H100/H200, torch + triton 3.6); nothing was measured "
              "and no results were written.")
        return 0
    if args._preflight:
        return preflight_child(args)
    bench = Bench(args, why)
    try:
        return bench.run()
    finally:
        with contextlib.suppress(Exception):
            bench.save()


if __name__ == "__main__":
    sys.exit(main())
