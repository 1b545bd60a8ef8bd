"""Small helpers shared by the benchmark's parts: statistics that tolerate
empty lists, error text, run metadata and file bookkeeping."""

import datetime
import glob
import os
import re
import statistics
import subprocess

from . import BENCH_DIR


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
        out = subprocess.run(["git", "-C", BENCH_DIR, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(
            ["git", "-C", BENCH_DIR, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        if out.returncode == 0:
            return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except Exception:  # noqa: BLE001
        pass
    return None


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
