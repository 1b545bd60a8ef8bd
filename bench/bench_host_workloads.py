"""Host profiler overhead on launch-bound programs: wall time of real
workloads, plain and under each host profiler, side by side in one run with
the CUPTI activity floor.

Workloads (--workloads), each timed as a loop of iterations followed by one
torch.cuda.synchronize():

    compiled_mlp   a torch.compile(mode="default")'d training step: an 8-layer
                   fp32 MLP (width 1024, batch 64, ReLU between layers), MSE
                   loss, loss.backward() and an SGD step (foreach), 30 steps
                   per loop. Compiled and warmed up before the profiler starts.
                   Inductor compiles in-process (compile_threads=1: no worker
                   pool starting up beside the timed loops) and, with the
                   default --inductor-launcher triton, launches through
                   Triton's launcher (its static launcher calls no Triton
                   launch hooks, so hook="triton" would see none of
                   Inductor's kernels); every variant uses the same setting.
    eager_block    one pre-norm transformer block in eager PyTorch, bf16,
                   no_grad: layernorm, qkv linear, causal
                   scaled_dot_product_attention, output linear, residual,
                   layernorm, MLP (4x, GELU), residual; batch 4, sequence 128,
                   width 256, 4 heads: launch bound. 50 forwards per loop.
    graph_replay   eager_block's forward captured once into a
                   torch.cuda.CUDAGraph (before the profiler starts, as a
                   server captures at start-up), 200 replays per loop.

Variants (--variants), each in its own process (a process has one CUPTI
subscriber) that runs every selected workload in turn inside one profiling
session; the variants are interleaved over --rounds rounds, their order
rotating from round to round:

    plain          no profiler
    cupti_floor    the CUPTI activity floor (CuptiFloor below): a minimal
                   ctypes client of the libcupti proton loads that enables
                   only CONCURRENT_KERNEL, MEMCPY and MEMSET activity records
                   with buffer callbacks, and no API callbacks at all
    callback_floor the floor plus what attributing a launch to the scope it
                   was made in needs (CuptiCallbackFloor below): a CUPTI
                   subscription with a callback that does nothing, enabled on
                   the driver entry points proton enables (cuLaunch*,
                   cuGraphLaunch*, cuMemcpy*, cuMemset*)
    proton         proton.start(backend="cupti")
    proton_hook    proton.start(backend="cupti", hook="triton")
    triton         triton.profiler.start()           (Triton's own Proton)
    triton_hook    triton.profiler.start(hook="triton")
    torch          torch.profiler.profile(activities=[CPU, CUDA])

Each process builds the workloads (compiles, warms up, captures), starts its
profiler, times --repeats loops of each workload (its median loop is kept),
then stops the profiler. A priming process first compiles the MLP once, so
that every measured process finds Inductor's and Triton's caches warm.
"vs plain" divides a variant's median (over rounds) by plain's; "paired" is
the median over rounds of the variant's loop over the same round's plain
loop (its range after it); "- floor" subtracts cupti_floor's paired ratio.
The floor also counts the activity records of each workload's loops (a
forced flush after each workload, outside the timed loops): activities per
iteration, from which "us per activity" = (variant loop - plain loop) /
activities per loop. For graph_replay an activity is a kernel node of a
replay (one cudaGraphLaunch per iteration). Proton's, Triton's and torch's
counts of what they saw are printed beside the floor's.

--paired (the way to read compiled_mlp and eager_block): each variant's
process (plain is not run on its own) times, per workload and --cycles
cycle, a plain loop and, in alternating order, the second loop of a fresh
session of the variant (the first is reported apart as "first loop": what a
session pays once per kernel, graph and stream); the ratio of the two loops,
a few hundred ms apart in one process, leaves out what differs between
processes (GPU clocks, Inductor's and CUPTI's first-use costs), which moved
every variant's loop from 0.7x to 2.2x between processes. Reported: the
median ratio over all pairs with its quartiles.

Target: proton's paired ratio within 0.03 of cupti_floor's in the
same run, and below Triton's profiler's and torch.profiler's (proton_hook
against triton_hook and torch), per workload.

Run on the GPU machine (torch, Triton 3.6 and this proton importable):

    python3 bench/bench_host_workloads.py --out /tmp/host_workloads/host_workloads

The defaults (3 workloads, 7 variants, --rounds 3, --repeats 5) start 1
priming process and 21 measured ones; expected about 5 minutes on an H100
with cold caches (an estimate: about 10 s per process for Python, torch's
import, CUDA start-up and a warm torch.compile, plus up to a minute of cold
compiling in the priming process; not yet measured). No process starts
after --deadline-s (default 480 s) would be exceeded, so a run stays under
the GPU machine's 10 minutes per command; a cut-off run still summarizes
its complete processes, and <out>.partial.json is rewritten after every
round. Writes <out>.json and <out>.md, and prints the tables.
"""

import argparse
import contextlib
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

WORKLOADS = ("compiled_mlp", "eager_block", "graph_replay")
VARIANTS = ("plain", "cupti_floor", "callback_floor", "proton", "proton_hook", "triton", "triton_hook", "torch")
FLOOR_MARGIN = 0.03  # the target: proton within this of the floor's ratio
RIVALS = {"proton": ("triton", "torch"), "proton_hook": ("triton_hook", "torch")}


# -- workloads -----------------------------------------------------------------


