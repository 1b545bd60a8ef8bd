"""Comparisons of the harness's runs (driver.py's outputs), with numpy only:
which outputs two plain runs agree on bit for bit (deterministic), which of
those a session changed, and how far the library's plain results are from
PyTorch's (its own correctness, reported apart)."""

from __future__ import annotations

import json
import os

import numpy as np

#: numpy views of the dtypes the programs return (bf16 is widened by hand).
_FLOATS = {"float32": np.float32, "float16": np.float16, "float64": np.float64}
_INTS = {"int64": np.int64, "int32": np.int32, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}


def load(run_dir: str) -> dict[str, tuple[np.ndarray, dict]]:
    """name -> (raw bytes as uint8, {"dtype", "shape"})."""
    with open(os.path.join(run_dir, "outputs.json")) as f:
        described = json.load(f)
    with np.load(os.path.join(run_dir, "outputs.npz")) as arrays:
        return {name: (arrays[name], described[name]) for name in arrays.files}


def values(raw: np.ndarray, dtype: str) -> np.ndarray:
    """The numbers behind raw bytes, as float64."""
    if dtype == "bfloat16":
        return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dtype in _FLOATS:
        return raw.view(_FLOATS[dtype]).astype(np.float64)
    if dtype in _INTS:
        return raw.view(_INTS[dtype]).astype(np.float64)
    raise ValueError(f"no numeric view of dtype {dtype}")


def identical(a, b) -> bool:
    return a[1] == b[1] and a[0].shape == b[0].shape and np.array_equal(a[0], b[0])


def deterministic(first: dict, second: dict) -> tuple[list[str], list[str]]:
    """(outputs two plain runs give bit for bit, outputs they do not)."""
    same = sorted(n for n in first if n in second and identical(first[n], second[n]))
    return same, sorted(set(first) - set(same))


def difference(a, b) -> dict:
    """Where two outputs of one name differ: elements, the largest
    difference and the values there (NaN and inf compared as such)."""
    va, vb = values(a[0], a[1]["dtype"]), values(b[0], b[1]["dtype"])
    if va.shape != vb.shape:
        return {"shape": [a[1]["shape"], b[1]["shape"]]}
    differ = ~((va == vb) | (np.isnan(va) & np.isnan(vb)))
    if not differ.any():
        return {"elements": 0, "bytes_differ": True}
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.where(differ, np.abs(va - vb), 0.0)
    worst = int(np.nanargmax(np.where(np.isnan(gap), np.inf, gap)))
    return {
        "elements": int(differ.sum()),
        "of": int(va.size),
        "max_abs": float(gap[worst]),
        "at": [float(va[worst]), float(vb[worst])],
    }


def changed_by_session(plain: dict, session: dict, names: list[str]) -> dict[str, dict]:
    """The deterministic outputs (`names`) a session run did not reproduce,
    with how they differ; a missing output counts as changed."""
    changed = {}
    for name in names:
        if name not in session:
            changed[name] = {"missing": True}
        elif not identical(plain[name], session[name]):
            changed[name] = difference(plain[name], session[name])
    return changed


def against_reference(library: dict, reference: dict, rtol: float = 0.05) -> dict[str, dict]:
    """Outputs of the library's plain run that are far from PyTorch's: the
    largest difference above rtol times the reference's largest magnitude
    (or non-finite where PyTorch is finite)."""
    far = {}
    for name, ref in reference.items():
        if name not in library:
            continue
        lib_v, ref_v = values(*_raw(library[name])), values(*_raw(ref))
        if lib_v.shape != ref_v.shape:
            continue
        scale = float(np.nanmax(np.abs(ref_v))) if ref_v.size else 0.0
        with np.errstate(invalid="ignore", over="ignore"):
            gap = np.abs(lib_v - ref_v)
        nonfinite = bool((~np.isfinite(lib_v) & np.isfinite(ref_v)).any())
        worst = float(np.nanmax(gap)) if gap.size else 0.0
        if nonfinite or worst > rtol * max(scale, 1e-6):
            far[name] = {"max_abs": worst, "reference_max": scale, "nonfinite": nonfinite}
    return far


def _raw(entry):
    return entry[0], entry[1]["dtype"]
