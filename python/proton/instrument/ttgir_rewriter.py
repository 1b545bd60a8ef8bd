"""The TTGIR rewriter behind `insert_proton_records` (its front end is
tools/insert_proton_records): inserts `proton.record start/end "name"` lines
into TTGIR text dumped by Triton, for use with `TRITON_KERNEL_OVERRIDE`.

This is a line-oriented text tool: it does not parse MLIR. It tracks the
brace nesting of every line (outside string literals) to know which region
("region") each line belongs to, the blocks of each region (`^bb1:` labels:
Triton lowers an early `return` to `cf.cond_br` between blocks of the
function body), and reads the op name of each line
(`%r = tt.load ...`, `tt.store ...`, `%r = "tt.reduce"(...)`). Scopes are only
inserted into the bodies of `tt.func`, `scf.for`, `scf.if` (both branches),
`scf.while` (both regions) and `scf.execute_region`; never into the combiner
regions of `tt.reduce`/`tt.scan` and the like, and never after a terminator.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .ttgir_text import code_text, record_line

DEFAULT_DUMP_DIR = "./ttgir_dump"

# Ops whose regions may hold proton.record ops.
_ALLOWED_OWNERS = {"tt.func", "scf.for", "scf.if", "scf.while", "scf.execute_region"}
_BRANCHES = {"cf.br", "cf.cond_br", "cf.switch"}
_TERMINATORS = {"tt.return", "scf.yield", "scf.condition", "ttg.warp_yield", "ttg.warp_return"} | _BRANCHES
_LABEL_RE = re.compile(r"^\s*\^(?P<label>[\w.$-]+)\s*(?:\([^)]*\))?\s*:")
_SUCCESSOR_RE = re.compile(r"\^([\w.$-]+)")
#: A brace, or a run of other non-space characters.
_TOKENS = re.compile(r"[{}]|[^\s{}]+")
_OP_RE = re.compile(
    r'^\s*(?:(?P<results>%[\w.$#:-]+(?:\s*,\s*%[\w.$#:-]+)*)\s*=\s*)?'
    r'(?:"(?P<generic>[A-Za-z_][\w.$]*)"|(?P<custom>[A-Za-z_][\w$]*(?:\.[\w$]+)+))'
)


class RewriteError(Exception):
    """A request that cannot be honoured, or rewritten text that does not
    verify; the message names the file and line."""


class InputError(Exception):
    """A path that cannot be read or written (missing, a directory, a broken
    link, binary or not UTF-8, no permission); the message names the path.
    The command exits with status 2."""


def read_ttgir(path: Path) -> str:
    """The text of a TTGIR file, exactly as stored (no newline translation);
    InputError names the path and the problem otherwise."""
    path = Path(path)
    if path.is_symlink() and not path.exists():
        raise InputError(f"{path}: broken symbolic link (its target {os.readlink(path)} does not exist)")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a TTGIR file")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    nul = data.find(b"\0")
    if nul >= 0:
        raise InputError(f"{path}: binary file (NUL byte at offset {nul}), not TTGIR text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None


def strip_records(text: str) -> str:
    """`text` without its `proton.record start|end` lines."""
    return "".join(line for line in text.splitlines(keepends=True) if not record_line().match(line))


def backup_path(path: Path) -> Path:
    """Where the first backup of `path` lives; it is never overwritten."""
    return path.with_name(path.name + ".bak")


@dataclass
class Line:
    text: str
    start_region: int  # region the line begins in (after nothing is consumed)
    region: int  # region of the op on this line (after leading closing braces)
    end_region: int  # region after the whole line
    op: str | None  # op name, or None
    result: str | None  # first SSA result name without '%', or None
    indent: str
    start_block: int = 0  # block the line begins in (a label line: the block before it)
    block: int = 0  # block of the op on this line


@dataclass
class Region:
    id: int
    parent: int | None
    owner: str | None  # op name that owns the region
    open_line: int | None  # 0-based index of the line that opens it
    close_line: int | None = None
    lines: list = field(default_factory=list)  # 0-based indices of op lines in this region


@dataclass
class Scope:
    name: str
    start_gap: int  # insert before original line index start_gap (0-based)
    end_gap: int  # insert before original line index end_gap
    origin: str  # what asked for it, for error messages
    more_end_gaps: list = field(default_factory=list)  # other ends, on other paths out (early returns)
    seq: int = 0
    out_start: int = 0  # 1-based line numbers in the rewritten text
    out_end: int = 0


@dataclass
class RewriteResult:
    text: str
    scopes: list


class _Module:
    """The brace structure of one TTGIR text."""

    def __init__(self, text: str, path: str):
        self.path = path
        self.raw = text.splitlines(keepends=True)
        self.regions: dict[int, Region] = {0: Region(0, None, None, None)}
        self.lines: list[Line] = []
        self.labels: dict[tuple[int, str], int] = {}  # (region, label) -> block
        self.block_region: dict[int, int] = {0: 0}  # block -> its region
        stack = [0]
        blocks = [0]  # the current block of each open region
        last_popped = None
        for i, raw in enumerate(self.raw):
            body = raw.rstrip("\n")
            start_region = stack[-1]
            start_block = blocks[-1]
            label = _LABEL_RE.match(body)
            if label:
                blocks[-1] = len(self.block_region)
                self.block_region[blocks[-1]] = stack[-1]
                self.labels[(stack[-1], label["label"])] = blocks[-1]
            op_block = None
            stripped = body.lstrip()
            indent = body[: len(body) - len(stripped)]
            op_region = None
            m = _OP_RE.match(body)
            op = result = None
            if m:
                op = m.group("generic") or m.group("custom")
                if m.group("results"):
                    result = m.group("results").split(",")[0].strip()[1:].split(":")[0]
            # Braces and runs of other characters outside string literals
            # (a literal counts as its opening quote): a few tokens a line.
            # Most lines have no brace at all: they open and close nothing.
            tokens = _TOKENS.findall(code_text(body)) if "{" in body or "}" in body else ()
            for token in tokens:
                if token != "}" and op_region is None:
                    op_region, op_block = stack[-1], blocks[-1]
                if token == "{":
                    rid = len(self.regions)
                    if op is not None:
                        owner = op
                    elif stripped.startswith("}") and last_popped is not None:
                        owner = self.regions[last_popped].owner  # `} else {`, `} do {`
                    else:
                        owner = None
                    self.regions[rid] = Region(rid, stack[-1], owner, i)
                    stack.append(rid)
                    blocks.append(len(self.block_region))
                    self.block_region[blocks[-1]] = rid
                elif token == "}":
                    if len(stack) == 1:
                        raise RewriteError(f"{path}:{i + 1}: unbalanced '}}'")
                    last_popped = stack.pop()
                    blocks.pop()
                    self.regions[last_popped].close_line = i
            if op_region is None:
                op_region = stack[-1]
            if op_block is None:
                op_block = blocks[-1]
            line = Line(raw, start_region, op_region, stack[-1], op, result, indent, start_block, op_block)
            self.lines.append(line)
            if op is not None or record_line().match(body):
                self.regions[op_region].lines.append(i)
        if len(stack) != 1:
            raise RewriteError(f"{path}:{len(self.raw)}: {len(stack) - 1} unclosed '{{' at end of file")

    # -- helpers -----------------------------------------------------------
    def allowed(self, rid: int) -> bool:
        r = self.regions[rid]
        return r.owner in _ALLOWED_OWNERS

    def op_last_line(self, i: int) -> int:
        """Last line of the op starting at line i (its closing line if it has regions)."""
        line = self.lines[i]
        j = i
        while self.lines[j].end_region != line.region:
            j += 1
        return j

    def gap_region(self, gap: int) -> int:
        """Region into which a line inserted before original line `gap` goes."""
        if gap < len(self.lines):
            return self.lines[gap].start_region
        return self.lines[-1].end_region if self.lines else 0

    def gap_block(self, gap: int) -> int:
        """Block into which a line inserted before original line `gap` goes."""
        if gap < len(self.lines):
            return self.lines[gap].start_block
        return 0

    def successors(self, i: int) -> list[int]:
        """The blocks the branch on line i goes to (unknown labels left out)."""
        line = self.lines[i]
        text = line.text.split(" loc(", 1)[0]
        found = (self.labels.get((line.region, name)) for name in _SUCCESSOR_RE.findall(text))
        return [b for b in found if b is not None]

    def functions(self):
        """(func line index, body region id, is_public) for every tt.func."""
        for i, line in enumerate(self.lines):
            if line.op == "tt.func":
                bodies = [
                    r
                    for r in self.regions.values()
                    if r.open_line == i and r.owner == "tt.func" and r.close_line is not None and r.close_line > i
                ]
                if not bodies:
                    continue  # a declaration
                body = bodies[-1]
                yield i, body.id, bool(re.match(r"\s*tt\.func\s+public\b", line.text))

    def indent_for(self, rid: int) -> str:
        r = self.regions[rid]
        for i in r.lines:
            return self.lines[i].indent
        if r.open_line is not None:
            return self.lines[r.open_line].indent + "  "
        return ""


def _check_gap(mod: _Module, gap: int, rid: int, what: str, lineno: int) -> None:
    path = mod.path
    if not mod.allowed(rid):
        owner = mod.regions[rid].owner or "the module"
        raise RewriteError(
            f"{path}:{lineno}: {what}: cannot insert a record in a region of {owner} "
            f"(only bodies of {', '.join(sorted(_ALLOWED_OWNERS))})"
        )
    # The op before the gap in its region (lines are in order: a bisection).
    lines = mod.regions[rid].lines
    k = bisect.bisect_left(lines, gap)
    prev = lines[k - 1] if k else None
    if prev is not None and mod.lines[prev].block == mod.gap_block(gap) and mod.lines[prev].op in _TERMINATORS:
        raise RewriteError(
            f"{path}:{lineno}: {what}: would insert a record after the terminator "
            f"{mod.lines[prev].op} on line {prev + 1}"
        )


def _make_scope(mod: _Module, name: str, start_gap: int, end_gap: int, origin: str) -> Scope:
    rs, re_ = mod.gap_region(start_gap), mod.gap_region(end_gap)
    if rs != re_ or mod.gap_block(start_gap) != mod.gap_block(end_gap):
        raise RewriteError(
            f"{mod.path}:{start_gap + 1}: {origin}: start (before line {start_gap + 1}) and end "
            f"(after line {end_gap}) are not in the same block"
        )
    if end_gap <= start_gap:
        raise RewriteError(f"{mod.path}:{start_gap + 1}: {origin}: empty or reversed scope")
    _check_gap(mod, start_gap, rs, origin, start_gap + 1)
    _check_gap(mod, end_gap, rs, origin, max(end_gap, 1))
    return Scope(name, start_gap, end_gap, origin)


# -- strategies ---------------------------------------------------------------


def _default_scopes(mod: _Module) -> list[Scope]:
    scopes = []
    for fline, body, public in mod.functions():
        if not public:
            continue
        region = mod.regions[body]
        # Every way out of the body: an early return is a tt.return in a block of its own.
        returns = [i for i in region.lines if mod.lines[i].op == "tt.return"] or [region.close_line]
        scopes.append(_kernel_scope(mod, fline + 1, returns))
        # loads anywhere in allowed regions of this function
        loads_by_region: dict[int, list[int]] = {}
        for i in range(fline + 1, region.close_line):
            line = mod.lines[i]
            if line.op == "tt.load" and mod.allowed(line.region) and _inside(mod, line.region, body):
                name = f"load_{line.result}" if line.result else f"load_line{i + 1}"
                scopes.append(_make_scope(mod, name, i, mod.op_last_line(i) + 1, f"tt.load on line {i + 1}"))
                loads_by_region.setdefault(line.region, []).append(i)
        for rid, loads in loads_by_region.items():
            after = mod.op_last_line(loads[-1]) + 1
            block = mod.lines[loads[-1]].block
            stores = [
                i
                for i in mod.regions[rid].lines
                if i >= after and mod.lines[i].block == block and mod.lines[i].op == "tt.store"
            ]
            if stores and stores[0] > after:
                scopes.append(_make_scope(mod, "compute", after, stores[0], "compute scope"))
    return scopes


def _kernel_scope(mod: _Module, start_gap: int, end_gaps: list[int]) -> Scope:
    """The default "kernel" scope: from the body's first line to right
    before each of its tt.return lines (one end per way out)."""
    for gap in end_gaps:
        if gap <= start_gap:
            raise RewriteError(f"{mod.path}:{start_gap + 1}: kernel scope: empty function body")
        _check_gap(mod, gap, mod.gap_region(gap), "kernel scope", gap)
    _check_gap(mod, start_gap, mod.gap_region(start_gap), "kernel scope", start_gap + 1)
    return Scope("kernel", start_gap, end_gaps[-1], "kernel scope", more_end_gaps=end_gaps[:-1])


def _inside(mod: _Module, rid: int, ancestor: int) -> bool:
    while rid is not None:
        if rid == ancestor:
            return True
        rid = mod.regions[rid].parent
    return False


def _wrap_op_scopes(mod: _Module, patterns: Sequence[str], names: Sequence[str | None]) -> list[Scope]:
    scopes = []
    for k, pattern in enumerate(patterns):
        try:
            rx = re.compile(pattern)
        except re.error as e:
            raise RewriteError(f"--wrap-op {pattern!r}: bad regular expression: {e}") from None
        prefix = names[k] if k < len(names) else None
        if prefix is not None:
            check_name(prefix, f"--name {prefix!r}")
        n = 0
        for i, line in enumerate(mod.lines):
            if line.op is None or line.op in _TERMINATORS or not rx.fullmatch(line.op):
                continue
            if not mod.allowed(line.region):
                continue  # e.g. inside a tt.reduce combiner, or a tt.func line itself
            name = f"{prefix or line.op.replace('.', '_')}_{n}"
            n += 1
            scopes.append(_make_scope(mod, name, i, mod.op_last_line(i) + 1, f"--wrap-op {pattern} on line {i + 1}"))
    return scopes


def _for_body_scopes(mod: _Module, name: str) -> list[Scope]:
    scopes = []
    for _, body, _public in mod.functions():
        for i in mod.regions[body].lines:
            if mod.lines[i].op != "scf.for":
                continue
            bodies = [
                r
                for r in mod.regions.values()
                if r.open_line == i and r.parent == body and r.close_line is not None and r.close_line > i
            ]
            if not bodies:
                continue
            r = bodies[-1]
            yields = [j for j in r.lines if mod.lines[j].op == "scf.yield"]
            end = yields[-1] if yields else r.close_line
            if end <= i + 1:
                continue  # empty body
            scopes.append(_make_scope(mod, name, i + 1, end, f"--for-body on the scf.for of line {i + 1}"))
    return scopes


def _resolve_line(mod: _Module, spec: str, after: int, what: str) -> int:
    """0-based line index for a 1-based number or `re:REGEX` (first match at or after `after`)."""
    if spec.startswith("re:"):
        try:
            rx = re.compile(spec[3:])
        except re.error as e:
            raise RewriteError(f"{what}: bad regular expression {spec[3:]!r}: {e}") from None
        for i in range(after, len(mod.lines)):
            if rx.search(mod.lines[i].text):
                return i
        raise RewriteError(f"{mod.path}: {what}: no line at or after line {after + 1} matches {spec[3:]!r}")
    if not spec.isdigit() or not 1 <= int(spec) <= len(mod.lines):
        raise RewriteError(f"{mod.path}: {what}: {spec!r} is not a line number in 1..{len(mod.lines)} nor a re:REGEX")
    return int(spec) - 1


def parse_scope_spec(spec: str) -> tuple[str, str, str]:
    """Splits NAME:START:END where START/END are line numbers or re:REGEX
    (a regex may hold ':' but not ':re:')."""
    name, sep, rest = spec.partition(":")
    if not sep or not name:
        raise RewriteError(f"--scope {spec!r}: expected NAME:START:END")
    if rest.startswith("re:"):
        k = rest.find(":re:", 3)
        if k < 0:
            m = re.search(r":(\d+)$", rest)
            if not m:
                raise RewriteError(f"--scope {spec!r}: cannot find END after the START regex")
            k = m.start()
        start, end = rest[:k], rest[k + 1 :]
    else:
        start, sep, end = rest.partition(":")
        if not sep:
            raise RewriteError(f"--scope {spec!r}: expected NAME:START:END")
    if not start or not end:
        raise RewriteError(f"--scope {spec!r}: expected NAME:START:END")
    check_name(name, f"--scope {spec!r}")
    return name, start, end


def check_name(name: str, what: str) -> None:
    """Scope names follow the markers' rules, so that every record written
    reads back (no quote, no ';', no control characters)."""
    from ..language import check_scope_name

    try:
        check_scope_name(name)
    except ValueError as e:
        raise RewriteError(f"{what}: {e}") from None


def _explicit_scopes(mod: _Module, specs: Sequence[str]) -> list[Scope]:
    scopes = []
    for spec in specs:
        name, start, end = parse_scope_spec(spec)
        what = f"--scope {spec}"
        s = _resolve_line(mod, start, 0, what)
        e = _resolve_line(mod, end, s, what)
        if e < s:
            raise RewriteError(f"{mod.path}:{s + 1}: {what}: END line {e + 1} is before START line {s + 1}")
        rs, re_ = mod.lines[s].start_region, mod.lines[e].end_region
        if rs != re_:
            raise RewriteError(
                f"{mod.path}:{s + 1}: {what}: START line {s + 1} and END line {e + 1} "
                "are not in the same block (brace nesting region)"
            )
        scopes.append(_make_scope(mod, name, s, e + 1, what))
    return scopes


# -- assembly and verification ------------------------------------------------


def _check_nesting(mod: _Module, scopes: list[Scope]) -> None:
    """Refuses two scopes of one region that cross (a starts, b starts, a
    ends, b ends): per region, a sweep in start order with a stack of the
    scopes still open, so that time grows with n log n, not n^2."""
    by_region: dict[int, list[Scope]] = {}
    for s in scopes:
        by_region.setdefault(mod.gap_region(s.start_gap), []).append(s)
    for group in by_region.values():
        open_: list[Scope] = []
        for b in sorted(group, key=lambda s: (s.start_gap, -s.end_gap)):
            while open_ and open_[-1].end_gap <= b.start_gap:
                open_.pop()
            a = open_[-1] if open_ else None
            if a is not None and a.start_gap < b.start_gap and b.end_gap > a.end_gap:
                raise RewriteError(
                    f"{mod.path}:{b.start_gap + 1}: scopes cross: {a.name!r} ({a.origin}, lines "
                    f"{a.start_gap + 1}-{a.end_gap}) and {b.name!r} ({b.origin}, lines {b.start_gap + 1}-{b.end_gap})"
                )
            open_.append(b)


def _assemble(mod: _Module, scopes: list[Scope]) -> str:
    for k, s in enumerate(scopes):
        s.seq = k
    at: dict[int, list] = {}
    for s in scopes:
        for gap in (*s.more_end_gaps, s.end_gap):
            at.setdefault(gap, []).append(("end", s))
        at.setdefault(s.start_gap, []).append(("start", s))
    out: list[str] = []

    def emit(gap: int) -> None:
        items = at.get(gap, [])
        ends = sorted((s for kind, s in items if kind == "end"), key=lambda s: (-s.start_gap, -s.seq))
        starts = sorted((s for kind, s in items if kind == "start"), key=lambda s: (-s.end_gap, s.seq))
        indent = mod.indent_for(mod.gap_region(gap))
        for s in ends:
            out.append(f'{indent}proton.record end "{s.name}"\n')
            s.out_end = len(out)
        for s in starts:
            out.append(f'{indent}proton.record start "{s.name}"\n')
            s.out_start = len(out)

    for i, raw in enumerate(mod.raw):
        emit(i)
        if i == len(mod.raw) - 1 and not raw.endswith("\n") and at.get(i + 1):
            raw += "\n"
        out.append(raw)
    emit(len(mod.raw))
    return "".join(out)


def verify_records(text: str, path: str = "<text>") -> list[tuple[str, int, int]]:
    """Checks every `proton.record` in `text`: each start has an end with the
    same name in the same block, or on every path out of it through branches
    to other blocks of its region (early returns), and scopes nest without
    crossing. Returns (name, start line, end line) for each end, 1-based;
    raises RewriteError naming the file and line otherwise."""
    mod = _Module(text, path)
    ops_of: dict[int, list[int]] = {}  # block -> its op and record lines
    for i, line in enumerate(mod.lines):
        if line.op is not None or record_line().match(line.text):
            ops_of.setdefault(line.block, []).append(i)
    entry: dict[int, tuple] = {}  # block -> scopes open when it is entered
    found: list[tuple[str, int, int]] = []
    unclosed: list[tuple[int, str]] = []
    pending = sorted(ops_of)
    while pending:
        # A block whose entry is known goes first; a block no branch reaches starts with nothing open.
        block = next((b for b in pending if b in entry), pending[0])
        pending.remove(block)
        stack = list(entry.get(block, ()))
        last = None
        for i in ops_of[block]:
            last = i
            m = record_line().match(mod.lines[i].text)
            if m:
                _pair(path, i, m["kind"], m["name"], stack, found)
        branches = mod.successors(last) if last is not None and mod.lines[last].op in _BRANCHES else []
        for successor in branches:
            if successor not in entry:
                entry[successor] = tuple(stack)
            elif entry[successor] != tuple(stack):
                opened = {n for n, _ in entry[successor]} ^ {n for n, _ in stack}
                raise RewriteError(
                    f"{path}:{last + 1}: scope {sorted(opened)[0]!r} is open on one path into a block and "
                    "closed on another"
                )
        if stack and not branches:
            name, line = stack[-1]
            unclosed.append((line, name))
    if unclosed:
        line, name = min(unclosed)
        raise RewriteError(f"{path}:{line}: proton.record start {name!r} is never ended in its block")
    return sorted(found, key=lambda f: f[2])


def _pair(path: str, i: int, kind: str, name: str, stack: list, found: list) -> None:
    """One record on line i against the scopes open before it."""
    if kind == "start":
        stack.append((name, i + 1))
        return
    if not stack:
        raise RewriteError(f"{path}:{i + 1}: proton.record end {name!r} without a start in the same block")
    top, top_line = stack[-1]
    if top != name:
        if name in [n for n, _ in stack]:
            raise RewriteError(
                f"{path}:{i + 1}: scope {name!r} ends while {top!r} (started on line {top_line}) is still "
                "open: scopes cross"
            )
        raise RewriteError(f"{path}:{i + 1}: proton.record end {name!r} without a start in the same block")
    stack.pop()
    found.append((name, top_line, i + 1))


def rewrite_text(
    text: str,
    *,
    path: str = "<text>",
    wrap_ops: Sequence[str] = (),
    names: Sequence[str | None] = (),
    scopes: Sequence[str] = (),
    for_body: str | None = None,
    force: bool = False,
) -> RewriteResult:
    """Returns the text with records inserted. With no wrap_ops, scopes or
    for_body, applies the default strategy."""
    if not force:
        for i, raw in enumerate(text.splitlines()):
            if "proton.record" in raw:
                raise RewriteError(f"{path}:{i + 1}: already holds proton.record; use --force to add more")
    mod = _Module(text, path)
    wanted: list[Scope] = []
    if not (wrap_ops or scopes or for_body):
        wanted += _default_scopes(mod)
    wanted += _wrap_op_scopes(mod, wrap_ops, names)
    wanted += _explicit_scopes(mod, scopes)
    if for_body:
        wanted += _for_body_scopes(mod, for_body)
    _check_nesting(mod, wanted)
    new = _assemble(mod, wanted)
    verify_records(new, f"{path} (rewritten)")
    return RewriteResult(new, wanted)


# -- CLI ----------------------------------------------------------------------
