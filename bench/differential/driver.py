"""One run of the differential harness: a library program (programs/) under
one session kind (sessions.py), in its own process. Writes to --out:
outputs.npz (every output tensor's bytes) with outputs.json (dtypes and
shapes), and report.json (what the session's finalize reported).

    python3 bench/differential/driver.py --library flaggems --kind mma --out DIR

Autotuning is made deterministic here, the same way in every run: each
autotuner tries its first AUTOTUNE_CONFIGS configs (after its own pruning)
and keeps the first that runs (its real timings are not used), so that two
runs pick the same configs whatever the timing noise."""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # bench/, for `differential`

AUTOTUNE_CONFIGS = 3


def deterministic_autotuning(limit: int = AUTOTUNE_CONFIGS) -> None:
    from triton.runtime import autotuner

    cls = autotuner.Autotuner
    prune, bench = cls.prune_configs, cls._bench

    def prune_configs(self, *args, **kwargs):
        return list(prune(self, *args, **kwargs))[:limit]

    def _bench(self, *args, config, **kwargs):
        timings = bench(self, *args, config=config, **kwargs)
        if not all(math.isfinite(t) for t in timings):
            return timings
        rank = next((i for i, c in enumerate(self.configs) if c is config or c == config), len(self.configs))
        return [float(rank)] * len(timings)

    cls.prune_configs, cls._bench = prune_configs, _bench


def save_outputs(outputs: dict, out: str) -> None:
    import numpy as np

    arrays, described = {}, {}
    for name, tensor in outputs.items():
        if tensor is None:
            continue
        flat = tensor.detach().contiguous().cpu().reshape(-1)
        arrays[name] = flat.view(__import__("torch").uint8).numpy()
        described[name] = {"dtype": str(tensor.dtype).replace("torch.", ""), "shape": list(tensor.shape)}
    np.savez(os.path.join(out, "outputs.npz"), **arrays)
    with open(os.path.join(out, "outputs.json"), "w") as f:
        json.dump(described, f, indent=1, sort_keys=True)


def report_dict(report) -> dict:
    """The parts of a session's report the harness checks."""
    if report is None:
        return {}
    out = {"summary": report.summary(), "warnings": list(report.warnings), "files": dict(report.files)}
    for key in ("events", "launches_kept", "launches_skipped", "dropped_events", "unmatched_records"):
        if hasattr(report, key):
            out[key] = getattr(report, key)
    for key in ("kernels", "activities", "unattributed", "dropped_records", "pc_samples"):
        if hasattr(report, key):
            out[key] = getattr(report, key)
    if hasattr(report, "errors"):
        out["errors"] = list(report.errors)
        out["per_kernel"] = report.per_kernel
        out["unrecorded"] = {k: {"launches": v["launches"], "reason": v["short"]} for k, v in report.unrecorded.items()}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", required=True)
    parser.add_argument("--kind", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--reference", action="store_true", help="the program in plain PyTorch")
    parser.add_argument("--parts", default="", help="comma-separated parts of the program (default: all)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    os.environ.setdefault("GEMS_VENDOR", "nvidia")  # else flag_gems runs every vendor's query at import
    os.environ.setdefault("FLAGGEMS_CACHE_DIR", os.path.join(args.out, "flaggems_cache"))

    from differential import sessions
    from differential.programs import LIBRARIES

    if args.library not in LIBRARIES:
        parser.error(f"unknown library {args.library!r}; valid: {', '.join(LIBRARIES)}")
    kind = sessions.KINDS[args.kind]
    deterministic_autotuning()
    program = importlib.import_module(f"differential.programs.{args.library}")
    parts = tuple(p for p in args.parts.split(",") if p) or program.PARTS
    import torch

    if args.library == "flaggems" and not args.reference:
        import flag_gems  # noqa: F401 - imported before any session, as a user's program does

    begin = time.time()
    scope = sessions.patch_scoped_kernel(args.library) if kind.scopes else None
    session = None
    if kind.start is not None:
        import proton

        session = proton.start(os.path.join(args.out, "profile"), quiet=True, **kind.start)
    outputs = program.run(not args.reference, parts)
    torch.cuda.synchronize()
    report = None
    if session is not None:
        import proton

        report = proton.finalize()
    seconds = time.time() - begin
    save_outputs(outputs, args.out)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(
            {
                "library": args.library,
                "kind": args.kind,
                "reference": args.reference,
                "parts": list(parts),
                "scope": scope,
                "seconds": round(seconds, 2),
                "report": report_dict(report),
            },
            f,
            indent=1,
            default=str,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