class Workload:
    """A built workload: `step` runs one iteration; `keep` holds what the
    step needs alive (modules, tensors, the graph)."""

    def __init__(self, name: str, iterations: int, step, describe: dict, keep=()):
        self.name = name
        self.iterations = iterations
        self.step = step
        self.describe = describe
        self.keep = keep


def _configure_inductor(launcher: str) -> dict:
    import torch._inductor.config as config

    settings = {"compile_threads": 1}
    if launcher == "triton":
        # The name changed across torch versions; set whichever exists.
        for key in ("use_static_cuda_launcher", "use_static_triton_launcher"):
            if hasattr(config, key):
                settings[key] = False
    applied = {}
    for key, value in settings.items():
        if hasattr(config, key):
            setattr(config, key, value)
            applied[key] = value
    return applied


def build_compiled_mlp(args) -> Workload:
    import torch

    applied = _configure_inductor(args.inductor_launcher)
    torch.manual_seed(0)
    width, layers = args.mlp_width, args.mlp_layers
    modules = []
    for index in range(layers):
        modules.append(torch.nn.Linear(width, width))
        if index < layers - 1:
            modules.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*modules).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    inputs = torch.randn(args.mlp_batch, width, device="cuda")
    labels = torch.randn(args.mlp_batch, width, device="cuda")

    def mlp_loss(x, y):
        return torch.nn.functional.mse_loss(model(x), y)

    compiled_loss = torch.compile(mlp_loss, mode="default")

    def step():
        loss = compiled_loss(inputs, labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    for _ in range(args.warmup):  # the first step compiles forward and backward
        step()
    torch.cuda.synchronize()
    describe = {
        "layers": layers,
        "width": width,
        "batch": args.mlp_batch,
        "dtype": "float32",
        "compile_mode": "default",
        "inductor_launcher": args.inductor_launcher,
        "inductor_config": applied,
    }
    return Workload("compiled_mlp", args.mlp_steps, step, describe, (model, optimizer, inputs, labels))


def _transformer_block(args):
    import torch
    import torch.nn.functional as F

    width, heads = args.block_width, args.block_heads

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = torch.nn.LayerNorm(width)
            self.qkv = torch.nn.Linear(width, 3 * width)
            self.proj = torch.nn.Linear(width, width)
            self.norm2 = torch.nn.LayerNorm(width)
            self.fc1 = torch.nn.Linear(width, 4 * width)
            self.fc2 = torch.nn.Linear(4 * width, width)

        def forward(self, x):
            batch, seq, _ = x.shape
            qkv = self.qkv(self.norm1(x)).view(batch, seq, 3, heads, width // heads)
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
            attention = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(attention.transpose(1, 2).reshape(batch, seq, width))
            return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))

    torch.manual_seed(0)
    block = Block().cuda().to(torch.bfloat16).eval()
    x = torch.randn(args.block_batch, args.block_seq, width, device="cuda", dtype=torch.bfloat16)
    describe = {
        "batch": args.block_batch,
        "seq": args.block_seq,
        "width": width,
        "heads": heads,
        "mlp": 4 * width,
        "dtype": "bfloat16",
    }
    return block, x, describe


def build_eager_block(args) -> Workload:
    import torch

    block, x, describe = _transformer_block(args)

    def step():
        with torch.no_grad():
            block(x)

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    return Workload("eager_block", args.block_iterations, step, describe, (block, x))


def build_graph_replay(args) -> Workload:
    import torch

    block, x, describe = _transformer_block(args)
    side = torch.cuda.Stream()  # warm up off the capturing stream, as CUDA graphs need
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(args.warmup):
            block(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        out = block(x)
    torch.cuda.synchronize()
    step = graph.replay
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    describe = dict(describe, captured="eager_block's forward, before the profiler starts")
    return Workload("graph_replay", args.replays, step, describe, (block, x, out, graph))


BUILDERS = {"compiled_mlp": build_compiled_mlp, "eager_block": build_eager_block, "graph_replay": build_graph_replay}


def timed_loop(workload: Workload) -> float:
    import torch

    step = workload.step
    start = time.perf_counter()
    for _ in range(workload.iterations):
        step()
    torch.cuda.synchronize()
    return time.perf_counter() - start


# -- the CUPTI activity floor ----------------------------------------------------

# CUpti_ActivityKind (cupti_activity.h)
KIND_MEMCPY, KIND_MEMSET, KIND_KERNEL, KIND_CONCURRENT_KERNEL = 1, 2, 3, 10
FLOOR_KINDS = {"CONCURRENT_KERNEL": KIND_CONCURRENT_KERNEL, "MEMCPY": KIND_MEMCPY, "MEMSET": KIND_MEMSET}
FLUSH_FORCED = 1  # CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
CUPTI_SUCCESS = 0

# CUpti_BuffersCallbackRequestFunc(uint8_t **buffer, size_t *size, size_t *maxNumRecords)
_REQUEST = ctypes.CFUNCTYPE(
    None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)
)
# CUpti_BuffersCallbackCompleteFunc(CUcontext, uint32_t streamId, uint8_t *buffer, size_t size, size_t validSize)
_COMPLETE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)


