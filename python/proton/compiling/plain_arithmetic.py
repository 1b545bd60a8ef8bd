"""Markers that never change how LLVM compiles a kernel's arithmetic.

A marker reaches Triton's LLVM IR as a side-effecting inline-asm call, and
LLVM's -O3 sees it: ReassociatePass ranks the operands of every commutative
operation by the position of the side-effecting instructions they come from,
so a call between two loads can swap the operands of a later `fadd`, and the
backend then fuses the other multiply into the FMA (`fma(k, v, h*e)` where
the plain build computes `fma(h, e, k*v)`): a 1-ulp change of the kernel's
results (seen on flash-linear-attention's recurrence). Vectorizing and
unrolling decisions are exposed to the same effect.

So the llir stage also compiles the kernel without its markers, the build an
unprofiled run gets, and puts each marker into that module's optimized IR at
the place that corresponds to where -O3 left it in the instrumented one:

- both modules must have the same functions, blocks and, in each block, the
  same sequence of side-effecting instructions (calls, stores, fences,
  atomics: their order is what a marker's timing is measured against);
  anything else means the markers changed more than operand order, and the
  instrumented module is kept (the caller warns);
- inside a block, the two instruction sequences are aligned (difflib), and a
  marker goes right after the plain instruction that matches the last one
  before it, never across a side-effecting instruction, never among the
  block's phis.

A value marker's operand becomes the plain build's value that the
alignment matched to it; where there is none, the instrumented module is
kept.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass, field


@functools.cache
def _marker_patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern, str]:
    """(a marker op line in TTGIR text, a marker call line in LLVM IR text,
    any marker call in LLVM IR, the marker text's location suffix). Built on
    first use: the marker text comes from the compiler extension, which
    importing the stage hook must not load."""
    from ..contract.compiler_exports import MARKER_LOCATION_SUFFIX, MARKER_PREFIX

    prefix = re.escape(MARKER_PREFIX)
    ttgir = re.compile(r'^\s*(%[\w.#]+) = tt\.elementwise_inline_asm "' + prefix + r".*$", re.M)
    llvm = re.compile(
        r'^(\s*)(%[\w.$-]+) = (?:tail )?call (i32) asm sideeffect "('
        + prefix
        + r'[^"]*)", "(=r,[rf])"\((i32|float) ([^,)]+)\)(.*)$'
    )
    return ttgir, llvm, re.compile(r'asm sideeffect "' + prefix), MARKER_LOCATION_SUFFIX


def _is_marker(line: str) -> bool:
    return _marker_patterns()[2].search(line) is not None


_LABEL = re.compile(r"^([\w.$-]+|\"[^\"]+\"):")
_PHI = re.compile(r"^\s*%[\w.$-]+ = phi ")
_TERMINATOR = re.compile(r"^\s*(br|ret|switch|unreachable|indirectbr|resume|callbr)\b")
#: Side-effecting instructions; calls to LLVM's pure math intrinsics are not.
_SIDE_EFFECT = re.compile(
    r"^\s*(?:%[\w.$-]+ = )?(?:(?:tail |musttail |notail )?call |store |fence |atomicrmw |cmpxchg |invoke )"
)
_PURE_CALL = re.compile(
    r"call [^(]*@llvm\.(?:nvvm\.(?:ex2|lg2|sqrt|rsqrt|rcp|sin|cos|fma|fmin|fmax|abs|div|mul24|mulhi|sad|saturate|"
    r"f2|d2|i2|ui2|ll2|ull2|bitcast|add\.rn|mul\.rn|read\.ptx\.sreg)|fma|fmuladd|exp|exp2|log|log2|sqrt|sin|cos|"
    r"fabs|minnum|maxnum|minimum|maximum|copysign|floor|ceil|trunc|rint|nearbyint|round|smax|smin|umax|umin|abs|"
    r"ctpop|ctlz|cttz|fshl|fshr|bswap|bitreverse|amdgcn\.(?:exp2|log|rcp|rsq|sqrt|fmed3|workitem\.id|workgroup\.id))"
)
_SSA = re.compile(r"%[\w.$-]+|\"[^\"]*\"(?=:)")
_METADATA = re.compile(r"![\w.]+|#\d+")
_DEBUG_LOCATION = re.compile(r"^!(\d+) = (?:distinct )?!DILocation\((.*)\)$", re.M)
_FILE = re.compile(r"^!(\d+) = (?:distinct )?!DIFile\((.*)\)$", re.M)


def has_llvm_markers(llvm_ir: str) -> bool:
    return _is_marker(llvm_ir)


def has_value_markers(llvm_ir: str) -> bool:
    """Whether a marker records a value (its operand is not a constant)."""
    return any(
        found and found.group(7).strip().startswith("%")
        for found in map(_marker_patterns()[1].match, llvm_ir.split("\n"))
    )


def without_markers(ttgir: str) -> str:
    """`ttgir` with its marker ops removed: the module an unprofiled run
    compiles. (Nothing uses a marker's result; a module in which something
    did would fail to parse, and the caller keeps the instrumented build.)"""
    return _marker_patterns()[0].sub("", ttgir)


@dataclass
class _Block:
    lines: list[str] = field(default_factory=list)


@dataclass
class _Function:
    header: str
    blocks: list[_Block]
    footer: str


def _split(llvm_ir: str) -> tuple[list, list[_Function]]:
    """The module as text pieces: outside-function lines and functions
    (their blocks' lines, the label line first where there is one)."""
    pieces: list = []
    functions: list[_Function] = []
    current: _Function | None = None
    for line in llvm_ir.split("\n"):
        if current is None:
            if line.startswith("define ") and line.rstrip().endswith("{"):
                current = _Function(line, [_Block()], "")
                functions.append(current)
                pieces.append(current)
            else:
                pieces.append(line)
        elif line.startswith("}"):
            current.footer = line
            current = None
        elif _LABEL.match(line):
            current.blocks.append(_Block([line]))
        else:
            current.blocks[-1].lines.append(line)
    return pieces, functions


def _join(pieces: list) -> str:
    out = []
    for piece in pieces:
        if isinstance(piece, _Function):
            out.append(piece.header)
            for block in piece.blocks:
                out.extend(block.lines)
            out.append(piece.footer)
        else:
            out.append(piece)
    return "\n".join(out)


def _is_side_effect(line: str) -> bool:
    return bool(_SIDE_EFFECT.match(line)) and not _PURE_CALL.search(line)


def _shape(line: str) -> str:
    """An instruction without its value names and metadata numbers."""
    return _METADATA.sub("!", _SSA.sub("%", line.strip()))


def _instructions(block: _Block) -> list[int]:
    return [i for i, line in enumerate(block.lines) if line.strip() and not _LABEL.match(line)]


def _marker_locations(llvm_ir: str) -> dict[str, str]:
    """`!N` of each DILocation -> "file:line:col", for markers that leave
    their module's debug metadata behind."""
    files = {}
    for number, body in _FILE.findall(llvm_ir):
        name = re.search(r'filename: "([^"]*)"', body)
        directory = re.search(r'directory: "([^"]*)"', body)
        if name:
            path = name.group(1)
            if directory and directory.group(1) and not path.startswith("/"):
                path = directory.group(1).rstrip("/") + "/" + path
            files[number] = path
    scopes = dict(re.findall(r"^!(\d+) = (?:distinct )?!DI\w+\((.*)\)$", llvm_ir, re.M))

    def file_of(scope: str, depth: int = 0) -> str | None:
        body = scopes.get(scope, "")
        found = re.search(r"\bfile: !(\d+)", body)
        if found and found.group(1) in files:
            return files[found.group(1)]
        parent = re.search(r"\bscope: !(\d+)", body)
        return file_of(parent.group(1), depth + 1) if parent and depth < 16 else None

    locations = {}
    for number, body in _DEBUG_LOCATION.findall(llvm_ir):
        line = re.search(r"\bline: (\d+)", body)
        column = re.search(r"\bcolumn: (\d+)", body)
        scope = re.search(r"\bscope: !(\d+)", body)
        path = file_of(scope.group(1)) if scope else None
        if line and path:
            locations["!" + number] = f"{path}:{line.group(1)}:{column.group(1) if column else 0}"
    return locations


_DEFINES = re.compile(r"^\s*(%[\w.$-]+) = ")


def _portable_marker(line: str, number, locations: dict[str, str], names: dict[str, str]) -> str | None:
    """A marker call line that stands in another module: a fresh value name,
    its operand renamed by `names` (a value marker's value; None where that
    module has no such value), no attribute group or debug metadata of its
    own module (the location, if it had one, moves into the marker text)."""
    _, marker, _, location_suffix = _marker_patterns()
    found = marker.match(line)
    if not found:
        return None
    indent, _, _, text, constraint, operand_type, operand, rest = found.groups()
    operand = operand.strip()
    if operand.startswith("%"):
        if operand not in names:
            return None
        operand = names[operand]
    debug = re.search(r"!dbg (![\w.]+)", rest)
    if location_suffix not in text and debug and debug.group(1) in locations:
        text += location_suffix + locations[debug.group(1)]
    return (
        f'{indent}%proton.marker.{number} = call i32 asm sideeffect "{text}", "{constraint}"({operand_type} {operand})'
    )


def _aligned(marked: list[str], plain: list[str], marked_effects: list[bool], plain_effects: list[bool]):
    """(marked index, plain index) of the instructions the two blocks have
    in common, in order. The side-effecting ones (the same in both) pair up
    one to one; between two of them the rest is aligned by difflib, which
    is skipped where the two stretches are equal."""

    def cuts(effects: list[bool]) -> list[int]:
        return [i for i, effect in enumerate(effects) if effect]

    marked_cuts, plain_cuts = cuts(marked_effects), cuts(plain_effects)
    starts = zip([0] + [i + 1 for i in marked_cuts], [0] + [i + 1 for i in plain_cuts])
    ends = zip(marked_cuts + [len(marked)], plain_cuts + [len(plain)])
    for (a0, b0), (a1, b1) in zip(starts, ends):
        if marked[a0:a1] == plain[b0:b1]:
            yield from zip(range(a0, a1), range(b0, b1))
        else:
            matcher = difflib.SequenceMatcher(None, marked[a0:a1], plain[b0:b1], autojunk=False)
            for a, b, size in matcher.get_matching_blocks():
                yield from zip(range(a0 + a, a0 + a + size), range(b0 + b, b0 + b + size))
        if a1 < len(marked) and b1 < len(plain):
            yield a1, b1


class _Mismatch(Exception):
    pass


def _insertion_points(marked: _Block, plain: _Block, names: dict[str, str]) -> list[tuple[int, str]]:
    """(index in plain.lines to insert before, marker line) of each marker of
    `marked`, in order; adds the values the two blocks define alike to
    `names` (marked name -> plain name). Raises _Mismatch where the blocks
    differ in their side-effecting instructions."""
    marked_rows = [i for i in _instructions(marked) if not _is_marker(marked.lines[i])]
    plain_rows = _instructions(plain)
    marked_shapes = [_shape(marked.lines[i]) for i in marked_rows]
    plain_shapes = [_shape(plain.lines[i]) for i in plain_rows]
    marked_is_effect = [_is_side_effect(marked.lines[i]) for i in marked_rows]
    plain_is_effect = [_is_side_effect(plain.lines[i]) for i in plain_rows]
    if [shape for shape, e in zip(marked_shapes, marked_is_effect) if e] != [
        shape for shape, e in zip(plain_shapes, plain_is_effect) if e
    ]:
        raise _Mismatch
    plain_of = {}
    for a, b in _aligned(marked_shapes, plain_shapes, marked_is_effect, plain_is_effect):
        plain_of[a] = b
        defined = _DEFINES.match(marked.lines[marked_rows[a]]), _DEFINES.match(plain.lines[plain_rows[b]])
        if defined[0] and defined[1]:
            names[defined[0].group(1)] = defined[1].group(1)
    # The first place a marker may go (after the phis) and the last (before the terminator).
    first = 0
    while first < len(plain_rows) and _PHI.match(plain.lines[plain_rows[first]]):
        first += 1
    last = len(plain_rows) - 1 if plain_rows and _TERMINATOR.match(plain.lines[plain_rows[-1]]) else len(plain_rows)
    effect_rows = [k for k, effect in enumerate(plain_is_effect) if effect]
    points = []
    before = 0  # non-marker instructions of `marked` seen so far
    effects = 0  # side-effecting ones among them
    last_matched = None  # the plain row of the last matched one
    for i in _instructions(marked):
        line = marked.lines[i]
        if not _is_marker(line):
            effects += marked_is_effect[before]
            if before in plain_of:
                last_matched = plain_of[before]
            before += 1
            continue
        position = last_matched + 1 if last_matched is not None else first
        # Between the same side-effecting instructions as in `marked`.
        low = effect_rows[effects - 1] + 1 if effects else first
        high = effect_rows[effects] if effects < len(effect_rows) else last
        position = min(max(position, low, first), high, last)
        points.append((position, line))
    return [(plain_rows[p] if p < len(plain_rows) else len(plain.lines), line) for p, line in points]


def _label(block: _Block) -> str | None:
    found = _LABEL.match(block.lines[0]) if block.lines else None
    return found.group(1) if found else None


def _is_edge_block(block: _Block) -> bool:
    """A block of markers and an unconditional branch only: the markers on
    a CFG edge (a scope closed on an early return), which the plain build
    does not have a block for."""
    rows = [block.lines[i] for i in _instructions(block)]
    return (
        bool(rows)
        and re.match(r"^\s*br label %[\w.$-]+", rows[-1]) is not None
        and all(_is_marker(line) for line in rows[:-1])
        and any(_is_marker(line) for line in rows[:-1])
    )


def _defined_before(marker: str, lines: list[str], position: int) -> bool:
    """Whether a value marker's operand, where this block defines it, is
    defined before `position` (elsewhere, the blocks' correspondence keeps
    the definition dominating, as in the instrumented build)."""
    operand = re.search(r"\((?:i32|float) (%[\w.$-]+)\)$", marker)
    if not operand:
        return True
    defined = [k for k, line in enumerate(lines) if line.lstrip().startswith(operand.group(1) + " = ")]
    return not defined or defined[0] < position


def _place_edge_block(edge: _Block, marked: _Function, plain: _Function, plain_of: dict, number: int, locations):
    """Puts `edge`'s markers on the same edge of `plain`: a new block
    between the matching predecessor and successor. False where the edge
    cannot be found."""
    label = _label(edge)
    target = re.search(r"label %([\w.$-]+)", edge.lines[_instructions(edge)[-1]]).group(1)
    users = [
        b for b in marked.blocks if b is not edge and re.search(rf"label %{re.escape(label)}\b", "\n".join(b.lines))
    ]
    successors = [b for b in marked.blocks if _label(b) == target]
    if len(users) != 1 or len(successors) != 1 or id(users[0]) not in plain_of or id(successors[0]) not in plain_of:
        return False
    source, destination = plain_of[id(users[0])], plain_of[id(successors[0])]
    destination_label = _label(destination)
    terminator = _instructions(source)[-1]
    uses = (
        re.findall(rf"label %{re.escape(destination_label)}\b", source.lines[terminator]) if destination_label else []
    )
    if len(uses) != 1 or any(_PHI.match(line) for line in destination.lines):
        return False
    name = f"proton.edge.{number}"
    source.lines[terminator] = re.sub(
        rf"label %{re.escape(destination_label)}\b", f"label %{name}", source.lines[terminator]
    )
    markers = []
    for k, i in enumerate(i for i in _instructions(edge) if _is_marker(edge.lines[i])):
        portable = _portable_marker(edge.lines[i], f"{number}.{k}", locations, {})
        if portable is None:
            return False
        markers.append(portable)
    new = _Block([f"{name}:", *markers, f"  br label %{destination_label}", ""])
    plain.blocks.insert(plain.blocks.index(source) + 1, new)
    return True


def same_without_markers(marked_ir: str, plain_ir: str) -> bool:
    """Whether `marked_ir` is `plain_ir` plus markers, value names aside:
    then the markers changed nothing that -O3 did."""

    def shapes(llvm_ir: str, drop_markers: bool) -> list[str]:
        _, functions = _split(llvm_ir)
        return [
            _shape(line)
            for function in functions
            for block in function.blocks
            if not (drop_markers and _is_edge_block(block))
            for line in block.lines
            if line.strip() and not _LABEL.match(line) and not _is_marker(line)
        ]

    return shapes(marked_ir, True) == shapes(plain_ir, False)


def place_in_plain_build(marked_ir: str, plain_ir: str) -> str | None:
    """`plain_ir` with the markers of `marked_ir` put where they stand in it
    (the module docstring says how), or None where the two builds differ in
    more than the markers' effect on arithmetic."""
    _, marked_functions = _split(marked_ir)
    plain_pieces, plain_functions = _split(plain_ir)
    if [f.header.split("(")[0] for f in marked_functions] != [f.header.split("(")[0] for f in plain_functions]:
        return None
    locations = _marker_locations(marked_ir)
    number = 0
    try:
        for marked, plain in zip(marked_functions, plain_functions):
            is_edge = [_is_edge_block(b) for b in marked.blocks]
            edges = [b for b, edge in zip(marked.blocks, is_edge) if edge]
            kept = [b for b, edge in zip(marked.blocks, is_edge) if not edge]
            if len(kept) != len(plain.blocks):
                return None
            plain_of = {id(m): p for m, p in zip(kept, plain.blocks)}
            names: dict[str, str] = {}
            placements = [(b, _insertion_points(block, b, names)) for block, b in zip(kept, plain.blocks)]
            for plain_block, points in placements:
                lines = list(plain_block.lines)
                for position, line in reversed(points):  # later points first: earlier indices stay valid
                    portable = _portable_marker(line, number, locations, names)
                    if portable is None or not _defined_before(portable, lines, position):
                        return None
                    lines.insert(position, portable)  # at one position, reversed insertion keeps their order
                    number += 1
                plain_block.lines = lines
            for edge in edges:
                if not _place_edge_block(edge, marked, plain, plain_of, number, locations):
                    return None
                number += 1
    except _Mismatch:
        return None
    return _join(plain_pieces)
