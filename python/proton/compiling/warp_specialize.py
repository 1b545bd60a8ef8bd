"""Which warps run which partition of a warp-specialized kernel
(`gl.warp_specialize`, TTGIR `ttg.warp_specialize`), so that traces can
label each warp's track and tests can check who recorded what.

The default partition runs on warps 0 .. num_warps-1 (and so does all code
outside a `ttg.warp_specialize` op). Worker partitions get the warps after
them, but not in source order: Triton's allocate-warp-groups pass, which runs
inside the `llir` stage, places partitions by size (largest first) and may
add padding partitions so that register reallocation covers whole warp
groups of 4. A 4-warp default partition with one 1-warp worker uses 8 warps:
the worker on warp 6, padding partitions of 2 and 1 warps on warps 4-5 and 7.
Rather than repeat that placement (which can change between Triton
releases), `partition_layout` runs Triton's own pass on a copy of the TTGIR
and reads the `warpGroupStartIds` it sets.

Why no context ops (Triton's Proton has init_ctx / save_ctx / restore_ctx
for warp specialization): its instrumentation lives in TTGIR, where partition
regions are isolated from the code around them, so the profiler's state (the
buffer pointer and write index) is stored to shared memory before the op and
reloaded inside each partition. Proton instruments Triton's LLVM IR, after
the partitions have been lowered into branches of the one kernel function:
every warp runs the kernel's entry block, where its segment (from its own
warp id, also written in its segment header) and record index are set up,
and reaches its partition through ordinary control flow that carries them.
No state crosses a region boundary, so none needs saving.
"""

from __future__ import annotations

import os
import re
import tempfile
import warnings

from .ttgir_text import braces, marker_pattern

WS_OP = "ttg.warp_specialize"
_START_IDS = re.compile(r"warpGroupStartIds\s*=\s*array<i32(?::\s*([-\d,\s]*))?>")
_PARTITION = re.compile(r"^\s*partition(\d+)\(.*\bnum_warps\((\d+)\)\s*\{\s*$")
_DEFAULT = re.compile(r"^\s*default\s*\{\s*$")


class LayoutError(ValueError):
    """The TTGIR of a warp-specialized kernel is not as expected."""


def _ops(text: str) -> tuple[list[dict], set[str]]:
    """Each `ttg.warp_specialize` op of `text`, in order: its start ids (None
    before Triton's pass), its partitions' warp counts, and the names of the
    scopes whose markers lie in each region ("default" or the partition
    index); and the scopes whose markers lie outside every op."""
    ops: list[dict] = []
    outside: set[str] = set()
    depth = op_depth = 0
    op = region = None
    for number, line in enumerate(text.splitlines(), 1):
        if op is None and WS_OP + "(" in line:
            ids = _START_IDS.search(line)
            op = {"line": number, "start_ids": None, "partitions": [], "scopes": {"default": set()}}
            if ids:
                op["start_ids"] = [int(x) for x in (ids.group(1) or "").replace(",", " ").split()]
            op_depth = depth
            ops.append(op)
        elif op is not None and region is None:
            if _DEFAULT.match(line):
                region = "default"
            elif match := _PARTITION.match(line):
                index, num_warps = int(match.group(1)), int(match.group(2))
                if index != len(op["partitions"]):
                    raise LayoutError(
                        f"TTGIR line {number}: partition{index} follows {len(op['partitions'])} partitions"
                    )
                op["partitions"].append(num_warps)
                op["scopes"][index] = set()
                region = index
        marker = marker_pattern().search(line)
        if marker:
            (op["scopes"][region] if region is not None else outside).add(marker.group(2))
        for brace in braces(line):
            depth += 1 if brace == "{" else -1
        if region is not None and depth == op_depth:
            # A region closed; after the last one the op's types follow: `} : (...) -> ...`.
            region = None
            if line.strip() != "}":
                op = None
    return ops, outside