class CuptiFloor:
    """The least a CUPTI kernel tracer does, with ctypes against the
    libcupti proton would load (proton.host.libraries.find_cupti()).

    start(): cuptiActivityRegisterCallbacks with two buffer callbacks, then
    cuptiActivityEnable for CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, _MEMCPY
    and _MEMSET, nothing else. No cuptiSubscribe: no driver or runtime API
    callbacks, no resource (graph node) callbacks, no NVTX, no calling
    context. Buffers: 4 MiB from aligned_alloc(8, ...), as proton's runtime
    requests (lib/Host/CuptiTracer.cpp), maxNumRecords 0. A completed buffer
    is only queued (its pointer and valid size); its records are read after
    the timed loops, so the floor spends no host time per record while
    timed (a profiler must read its records somewhere).
    after_workload(): cuptiActivityFlushAll(FLUSH_FORCED) once the loops
    have synchronized, then counts the queued records by kind (outside the
    timed loops: the counts give the activities per iteration) and frees the
    buffers. stop(): a last flush, cuptiActivityDisable of the three kinds
    and cuptiFinalize (proton's stop detaches CUPTI the same way).

    The buffer callbacks are Python (ctypes): CUPTI calls them when a buffer
    fills (on its own thread, taking the GIL) and at flushes; at 4 MiB per
    buffer that is rare while timed.
    """

    BUFFER_BYTES = 4 << 20

    def __init__(self):
        from proton.host.libraries import find_cupti

        self.path = find_cupti()
        cupti = ctypes.CDLL(self.path)
        libc = ctypes.CDLL(None)
        libc.aligned_alloc.restype = ctypes.c_void_p
        libc.aligned_alloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
        libc.free.restype = None
        libc.free.argtypes = [ctypes.c_void_p]
        cupti.cuptiActivityRegisterCallbacks.argtypes = [_REQUEST, _COMPLETE]
        cupti.cuptiActivityEnable.argtypes = [ctypes.c_int]
        cupti.cuptiActivityDisable.argtypes = [ctypes.c_int]
        cupti.cuptiActivityFlushAll.argtypes = [ctypes.c_uint32]
        cupti.cuptiActivityGetNextRecord.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
        cupti.cuptiActivityGetNumDroppedRecords.argtypes = [
            ctypes.c_void_p,
            ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_size_t),
        ]
        cupti.cuptiGetResultString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        cupti.cuptiGetVersion.argtypes = [ctypes.POINTER(ctypes.c_uint32)]
        self._cupti, self._libc = cupti, libc
        self._request = _REQUEST(self._on_request)  # kept alive as long as CUPTI may call them
        self._complete = _COMPLETE(self._on_complete)
        self._completed = []  # (buffer address, valid bytes), read by _drain
        self.buffers = 0
        self.dropped = 0
        self.version = None
        version = ctypes.c_uint32(0)
        if cupti.cuptiGetVersion(ctypes.byref(version)) == CUPTI_SUCCESS:
            self.version = version.value

    def _check(self, result: int, what: str) -> None:
        if result != CUPTI_SUCCESS:
            text = ctypes.c_char_p()
            self._cupti.cuptiGetResultString(result, ctypes.byref(text))
            why = text.value.decode() if text.value else f"error {result}"
            raise RuntimeError(f"{what} failed: {why}")

    def _on_request(self, buffer, size, max_records):
        address = self._libc.aligned_alloc(8, self.BUFFER_BYTES)
        buffer[0] = address
        size[0] = self.BUFFER_BYTES if address else 0
        max_records[0] = 0

    def _on_complete(self, context, stream_id, buffer, size, valid):
        if buffer:
            self._completed.append((buffer, valid))
        dropped = ctypes.c_size_t(0)
        if self._cupti.cuptiActivityGetNumDroppedRecords(context, stream_id, ctypes.byref(dropped)) == CUPTI_SUCCESS:
            self.dropped += dropped.value

    def start(self) -> None:
        self._check(self._cupti.cuptiActivityRegisterCallbacks(self._request, self._complete), "register callbacks")
        for name, kind in FLOOR_KINDS.items():
            self._check(self._cupti.cuptiActivityEnable(kind), f"cuptiActivityEnable({name})")

    def _drain(self) -> dict:
        counts = {}
        while self._completed:
            buffer, valid = self._completed.pop(0)
            self.buffers += 1
            record = ctypes.c_void_p()  # NULL: the buffer's first record
            while self._cupti.cuptiActivityGetNextRecord(buffer, valid, ctypes.byref(record)) == CUPTI_SUCCESS:
                kind = ctypes.c_uint32.from_address(record.value).value
                counts[kind] = counts.get(kind, 0) + 1
            self._libc.free(buffer)
        return {
            "kernels": counts.get(KIND_CONCURRENT_KERNEL, 0) + counts.get(KIND_KERNEL, 0),
            "memcpy": counts.get(KIND_MEMCPY, 0),
            "memset": counts.get(KIND_MEMSET, 0),
            "activities": sum(counts.values()),
        }

    def after_workload(self) -> dict:
        self._check(self._cupti.cuptiActivityFlushAll(FLUSH_FORCED), "cuptiActivityFlushAll")
        return self._drain()

    def stop(self) -> dict:
        import torch

        torch.cuda.synchronize()
        self._check(self._cupti.cuptiActivityFlushAll(FLUSH_FORCED), "cuptiActivityFlushAll")
        for kind in FLOOR_KINDS.values():
            self._cupti.cuptiActivityDisable(kind)
        left = self._drain()
        finalize = self._cupti.cuptiFinalize()
        return {"left_after_last_workload": left, "cupti_finalize": finalize}


