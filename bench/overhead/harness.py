"""The benchmark run: what it records about the machine and configuration,
how a failing variant is isolated and recorded, and saving the results as
JSON and Markdown after every step."""

import json
import os
import platform
import shutil
import sys
import tempfile
import traceback

from .compile_time import run_compile
from .config import SECTIONS, TARGETS
from .device import run_device
from .dobench import run_dobench
from .preflight import run_preflight
from .profilers import Sessions
from .report import render_markdown, render_summary_table, summary_rows
from .triton_state import restore_triton_state, triton_state
from .util import err_str, git_commit, now_utc, slug


class Bench:
    """One run: the results dict, its JSON/Markdown files, and the guard
    that records any failure of a variant and goes on with the rest."""

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
            "attention_fwd": {
                "shape": list(kernels.ATTENTION_SHAPE),
                **kernels.ATTENTION_BLOCKS,
                **kernels.ATTENTION_OPTIONS,
            },
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
                self.fail(
                    where, rec, "left Triton's process state modified after finalize (restored): " + ", ".join(leaked)
                )
            self.cuda_ok()

    # ---- driver

    def run(self):
        print(
            f"GPU: {self.gpu_name}; torch {self.torch.__version__}, triton {self.triton.__version__}; "
            f"variants {', '.join(self.args.variants)}; sections {', '.join(self.args.only)}"
            f"{' (quick)' if self.args.quick else ''}",
            flush=True,
        )
        if not self.args.no_preflight:
            run_preflight(self)
        self.save()
        steps = {"device": run_device, "dobench": run_dobench, "compile": run_compile}
        for name in SECTIONS:
            if name not in self.args.only:
                continue
            try:
                steps[name](self)
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