def layout_from_text(before: str, after: str, total_warps: int, default_warps: int) -> dict:
    """The partition layout from a kernel's TTGIR before and after Triton's
    allocate-warp-groups pass (which adds `warpGroupStartIds` and padding
    partitions after the user's)."""
    user_ops, user_outside = _ops(before)
    placed_ops, _ = _ops(after)
    if len(user_ops) != len(placed_ops):
        raise LayoutError(f"{len(user_ops)} {WS_OP} ops before Triton's pass but {len(placed_ops)} after it")
    ops = []
    for user, placed in zip(user_ops, placed_ops):
        ids, sizes = placed["start_ids"], placed["partitions"]
        where = f"the {WS_OP} op at TTGIR line {placed['line']}"
        if ids is None or len(ids) != len(sizes):
            raise LayoutError(f"{where}: warpGroupStartIds {ids} do not match its {len(sizes)} partitions")
        if sizes[: len(user["partitions"])] != user["partitions"]:
            raise LayoutError(f"{where}: partitions of {sizes} warps, expected {user['partitions']} first")
        partitions = [
            {
                "start": start,
                "num_warps": n,
                "padding": i >= len(user["partitions"]),
                "scopes": sorted(user["scopes"].get(i, ())),
            }
            for i, (start, n) in enumerate(zip(ids, sizes))
        ]
        for p in partitions:
            if p["start"] < default_warps or p["start"] + p["num_warps"] > total_warps:
                raise LayoutError(
                    f"{where}: a partition on warps {p['start']}..{p['start'] + p['num_warps'] - 1}, "
                    f"outside the workers' warps {default_warps}..{total_warps - 1}"
                )
        ops.append({"default_scopes": sorted(user["scopes"]["default"]), "partitions": partitions})
    return {
        "total_warps": total_warps,
        "default_warps": default_warps,
        "ops": ops,
        "outside_scopes": sorted(user_outside),
    }


def partition_layout(ttgir: str, backend, options, total_warps: int, default_warps: int) -> dict | None:
    """The partition layout of a kernel, or None if it has no
    `ttg.warp_specialize`. Runs Triton's allocate-warp-groups pass on a copy
    of the TTGIR; if that fails the trace just lacks partition labels, so it
    warns rather than failing the compile."""
    if WS_OP + "(" not in ttgir:
        return None
    try:
        return layout_from_text(ttgir, _run_triton_pass(ttgir, backend, options), total_warps, default_warps)
    except Exception as error:  # labels are an aid: never fail a compile over them
        warnings.warn(
            f"Proton could not read the warp-specialization layout ({type(error).__name__}: {error}); "
            "trace tracks show warp ids without their partitions",
            stacklevel=3,
        )
        return None


def _run_triton_pass(ttgir: str, backend, options) -> str:
    from triton._C.libtriton import ir, passes

    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    fd, path = tempfile.mkstemp(suffix=".ttgir", prefix="proton-ws-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(ttgir)
        module = ir.parse_mlir_module(path, context)
    finally:
        os.unlink(path)
    manager = ir.pass_manager(context)
    # 3.8+ take whether the concurrency sanitizer is on, as make_llir passes it.
    consan = "consan" in str(getattr(options, "instrumentation_mode", "") or "")
    try:
        passes.ttgpuir.add_allocate_warp_groups(manager, consan)
    except TypeError:
        passes.ttgpuir.add_allocate_warp_groups(manager)
    manager.run(module, "proton-warp-groups")
    return str(module)


def warp_labels(layout: dict | None) -> dict[int, str]:
    """warp id -> its role: "default", "worker N" (the N-th worker function
    given to gl.warp_specialize) or "padding" (warps Triton added). A warp
    with several roles (several ops) gets them joined with " | "."""
    if not layout:
        return {}
    roles: dict[int, list[str]] = {w: ["default"] for w in range(layout["default_warps"])}
    for op in layout["ops"]:
        worker = 0
        for p in op["partitions"]:
            label = "padding" if p["padding"] else f"worker {worker}"
            worker += not p["padding"]
            for w in range(p["start"], p["start"] + p["num_warps"]):
                if label not in roles.setdefault(w, []):
                    roles[w].append(label)
    return {w: " | ".join([r for r in labels if r != "padding"] or ["padding"]) for w, labels in roles.items()}


def scope_warps(layout: dict) -> dict[str, list[int]]:
    """scope name -> the warp ids that record it: the partition's warps, or
    the default warps for scopes in the default partition or outside every
    op."""
    default = list(range(layout["default_warps"]))
    warps: dict[str, set[int]] = {name: set(default) for name in layout["outside_scopes"]}
    for op in layout["ops"]:
        for name in op["default_scopes"]:
            warps.setdefault(name, set()).update(default)
        for p in op["partitions"]:
            for name in p["scopes"]:
                warps.setdefault(name, set()).update(range(p["start"], p["start"] + p["num_warps"]))
    return {name: sorted(ws) for name, ws in warps.items()}
