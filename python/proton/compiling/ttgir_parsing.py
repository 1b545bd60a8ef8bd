"""The TTGIR rewriter's reading of TTGIR text (proton.compiling.ttgir_rewriter):
a line-oriented model, no MLIR parser. It tracks the brace nesting of every
line (outside string literals) to know which region each line belongs to,
the blocks of each region (`^bb1:` labels: Triton lowers an early `return`
to `cf.cond_br` between blocks of the function body), and reads the op name
of each line (`%r = tt.load ...`, `tt.store ...`, `%r = "tt.reduce"(...)`);
and where a record may go (_check_gap, _make_scope)."""

from __future__ import annotations

import bisect
import contextlib
import gc
import re
from dataclasses import dataclass, field

from .ttgir_text import code_text, record_line, record_op

# Ops whose regions may hold proton.record ops.
_ALLOWED_OWNERS = {"tt.func", "scf.for", "scf.if", "scf.while", "scf.execute_region"}
_BRANCHES = {"cf.br", "cf.cond_br", "cf.switch"}
_TERMINATORS = {"tt.return", "scf.yield", "scf.condition", "ttg.warp_yield", "ttg.warp_return"} | _BRANCHES
_LABEL_RE = re.compile(r"^\s*\^(?P<label>[\w.$-]+)\s*(?:\([^)]*\))?\s*:")
_SUCCESSOR_RE = re.compile(r"\^([\w.$-]+)")
_BRACES = re.compile(r"[{}]")
_OP_RE = re.compile(
    r'^\s*(?:(?P<results>%[\w.$#:-]+(?:\s*,\s*%[\w.$#:-]+)*)\s*=\s*)?'
    r'(?:"(?P<generic>[A-Za-z_][\w.$]*)"|(?P<custom>[A-Za-z_][\w$]*(?:\.[\w$]+)+))'
)
#: _OP_RE's custom op name alone, and the characters it may start with.
_CUSTOM_OP = re.compile(r"[A-Za-z_][\w$]*(?:\.[\w$]+)+")
_OP_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


