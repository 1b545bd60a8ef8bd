"""What Triton's software pipelining did to the scopes in a loop, read from
the TTGIR text it produced (the module the `llir` stage receives).

Markers are side-effecting inline assembly, so on NVIDIA Triton 3.6 keeps
both markers of a scope in the loop's last stage, in program order; the loads
the scope enclosed are moved to an earlier stage and issued iterations ahead,
outside the scope. The scope then measures waiting for data loaded earlier,
not the loads. `pipelining_warnings` names such scopes and the moved loads,
and scopes whose start and end ended up in different stages. On AMD,
Triton's stream pipeliner cannot place a marker in most pipelined loops and
fails the compile (3.6-3.8) or splits a scope across its peeled stages
(3.9, `pipelining_moved_markers`); the stage hook then compiles again with
`tt.num_stages = 1` on the loops that hold markers
(`unpipeline_marker_loops`), and `markers_in_loops` names their scopes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .ttgir_text import braces, marker_pattern

_LOC_DEFINITION = re.compile(r"^#(loc\d*) = loc\((.*)\)\s*$")
# A file position (`"file":line:col`) or a location alias (`#loc12`).
_LOC_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):\d+|#loc\d*\b')
# Memory operations a software pipeliner moves to an earlier stage.
_PIPELINED_LOAD = re.compile(
    r"= (ttg\.async_copy_global_to_local|ttng\.async_tma_copy_global_to_local|"
    r"ttng\.async_tma_gather|tt\.descriptor_load|tt\.load|"
    r"amdgpu\.buffer_load_to_local|amdgpu\.buffer_load)\b"
)


@dataclass(frozen=True)
class _Op:
    index: int  # position in its loop's body
    text: str
    file: str | None
    line: int | None


def _location_resolver(text: str):
    """A function from a location expression (`#loc12`, `"file":3:5`,
    `"name"(#loc4)`, `callsite(#a at #b)`, ...) to (file, line): the first
    file position inside it, following the module's `#loc` aliases."""
    raw = {}
    for line in text.splitlines():
        match = _LOC_DEFINITION.match(line)
        if match:
            raw["#" + match.group(1)] = match.group(2)
    resolved: dict[str, tuple[str, int] | None] = {}

    def resolve(expression: str, depth: int = 0):
        for token in _LOC_TOKEN.finditer(expression):
            if token.group(1) is not None:
                return token.group(1), int(token.group(2))
            alias = token.group(0)
            if alias not in resolved:
                resolved[alias] = None  # cycles end here
                if depth < 64:
                    resolved[alias] = resolve(raw.get(alias, ""), depth + 1)
            if resolved[alias]:
                return resolved[alias]
        return None

    return resolve


def _op_location(line: str, resolve) -> tuple[str | None, int | None]:
    start = line.rfind(" loc(")
    return (resolve(line[start:]) if start >= 0 else None) or (None, None)


def _loop_bodies(text: str) -> list[list[_Op]]:
    """The operations of each `scf.for` body, innermost loop only, in order."""
    resolve = _location_resolver(text)
    loops: list[list[_Op]] = []
    # One entry per open region: the body list of an scf.for, or None.
    regions: list[list[_Op] | None] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("//"):
            continue
        line_braces = braces(line)
        if not line.startswith("}"):  # an op (`} else {` only continues one)
            body = next((r for r in reversed(regions) if r is not None), None)
            if body is not None:
                file, number = _op_location(line, resolve)
                body.append(_Op(len(body), line, file, number))
        opened_here = []
        for brace in line_braces:
            if brace == "}":
                if opened_here:
                    opened_here.pop()
                elif regions:
                    regions.pop()
            else:
                opened_here.append(None)
        # A region left open at the end of an `scf.for` line is its body.
        for index, _ in enumerate(opened_here):
            is_loop_body = "scf.for" in line and not line.startswith("}") and index == len(opened_here) - 1
            if is_loop_body:
                loops.append([])
            regions.append(loops[-1] if is_loop_body else None)
    return loops


def _marker(op: _Op):
    match = marker_pattern().search(op.text)
    return (match.group(1), match.group(2)) if match else None


def _where(op: _Op) -> str:
    return f"{op.file}:{op.line}" if op.file else "unknown location"


def _lines(ops) -> str:
    return ", ".join(str(n) for n in sorted({op.line for op in ops}))


def _scopes_of(body: list[_Op]) -> tuple[list[tuple[str, _Op, _Op]], list[tuple[str, _Op]]]:
    """A loop body's scopes in program order as (name, start, end), and the
    markers left unpaired (a start without its end after it, or an end
    without its start before it: the scope spans loop iterations)."""
    open_starts: dict[str, list[_Op]] = {}
    scopes: list[tuple[str, _Op, _Op]] = []
    split: list[tuple[str, _Op]] = []
    for op in body:
        marker = _marker(op)
        if not marker:
            continue
        kind, name = marker
        if kind == "start":
            open_starts.setdefault(name, []).append(op)
        elif open_starts.get(name):
            scopes.append((name, open_starts[name].pop(), op))
        else:
            split.append((name, op))
    split += [(name, op) for name, ops in open_starts.items() for op in ops]
    return scopes, split


def pipelining_moved_markers(ttir: str, ttgir: str) -> bool:
    """Whether software pipelining split scopes between the TTIR and the
    TTGIR Triton made of it: more scope markers whose start and end are not
    in one region (a loop body, a branch, the function) than in the TTIR,
    as when a scope's start and end land in different stages of a loop or
    in different branches of its peeled epilogue."""
    return _unpaired_markers(ttgir) > _unpaired_markers(ttir)


