"""Starting and finalizing each variant's profiler around a block: proton's
instrumentation session, or the reference, Triton's own
`triton.profiler` instrumentation backend. Sizes (and deletes or keeps) the
files each session wrote."""

import contextlib
import os
import shutil
import time

from .util import err_str, file_sizes


def report_dict(report):
    """proton.recording.instrumentation_session.SessionReport -> plain dict (attributes per the contract)."""
    if report is None:
        return None
    out = {}
    for attr in ("events", "launches_kept", "launches_skipped", "dropped_events"):
        out[attr] = getattr(report, attr, None)
    files = getattr(report, "files", None) or {}
    out["files"] = {
        kind: {"path": str(path), "bytes": os.path.getsize(path) if os.path.isfile(path) else None}
        for kind, path in dict(files).items()
    }
    return out


class Sessions:
    """Starts/finalizes the profiler of a variant around a block."""

    def __init__(self, args, trace_dir):
        self.args = args
        self.trace_dir = trace_dir

    def _start(self, variant, path, data, proton_data):
        if variant == "proton":
            import proton

            return proton.start(
                path,
                backend="instrumentation",
                mode=self.args.proton_mode,
                max_launches_per_kernel=self.args.max_launches,
                data=proton_data,
            )
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
    def session(self, variant, label, info, data="tree", phase=None, proton_data=None):
        """`info` receives: trace_base, data, start_s, finalize_s, report (proton),
        files {path: bytes}, finalize_error. Finalize always runs; its error is
        recorded (and raised only if the block itself succeeded). The files are
        sized, then deleted, or with --keep-traces moved to <trace dir>/<phase>/
        (several sessions may share a label: see run_dobench). `proton_data`
        is proton's data= (None: its default, every format)."""
        if variant == "plain":
            yield
            return
        path = os.path.join(self.trace_dir, f"{label}_{variant}")
        info["trace_base"] = path
        if variant == "reference":
            info["data"] = data
        t0 = time.perf_counter()
        try:
            self._start(variant, path, data, proton_data)
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