# CUpti_CallbackDomain (cupti_callbacks.h)
DOMAIN_DRIVER_API = 1
# CUpti_CallbackFunc(void *userdata, CUpti_CallbackDomain, CUpti_CallbackId, const void *cbdata)
_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p)
DRIVER_PREFIXES = (b"cuLaunch", b"cuGraphLaunch", b"cuMemcpy", b"cuMemset")  # proton's (lib/Host/CuptiTracer.cpp)


class CuptiCallbackFloor(CuptiFloor):
    """The activity floor plus a driver-API callback on every launch, copy
    and set, that does nothing: what any profiler that attributes a launch
    to the host context it was made in (a scope, a call path) pays CUPTI for
    the callback itself, enter and exit, before doing any work in it.

    The callback is a C function that ignores its arguments: libc's `abs`
    (it reads the first argument, the NULL userdata, and returns; CUPTI
    ignores the result). A Python (ctypes) callback would measure the GIL
    and the interpreter, not CUPTI. Enabled by name like proton: every
    driver callback id whose name (cuptiGetCallbackName) starts with
    cuLaunch, cuGraphLaunch, cuMemcpy or cuMemset; no resource or NVTX
    callbacks (they fire at graph capture and NVTX ranges, neither timed).
    """

    MAX_CBID = 2048  # above CUPTI_DRIVER_TRACE_CBID_SIZE of CUDA 12/13

    def __init__(self):
        super().__init__()
        cupti = self._cupti
        cupti.cuptiSubscribe.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_void_p]
        cupti.cuptiUnsubscribe.argtypes = [ctypes.c_void_p]
        cupti.cuptiEnableCallback.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
        cupti.cuptiGetCallbackName.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.POINTER(ctypes.c_char_p)]
        self._noop = ctypes.cast(self._libc.abs, ctypes.c_void_p)
        self._subscriber = ctypes.c_void_p()
        self.enabled_callbacks = 0

    def start(self) -> None:
        self._check(self._cupti.cuptiSubscribe(ctypes.byref(self._subscriber), self._noop, None), "cuptiSubscribe")
        name = ctypes.c_char_p()
        for cbid in range(1, self.MAX_CBID):
            if self._cupti.cuptiGetCallbackName(DOMAIN_DRIVER_API, cbid, ctypes.byref(name)) != CUPTI_SUCCESS:
                continue
            if name.value and name.value.startswith(DRIVER_PREFIXES):
                self._check(
                    self._cupti.cuptiEnableCallback(1, self._subscriber, DOMAIN_DRIVER_API, cbid),
                    f"cuptiEnableCallback({name.value.decode()})",
                )
                self.enabled_callbacks += 1
        super().start()

    def stop(self) -> dict:
        self._cupti.cuptiUnsubscribe(self._subscriber)
        return {**super().stop(), "enabled_callbacks": self.enabled_callbacks}


# -- one process per variant ------------------------------------------------------


class Session:
    """Starts and stops the variant's profiler around the timed loops."""

    def __init__(self, variant: str, path: str):
        self.variant = variant
        self.path = path
        self.info = {}
        self._floor = None
        self._torch = None

    def start(self) -> None:
        variant = self.variant
        if variant in ("cupti_floor", "callback_floor"):
            self._floor = CuptiFloor() if variant == "cupti_floor" else CuptiCallbackFloor()
            self._floor.start()
            self.info.update(cupti_path=self._floor.path, cupti_version=self._floor.version)
        elif variant in ("proton", "proton_hook"):
            import proton

            proton.start(self.path, backend="cupti", quiet=True, hook="triton" if variant == "proton_hook" else None)
            with contextlib.suppress(Exception):
                from proton import _host

                self.info["cupti_path"] = _host.cupti_path()
        elif variant in ("triton", "triton_hook"):
            import triton.profiler as tp

            tp.start(self.path, hook="triton" if variant == "triton_hook" else None)
        elif variant == "torch":
            import torch

            activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            self._torch = torch.profiler.profile(activities=activities)
            self._torch.__enter__()
        elif variant != "plain":
            raise ValueError(f"unknown variant {variant!r}")

    def after_workload(self):
        """The floor's counts of the workload just timed (None for others)."""
        return self._floor.after_workload() if self._floor else None

    def stop(self) -> None:
        variant = self.variant
        if variant in ("cupti_floor", "callback_floor"):
            self.info.update(self._floor.stop(), buffers=self._floor.buffers, dropped=self._floor.dropped)
        elif variant in ("proton", "proton_hook"):
            import proton

            report = proton.finalize()
            self.info.update(
                kernels_seen=report.kernels,
                activities_seen=report.activities,
                unattributed=report.unattributed,
                dropped=report.dropped_records,
                warnings=list(report.warnings),
            )
        elif variant in ("triton", "triton_hook"):
            import triton.profiler as tp
            from bench_host import _count_kernels

            tp.finalize()
            self.info["kernels_seen"] = _count_kernels(self.path + ".hatchet")
        elif variant == "torch":
            from torch.autograd import DeviceType

            self._torch.__exit__(None, None, None)
            device = [e for e in self._torch.events() if e.device_type == DeviceType.CUDA]
            self.info["activities_seen"] = len(device)
            self.info["kernels_seen"] = sum(1 for e in device if not e.name.startswith(("Memcpy", "Memset")))