def _unpaired_markers(text: str) -> int:
    """Scope markers without their start or end in the same region."""
    counts: list[dict[str, int]] = [{}]  # per open region: scope name -> starts open in it
    unpaired = 0
    pattern = marker_pattern()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("//"):
            continue
        marker = pattern.search(line) if not line.startswith("}") else None
        if marker:
            kind, name = marker.group(1), marker.group(2)
            open_here = counts[-1]
            if kind == "start":
                open_here[name] = open_here.get(name, 0) + 1
            elif open_here.get(name):
                open_here[name] -= 1
            else:
                unpaired += 1
        for brace in braces(line):
            if brace == "{":
                counts.append({})
            elif len(counts) > 1:
                unpaired += sum(counts.pop().values())
    return unpaired + sum(sum(c.values()) for c in counts)


def pipelining_warnings(ttgir: str) -> list[str]:
    """One message per scope in a loop that software pipelining changed."""
    messages = []
    for body in _loop_bodies(ttgir):
        scopes, split = _scopes_of(body)
        for name, op in split:
            messages.append(
                f"scope '{name}' ({_where(op)}): its start and end are in different software-pipeline stages "
                "of the loop, so each interval it records spans loop iterations; move the scope out of the "
                "loop or compile this kernel with num_stages=1 to measure it"
            )
        loads = [op for op in body if _PIPELINED_LOAD.search(op.text) and op.line is not None]
        for name, start, end in scopes:
            if start.file is None or end.file is None or start.file != end.file:
                continue
            first, last = start.line, end.line
            moved_out = [
                op
                for op in loads
                if op.file == start.file and first <= op.line <= last and not start.index < op.index < end.index
            ]
            moved_in = [
                op
                for op in loads
                if start.index < op.index < end.index and not (op.file == start.file and first <= op.line <= last)
            ]
            if moved_out:
                messages.append(
                    f"scope '{name}' ({_where(start)}): software pipelining issues the loads of line(s) "
                    f"{_lines(moved_out)} in an earlier stage, outside the scope; in the loop it measures waiting "
                    "for data loaded iterations earlier, not the loads (compile with num_stages=1 to measure them)"
                )
            if moved_in:
                messages.append(
                    f"scope '{name}' ({_where(start)}): software pipelining placed loads of line(s) "
                    f"{_lines(moved_in)} (for a later iteration) inside the scope; it measures their issue too"
                )
    return messages


def markers_in_loops(ir: str) -> list[str]:
    """`'name' (file:line)` for each scope marker inside an scf.for loop."""
    found = []
    for body in _loop_bodies(ir):
        for op in body:
            marker = _marker(op)
            if marker and marker[0] == "start":
                found.append(f"'{marker[1]}' ({_where(op)})")
    return found


# `tt.num_stages = N : i32` in a loop's attribute dictionary.
_NUM_STAGES = re.compile(r"tt\.num_stages = (\d+) : i32")


def unpipeline_marker_loops(ir: str, num_stages: int, holding: re.Pattern | None = None) -> tuple[str, list[str]]:
    """The TTIR `ir` with `tt.num_stages = 1` on every `scf.for` whose body
    (outside loops nested in it) holds a marker (and an op matching
    `holding`, if given) and that would be pipelined (its own
    `tt.num_stages`, else the kernel's `num_stages`, above 1), so that a
    software pipeliner leaves those loops as they are and pipelines the
    others; and `'name' (file:line)` of the scopes in loops, if any loop
    changed."""
    from ..contract.compiler_exports import MARKER_PREFIX

    lines = ir.splitlines(keepends=True)
    # One entry per open region: the loop body's [holds a marker, holds `holding`], or None.
    regions: list[list[bool] | None] = []
    marked: list[int] = []  # the lines that close a loop body to rewrite
    for number, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("//"):
            continue
        body = next((r for r in reversed(regions) if r is not None), None)
        if body is not None and not line.startswith("}"):
            body[0] = body[0] or f'"{MARKER_PREFIX}' in line
            body[1] = body[1] or (holding is not None and holding.search(line) is not None)
        opened_here = []
        for brace in braces(line):
            if brace == "}":
                if opened_here:
                    opened_here.pop()
                elif regions:
                    region = regions.pop()
                    if region is not None and region[0] and (holding is None or region[1]):
                        marked.append(number)
            else:
                opened_here.append(None)
        for index, _ in enumerate(opened_here):
            is_loop_body = "scf.for" in line and not line.startswith("}") and index == len(opened_here) - 1
            # Regions inside a loop body (an scf.if) belong to it: what they hold is the loop's.
            regions.append([False, False] if is_loop_body else None)
    changed = False
    for number in marked:
        stages = _NUM_STAGES.search(lines[number])
        if (int(stages.group(1)) if stages else num_stages) > 1:
            lines[number] = _with_one_stage(lines[number])
            changed = True
    return "".join(lines), markers_in_loops(ir) if changed else []


def _with_one_stage(line: str) -> str:
    """A loop's closing line (`} loc(...)` or `} {attrs} loc(...)`) with
    `tt.num_stages = 1 : i32` in its attribute dictionary."""
    if _NUM_STAGES.search(line):
        return _NUM_STAGES.sub("tt.num_stages = 1 : i32", line, count=1)
    close = line.index("}")
    rest = line[close + 1 :]
    if rest.lstrip().startswith("{"):
        brace = close + 1 + rest.index("{")
        return line[: brace + 1] + "tt.num_stages = 1 : i32, " + line[brace + 1 :]
    return line[: close + 1] + " {tt.num_stages = 1 : i32}" + rest