@contextlib.contextmanager
def _collector_paused():
    """Pauses Python's cyclic garbage collector (also as a decorator): a large
    file makes millions of small objects (lines, scopes, records) that live
    to the end, and the collector would go over all of them again and again,
    finding nothing to free."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class RewriteError(Exception):
    """A request that cannot be honoured, or rewritten text that does not
    verify; the message names the file and line."""


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


def _read_op(body: str, words: dict) -> tuple[str | None, str | None]:
    """(op name, first SSA result without '%') of a line, as _OP_RE reads
    them, or (None, None). A regex call per line dominates on large files, so
    the usual shapes, `%r = dialect.op ...` and `dialect.op ...`, are read with
    str methods, each op word going through _CUSTOM_OP once (`words` caches
    it: a file has few distinct ones); any other shape goes to _OP_RE."""
    text = body.lstrip()
    result = None
    if text[:1] == "%":
        head, sep, text = text.partition(" = ")
        result = head[1:]
        # One plain SSA name (%12, %arg_3): exactly what _OP_RE's results group takes.
        if not (sep and result.isascii() and (result.isidentifier() or result.isdigit())):
            return _read_op_re(body)
        text = text.lstrip()
    if text[:1] not in _OP_START:
        return _read_op_re(body) if text[:1] == '"' else (None, None)
    word = text.partition(" ")[0]
    op = words.get(word, False)
    if op is False:
        m = _CUSTOM_OP.match(word)
        op = words[word] = m[0] if m else None
    return (op, result) if op else (None, None)


def _read_op_re(body: str) -> tuple[str | None, str | None]:
    m = _OP_RE.match(body)
    if not m:
        return None, None
    results = m.group("results")
    return m.group("generic") or m.group("custom"), results.split(",")[0].strip()[1:].split(":")[0] if results else None


def _indices(items: list, value, start: int = 0, stop: int | None = None):
    """The indices of `value` in items[start:stop], in order (list.index
    scans in C: a file's lines are many, its functions or loads fewer)."""
    stop = len(items) if stop is None else stop
    while True:
        try:
            start = items.index(value, start, stop)
        except ValueError:
            return
        yield start
        start += 1


class _Module:
    """The brace structure of one TTGIR text. Per-line facts are kept in
    lists indexed by 0-based line, not in an object per line: a 66 MB file
    has more than a million lines."""

    def __init__(self, text: str, path: str):
        self.path = path
        self.raw = raw = text.splitlines(keepends=True)
        self.n = len(raw)
        self.regions: dict[int, Region] = {0: Region(0, None, None, None)}
        self.opens: dict[int, list[int]] = {}  # line -> the regions it opens, in order
        self.labels: dict[tuple[int, str], int] = {}  # (region, label) -> block
        self.block_region: dict[int, int] = {0: 0}  # block -> its region
        self.block_lines: dict[int, list[int]] = {0: []}  # block -> its op and record lines
        self.op: list[str | None] = []  # op name, or None
        self.result: list[str | None] = []  # first SSA result name without '%', or None
        # The region and block each line begins in (a label line: the block
        # before it), those of its op (after leading closing braces), and the
        # region after the whole line. start_region and start_block have one
        # more entry, for the end of the file (see gap_region).
        self.start_region: list[int] = []
        self.region: list[int] = []
        self.end_region: list[int] = []
        self.start_block: list[int] = []
        self.block: list[int] = []
        self._clear_until: dict[int, int] = {}
        record, record_word = record_line(), record_op()
        words: dict = {}
        stack = [0]
        blocks = [0]  # the current block of each open region
        last_popped = None
        # Lines plain..i-1 hold no brace and no '^': each begins, has its op
        # and ends in the current region and block (filled in at once by _fill).
        plain = 0
        region_ops, block_ops = self.regions[0].lines, self.block_lines[0]
        add_op, add_result = self.op.append, self.result.append
        for i, line in enumerate(raw):
            body = line.rstrip("\n")
            op, result = _read_op(body, words)
            add_op(op)
            add_result(result)
            if "{" not in body and "}" not in body and "^" not in body:
                if op is not None or (record_word in body and record.match(body)):
                    region_ops.append(i)
                    block_ops.append(i)
                continue
            self._fill(i - plain, stack[-1], blocks[-1])
            plain = i + 1
            start_region = stack[-1]
            start_block = blocks[-1]
            label = _LABEL_RE.match(body) if "^" in body else None
            if label:
                blocks[-1] = len(self.block_region)
                self.block_region[blocks[-1]] = stack[-1]
                self.block_lines[blocks[-1]] = []
                self.labels[(stack[-1], label["label"])] = blocks[-1]
            op_region = op_block = None
            # The braces outside string literals, in order; the op comes after
            # the closing braces that lead the line (`} else {`).
            code = code_text(body) if "{" in body or "}" in body else ""
            braces = _BRACES.findall(code) if code else ()
            leading = 0
            rest = code.lstrip()
            while rest[:1] == "}":
                leading += 1
                rest = rest[1:].lstrip()
            for k, brace in enumerate(braces):
                if k == leading:
                    op_region, op_block = stack[-1], blocks[-1]
                if brace == "{":
                    rid = len(self.regions)
                    if op is not None:
                        owner = op
                    elif body.lstrip().startswith("}") and last_popped is not None:
                        owner = self.regions[last_popped].owner  # `} else {`, `} do {`
                    else:
                        owner = None
                    self.regions[rid] = Region(rid, stack[-1], owner, i)
                    self.opens.setdefault(i, []).append(rid)
                    stack.append(rid)
                    blocks.append(len(self.block_region))
                    self.block_region[blocks[-1]] = rid
                    self.block_lines[blocks[-1]] = []
                else:
                    if len(stack) == 1:
                        raise RewriteError(f"{path}:{i + 1}: unbalanced '}}'")
                    last_popped = stack.pop()
                    blocks.pop()
                    self.regions[last_popped].close_line = i
            if op_region is None:
                op_region = stack[-1]
            if op_block is None:
                op_block = blocks[-1]
            self.start_region.append(start_region)
            self.region.append(op_region)
            self.end_region.append(stack[-1])
            self.start_block.append(start_block)
            self.block.append(op_block)
            if op is not None or (record_word in body and record.match(body)):
                self.regions[op_region].lines.append(i)
                self.block_lines[op_block].append(i)
            region_ops, block_ops = self.regions[stack[-1]].lines, self.block_lines[blocks[-1]]
        self._fill(self.n - plain, stack[-1], blocks[-1])
        if len(stack) != 1:
            raise RewriteError(f"{path}:{len(raw)}: {len(stack) - 1} unclosed '{{' at end of file")
        self.start_region.append(self.end_region[-1] if raw else 0)
        self.start_block.append(0)
        self.end_block = blocks[-1]  # the block that lines added at the end of the file would be in

    def _fill(self, count: int, region: int, block: int) -> None:
        """The per-line facts of `count` plain lines in `region` and `block`."""
        if count:
            self.start_region += [region] * count
            self.region += [region] * count
            self.end_region += [region] * count
            self.start_block += [block] * count
            self.block += [block] * count

    # -- helpers -----------------------------------------------------------
    def allowed(self, rid: int) -> bool:
        r = self.regions[rid]
        return r.owner in _ALLOWED_OWNERS

    def op_last_line(self, i: int) -> int:
        """Last line of the op starting at line i (its closing line if it has regions)."""
        region, end_region = self.region[i], self.end_region
        j = i
        while end_region[j] != region:
            j += 1
        return j

    def gap_region(self, gap: int) -> int:
        """Region into which a line inserted before original line `gap` goes."""
        return self.start_region[min(gap, self.n)]

    def gap_block(self, gap: int) -> int:
        """Block into which a line inserted before original line `gap` goes."""
        return self.start_block[gap] if gap < self.n else 0

    def clear_until(self, rid: int) -> int:
        """The last gap of region `rid` that needs no check: in a region
        records may go into, its first terminator line (no terminator comes
        before a gap up to it), or past the end; -1 in any other region."""
        if rid not in self._clear_until:
            if self.allowed(rid):
                terminators = (i for i in self.regions[rid].lines if self.op[i] in _TERMINATORS)
                self._clear_until[rid] = next(terminators, self.n + 1)
            else:
                self._clear_until[rid] = -1
        return self._clear_until[rid]

    def successors(self, i: int) -> list[int]:
        """The blocks the branch on line i goes to (unknown labels left out)."""
        text = self.raw[i].split(" loc(", 1)[0]
        found = (self.labels.get((self.region[i], name)) for name in _SUCCESSOR_RE.findall(text))
        return [b for b in found if b is not None]

    def functions(self):
        """(func line index, body region id, is_public) for every tt.func."""
        for i in _indices(self.op, "tt.func"):
            bodies = [
                rid
                for rid in self.opens.get(i, ())
                if self.regions[rid].owner == "tt.func"
                and self.regions[rid].close_line is not None
                and self.regions[rid].close_line > i
            ]
            if not bodies:
                continue  # a declaration
            yield i, bodies[-1], bool(re.match(r"\s*tt\.func\s+public\b", self.raw[i]))

    def indent(self, i: int) -> str:
        """The leading white space of line i."""
        body = self.raw[i].rstrip("\n")
        return body[: len(body) - len(body.lstrip())]

    def indent_for(self, rid: int) -> str:
        r = self.regions[rid]
        for i in r.lines:
            return self.indent(i)
        if r.open_line is not None:
            return self.indent(r.open_line) + "  "
        return ""


def _check_gap(mod: _Module, gap: int, rid: int, what: str, lineno: int) -> None:
    if gap <= mod.clear_until(rid):
        return  # most gaps
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
    if prev is not None and mod.block[prev] == mod.gap_block(gap) and mod.op[prev] in _TERMINATORS:
        raise RewriteError(
            f"{path}:{lineno}: {what}: would insert a record after the terminator {mod.op[prev]} on line {prev + 1}"
        )


def _make_scope(mod: _Module, name: str, start_gap: int, end_gap: int, origin: str) -> Scope:
    # gap_region and gap_block, inline: one call per load of a large file.
    start_region, start_block = mod.start_region, mod.start_block
    rs = start_region[start_gap]
    if rs != start_region[end_gap] or start_block[start_gap] != start_block[end_gap]:
        raise RewriteError(
            f"{mod.path}:{start_gap + 1}: {origin}: start (before line {start_gap + 1}) and end "
            f"(after line {end_gap}) are not in the same block"
        )
    if end_gap <= start_gap:
        raise RewriteError(f"{mod.path}:{start_gap + 1}: {origin}: empty or reversed scope")
    if end_gap > mod.clear_until(rs):  # else both gaps pass _check_gap
        _check_gap(mod, start_gap, rs, origin, start_gap + 1)
        _check_gap(mod, end_gap, rs, origin, max(end_gap, 1))
    return Scope(name, start_gap, end_gap, origin)