def child(variant: str, names: list, args, out_dir: str) -> dict:
    build_start = time.perf_counter()
    workloads = [BUILDERS[name](args) for name in names]
    build_s = time.perf_counter() - build_start

    session = Session(variant, os.path.join(out_dir, f"{variant}_{os.getpid()}"))
    session_start = time.perf_counter()
    session.start()
    results = {}
    for workload in workloads:
        loops = [timed_loop(workload) for _ in range(args.repeats)]
        results[workload.name] = {
            "loop_s": statistics.median(loops),
            "loops_s": loops,
            "iterations": workload.iterations,
            "describe": workload.describe,
        }
        counts = session.after_workload()
        if counts is not None:
            results[workload.name]["floor_counts"] = counts
    session.stop()
    return {
        "variant": variant,
        "workloads": results,
        "build_s": build_s,
        "session_s": time.perf_counter() - session_start,
        **session.info,
    }


def paired_child(variant: str, names: list, args, out_dir: str) -> dict:
    """--paired: in one process, for each workload and cycle, a plain loop
    and the second loop inside a fresh session of `variant`, in alternating
    order, so that each ratio divides two loops a few hundred ms apart in
    the same process (process-level effects cancel). The session's first
    loop is kept apart (first_in_session_s): it pays what a session does
    once per kernel (CUPTI and the profiler meeting each function, graph
    and stream for the first time), which a long run amortizes. One
    unmeasured session first pays the process's first-use costs."""
    workloads = [BUILDERS[name](args) for name in names]
    warm = Session(variant, os.path.join(out_dir, f"{variant}_{os.getpid()}_warm"))
    warm.start()
    for workload in workloads:
        timed_loop(workload)
        warm.after_workload()
    warm.stop()
    results = {}
    for workload in workloads:
        pairs = []
        for cycle in range(args.cycles):
            session = Session(variant, os.path.join(out_dir, f"{variant}_{os.getpid()}_{workload.name}_{cycle}"))
            loops = {}
            for kind in ("plain", "profiled") if cycle % 2 == 0 else ("profiled", "plain"):
                if kind == "plain":
                    loops[kind] = [timed_loop(workload) for _ in range(args.loops_per_side)]
                    continue
                session.start()
                loops["first_in_session"] = timed_loop(workload)
                loops[kind] = [timed_loop(workload) for _ in range(args.loops_per_side)]
                counts = session.after_workload()
                session.stop()
            pairs.append(
                {
                    # The fastest of a side's loops: interference only ever adds time.
                    "plain_s": min(loops["plain"]),
                    "profiled_s": min(loops["profiled"]),
                    "plain_loops_s": loops["plain"],
                    "profiled_loops_s": loops["profiled"],
                    "first_in_session_s": loops["first_in_session"],
                    "floor_counts": counts,
                }
            )
        results[workload.name] = {"iterations": workload.iterations, "pairs": pairs, "describe": workload.describe}
    return {"variant": variant, "workloads": results}


def _subtract_floor(rows: dict) -> None:
    """Each profiled row's paired ratio minus cupti_floor's (the floor's own
    row gets 0; plain, the reference of every ratio, gets none), and minus
    callback_floor's where that was run."""
    for floor_variant, key in (("cupti_floor", "minus_floor"), ("callback_floor", "minus_callback_floor")):
        floor = rows.get(floor_variant, {}).get("paired_ratio")
        if floor is None:
            continue
        for row in rows.values():
            if row.get("paired_ratio") is not None and row["variant"] != "plain":
                row[key] = row["paired_ratio"] - floor


def summarize_paired(runs: list, workloads: list, variants: list) -> dict:
    ok = [r for r in runs if "error" not in r]
    summary = {}
    for name in workloads:
        rows = {}
        iterations = None
        for variant in variants:
            pairs = [p for r in ok if r["variant"] == variant for p in r["workloads"].get(name, {}).get("pairs", [])]
            if not pairs:
                rows[variant] = {"variant": variant, "error": True}
                continue
            iterations = next(r["workloads"][name]["iterations"] for r in ok if r["variant"] == variant)
            ratios = sorted(p["profiled_s"] / p["plain_s"] for p in pairs)
            first = [p["first_in_session_s"] / p["plain_s"] for p in pairs if "first_in_session_s" in p]
            extra = statistics.median(p["profiled_s"] - p["plain_s"] for p in pairs)
            rows[variant] = {
                "variant": variant,
                "plain_loop_ms": statistics.median(p["plain_s"] for p in pairs) * 1e3,
                "paired_ratio": statistics.median(ratios),
                "quartiles": [ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]],
                "samples": len(ratios),
                "us_per_iteration_over_plain": extra / iterations * 1e6,
                "first_loop_ratio": statistics.median(first) if first else None,
            }
        _subtract_floor(rows)
        summary[name] = {"iterations": iterations, "rows": [rows[v] for v in variants]}
    return summary


def markdown_paired(summary: dict, config: dict) -> str:
    machine = config.get("machine") or {}
    lines = [
        f"Launch-bound workloads on {machine.get('gpu', '?')} (torch {machine.get('torch', '?')}, Triton "
        f"{machine.get('triton', '?')}), paired in process: {config['rounds']} processes per variant, "
        f"{config['cycles']} cycles per workload and process, each a plain loop and a loop in a fresh session "
        "(alternating order), the session's second loop timed. 'paired' is the median of the loop ratios "
        "(quartiles after it); '- floor' subtracts cupti_floor's, '- callback floor' callback_floor's; "
        "'first loop' is the session's first loop over the plain one (once-per-session costs included).",
        "",
        "| workload | variant | plain loop ms | paired (quartiles) | - floor | - callback floor | us/iteration "
        "| first loop | pairs |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, part in summary.items():
        for row in part["rows"]:
            if row.get("error"):
                lines.append(f"| {name} | {row['variant']} | failed | | | | | | |")
                continue
            q = row["quartiles"]
            lines.append(
                f"| {name} | {row['variant']} | {row['plain_loop_ms']:.2f} | {row['paired_ratio']:.3f}x "
                f"({q[0]:.3f}-{q[1]:.3f}) | {_fmt(row.get('minus_floor'), '+.3f')} | "
                f"{_fmt(row.get('minus_callback_floor'), '+.3f')} | {row['us_per_iteration_over_plain']:.1f} | "
                f"{_fmt(row.get('first_loop_ratio'), '.3f')}x | {row['samples']} |"
            )
    return "\n".join(lines) + "\n"


def prime(names: list, args) -> dict:
    """Compiles the workloads once (warm caches for every measured process)
    and says what machine and versions the run is on."""
    import torch
    import triton

    start = time.perf_counter()
    for name in names:
        timed_loop(BUILDERS[name](args))
    return {
        "prime_s": time.perf_counter() - start,
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": triton.__version__,
        "python": sys.version.split()[0],
    }


# -- the parent: rounds, summary, tables --------------------------------------------


def _child_command(args, what: str, work: str) -> list:
    return [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        what,
        "--child-dir",
        work,
        "--workloads",
        ",".join(args.workload_list),
        "--repeats",
        str(args.repeats),
        "--warmup",
        str(args.warmup),
        "--mlp-steps",
        str(args.mlp_steps),
        "--mlp-layers",
        str(args.mlp_layers),
        "--mlp-width",
        str(args.mlp_width),
        "--mlp-batch",
        str(args.mlp_batch),
        "--block-iterations",
        str(args.block_iterations),
        "--block-batch",
        str(args.block_batch),
        "--block-seq",
        str(args.block_seq),
        "--block-width",
        str(args.block_width),
        "--block-heads",
        str(args.block_heads),
        "--replays",
        str(args.replays),
        "--cycles",
        str(args.cycles),
        "--loops-per-side",
        str(args.loops_per_side),
        *(["--paired"] if args.paired else []),
        "--inductor-launcher",
        args.inductor_launcher,
    ]


def _run_child(args, what: str, work: str, timeout: float) -> dict:
    started = time.monotonic()
    try:
        proc = subprocess.run(_child_command(args, what, work), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as error:
        tail = (error.stderr or b"")[-2000:]
        tail = tail.decode(errors="replace") if isinstance(tail, bytes) else tail
        return {"error": f"timed out after {timeout:.0f} s\n{tail}", "wall_s": time.monotonic() - started}
    if proc.returncode != 0:
        return {"error": proc.stderr[-3000:], "wall_s": time.monotonic() - started}
    for line in reversed(proc.stdout.strip().splitlines()):  # the child's result; a library may print after it
        if line.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):
                result = json.loads(line)
                result["wall_s"] = time.monotonic() - started
                return result
    return {
        "error": "no result line\n" + proc.stdout[-1500:] + proc.stderr[-1500:],
        "wall_s": time.monotonic() - started,
    }


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(runs: list, workloads: list, variants: list) -> dict:
    ok = [r for r in runs if "error" not in r]
    summary = {}
    for name in workloads:
        done = [r for r in ok if name in r.get("workloads", {})]
        plain = {r["round"]: r["workloads"][name]["loop_s"] for r in done if r["variant"] == "plain"}
        floors = [r["workloads"][name].get("floor_counts") for r in done if r["variant"] == "cupti_floor"]
        floors = [f for f in floors if f]
        iterations = next((r["workloads"][name]["iterations"] for r in done), None)
        repeats = next((len(r["workloads"][name]["loops_s"]) for r in done), None)
        per_loop = None
        counts = {}
        if floors and iterations and repeats:
            for key in ("activities", "kernels", "memcpy", "memset"):
                counts[key] = statistics.median(f[key] for f in floors) / repeats
            per_loop = counts["activities"]
        plain_loop = _median(plain.values())
        rows = {}
        for variant in variants:
            mine = [r for r in done if r["variant"] == variant]
            if not mine:
                rows[variant] = {"variant": variant, "error": True}
                continue
            loop = statistics.median(r["workloads"][name]["loop_s"] for r in mine)
            paired = [r["workloads"][name]["loop_s"] / plain[r["round"]] for r in mine if r["round"] in plain]
            extra = (loop - plain_loop) if plain_loop else None
            rows[variant] = {
                "variant": variant,
                "loop_ms": loop * 1e3,
                "ratio": loop / plain_loop if plain_loop else None,
                "paired_ratio": statistics.median(paired) if paired else None,
                "paired_range": [min(paired), max(paired)] if paired else None,
                "samples": len(paired),
                "us_per_iteration_over_plain": extra / iterations * 1e6 if extra is not None else None,
                "us_per_activity_over_plain": extra / per_loop * 1e6 if extra is not None and per_loop else None,
            }
        _subtract_floor(rows)
        targets = []
        for variant, rivals in RIVALS.items():
            mine = rows.get(variant, {}).get("paired_ratio")
            if mine is None:
                continue
            target = {"variant": variant, "paired_ratio": mine, "minus_floor": rows[variant].get("minus_floor")}
            if target["minus_floor"] is not None:
                target["within_floor_margin"] = target["minus_floor"] <= FLOOR_MARGIN
            for rival in rivals:
                theirs = rows.get(rival, {}).get("paired_ratio")
                if theirs is not None:
                    target[f"below_{rival}"] = mine < theirs
            targets.append(target)
        summary[name] = {
            "iterations": iterations,
            "repeats": repeats,
            "plain_loop_ms": plain_loop * 1e3 if plain_loop else None,
            "per_iteration": {k: v / iterations for k, v in counts.items()} if counts else None,
            "rows": [rows[v] for v in variants],
            "targets": targets,
        }
    return summary


def _fmt(value, spec: str, none: str = "-") -> str:
    return none if value is None else format(value, spec)


def markdown(summary: dict, config: dict) -> str:
    machine = config.get("machine") or {}
    lines = [
        f"Launch-bound workloads on {machine.get('gpu', '?')} (torch {machine.get('torch', '?')}, Triton "
        f"{machine.get('triton', '?')}); {config['rounds']} rounds, one process per variant and round (every "
        f"workload in one profiling session), {config['repeats']} loops per workload and process, median kept.",
        "'vs plain' divides medians over rounds; 'paired' is the median over rounds of each loop over the same "
        "round's plain loop (range after it); '- floor' subtracts cupti_floor's paired ratio; 'us/activity' is "
        "(variant - plain) / activity records per loop, counted by the floor.",
        "",
    ]
    for name, part in summary.items():
        per = part["per_iteration"] or {}
        lines += [
            f"### {name}",
            "",
            f"{part['iterations']} iterations per loop; plain loop {_fmt(part['plain_loop_ms'], '.2f')} ms; per "
            f"iteration: {_fmt(per.get('activities'), '.1f')} activities ({_fmt(per.get('kernels'), '.1f')} kernels, "
            f"{_fmt(per.get('memcpy'), '.1f')} memcpy, {_fmt(per.get('memset'), '.1f')} memset).",
            "",
            "| variant | loop ms | vs plain | paired (range) | - floor | us/iteration | us/activity |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for row in part["rows"]:
            if row.get("error"):
                lines.append(f"| {row['variant']} | failed | | | | | |")
                continue
            spread = row["paired_range"]
            paired = f"{row['paired_ratio']:.3f}x ({spread[0]:.3f}-{spread[1]:.3f})" if spread else "-"
            lines.append(
                f"| {row['variant']} | {row['loop_ms']:.2f} | {_fmt(row['ratio'], '.3f')}x | {paired} | "
                f"{_fmt(row.get('minus_floor'), '+.3f')} | {_fmt(row['us_per_iteration_over_plain'], '.1f')} | "
                f"{_fmt(row['us_per_activity_over_plain'], '.2f')} |"
            )
        lines.append("")
    lines += [
        f"Targets: proton within {FLOOR_MARGIN} of cupti_floor (paired), below Triton's profiler and torch.profiler.",
        "",
        "| workload | variant | paired | - floor | within | below Triton's | below torch |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    yes = {True: "yes", False: "no", None: "-"}
    for name, part in summary.items():
        for t in part["targets"]:
            rival = "below_triton_hook" if t["variant"] == "proton_hook" else "below_triton"
            lines.append(
                f"| {name} | {t['variant']} | {t['paired_ratio']:.3f}x | {_fmt(t.get('minus_floor'), '+.3f')} | "
                f"{yes[t.get('within_floor_margin')]} | {yes[t.get(rival)]} | {yes[t.get('below_torch')]} |"
            )
    seen = config.get("seen") or []
    if seen:
        lines += [
            "",
            "What each profiler saw per process (all workloads, all loops; median over rounds) against the "
            "floor's count of the same loops:",
            "",
            "| variant | kernels seen | activities seen | floor kernels | floor activities |",
            "| --- | --- | --- | --- | --- |",
        ]
        for s in seen:
            lines.append(
                f"| {s['variant']} | {_fmt(s['kernels_seen'], '.0f')} | {_fmt(s['activities_seen'], '.0f')} | "
                f"{_fmt(s['floor_kernels'], '.0f')} | {_fmt(s['floor_activities'], '.0f')} |"
            )
    return "\n".join(lines) + "\n"


def seen_counts(runs: list, variants: list) -> list:
    ok = [r for r in runs if "error" not in r]
    floors = [r for r in ok if r["variant"] == "cupti_floor"]

    def floor_total(key):
        totals = [sum(w.get("floor_counts", {}).get(key, 0) for w in r["workloads"].values()) for r in floors]
        return _median(totals)

    rows = []
    for variant in variants:
        if variant in ("plain", "cupti_floor", "callback_floor"):
            continue
        mine = [r for r in ok if r["variant"] == variant]
        if not mine:
            continue
        rows.append(
            {
                "variant": variant,
                "kernels_seen": _median(r.get("kernels_seen") for r in mine),
                "activities_seen": _median(r.get("activities_seen") for r in mine),
                "floor_kernels": floor_total("kernels"),
                "floor_activities": floor_total("activities"),
            }
        )
    return rows


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated, of: " + ", ".join(WORKLOADS))
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, of: " + ", ".join(VARIANTS))
    parser.add_argument("--rounds", type=int, default=3, help="processes per variant, interleaved")
    parser.add_argument("--repeats", type=int, default=5, help="timed loops per workload and process (median kept)")
    parser.add_argument("--out", default="bench/results/host_workloads", help="path prefix for .json and .md")
    parser.add_argument("--deadline-s", type=float, default=480.0, help="start no process that would end past this")
    parser.add_argument("--child-timeout", type=float, default=180.0, help="seconds per measured process")
    parser.add_argument("--warmup", type=int, default=5, help="untimed iterations of each workload after building it")
    parser.add_argument("--mlp-steps", type=int, default=30)
    parser.add_argument("--mlp-layers", type=int, default=8)
    parser.add_argument("--mlp-width", type=int, default=1024)
    parser.add_argument("--mlp-batch", type=int, default=64)
    parser.add_argument("--block-iterations", type=int, default=50)
    parser.add_argument("--block-batch", type=int, default=4)
    parser.add_argument("--block-seq", type=int, default=128)
    parser.add_argument("--block-width", type=int, default=256)
    parser.add_argument("--block-heads", type=int, default=4)
    parser.add_argument("--replays", type=int, default=200, help="graph replays per graph_replay loop")
    parser.add_argument(
        "--inductor-launcher",
        choices=("triton", "static"),
        default="triton",
        help="triton: Inductor launches through Triton's launcher, whose launch hooks hook='triton' uses; "
        "static: torch's default static launcher, which calls no Triton launch hooks",
    )
    parser.add_argument(
        "--paired",
        action="store_true",
        help="pair each profiled loop with a plain loop in the same process (fresh session per loop); "
        "the plain variant is then not run on its own",
    )
    parser.add_argument("--cycles", type=int, default=8, help="--paired: pairs per workload and process")
    parser.add_argument(
        "--loops-per-side",
        type=int,
        default=1,
        help="--paired: loops timed on each side of a pair (plain, and in the session after its first loop); "
        "the pair keeps each side's fastest (default 1)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.workload_list = [w for w in args.workloads.split(",") if w]
    if args.loops_per_side < 1:
        parser.error(f"--loops-per-side must be at least 1, not {args.loops_per_side}")
    args.variant_list = [v for v in args.variants.split(",") if v]
    unknown = [w for w in args.workload_list if w not in WORKLOADS] + [
        v for v in args.variant_list if v not in VARIANTS
    ]
    if unknown:
        parser.error(f"unknown workloads or variants: {', '.join(unknown)}")
    return args


def main() -> None:
    args = parse_args()
    if args.child == "prime":
        print(json.dumps(prime(args.workload_list, args)))
        return
    if args.child:
        run_child = paired_child if args.paired else child
        print(json.dumps(run_child(args.child, args.workload_list, args, args.child_dir)))
        return
    if args.paired:
        args.variant_list = [v for v in args.variant_list if v != "plain"]

    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="bench_host_workloads_")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    config = {
        "workloads": args.workload_list,
        "variants": args.variant_list,
        "rounds": args.rounds,
        "repeats": args.repeats,
        "paired": args.paired,
        "cycles": args.cycles,
        "loops_per_side": args.loops_per_side,
        "argv": sys.argv[1:],
    }
    print("priming: compiling the workloads once ...", file=sys.stderr)
    primed = _run_child(args, "prime", work, timeout=2 * args.child_timeout)
    if "error" in primed:
        print(f"priming FAILED\n{primed['error']}", file=sys.stderr)
        with open(args.out + ".json", "w") as f:
            json.dump({"config": config, "prime": primed}, f, indent=1)
        sys.exit(1)
    config["machine"] = primed
    print(f"primed in {primed['wall_s']:.1f} s on {primed['gpu']}", file=sys.stderr)

    runs = []
    longest = 0.0
    stopped = False
    for round_index in range(args.rounds):
        shift = round_index % len(args.variant_list)
        for variant in args.variant_list[shift:] + args.variant_list[:shift]:
            if time.monotonic() - started + longest > args.deadline_s:
                print(f"deadline: stopping before round {round_index} {variant}", file=sys.stderr)
                stopped = True
                break
            result = _run_child(args, variant, work, timeout=args.child_timeout)
            result.update(variant=variant, round=round_index)
            longest = max(longest, result["wall_s"])
            runs.append(result)
            if "error" in result:
                print(f"round {round_index} {variant}: FAILED\n{result['error']}", file=sys.stderr)
                continue
            loops = ", ".join(
                f"{n} {w['loop_s'] * 1e3:.2f} ms" if "loop_s" in w else f"{n} {len(w['pairs'])} pairs"
                for n, w in result["workloads"].items()
            )
            print(f"round {round_index} {variant}: {loops} ({result['wall_s']:.1f} s)", file=sys.stderr)
        with open(args.out + ".partial.json", "w") as f:  # what a cut-off run still leaves
            json.dump({"config": config, "runs": runs}, f, indent=1)
        if stopped:
            break

    config["stopped_at_deadline"] = stopped
    config["wall_s"] = time.monotonic() - started
    if args.paired:
        summary = summarize_paired(runs, args.workload_list, args.variant_list)
        text = markdown_paired(summary, config)
    else:
        summary = summarize(runs, args.workload_list, args.variant_list)
        config["seen"] = seen_counts(runs, args.variant_list)
        text = markdown(summary, config)
    with open(args.out + ".json", "w") as f:
        json.dump({"config": config, "runs": runs, "summary": summary}, f, indent=1)
    with open(args.out + ".md", "w") as f:
        f.write(text)
    print(text)
    print(f"total {config['wall_s']:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
