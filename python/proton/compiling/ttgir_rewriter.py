"""The TTGIR rewriter behind `insert_proton_records` (its front end is
proton.commands.insert_proton_records): inserts `proton.record start/end "name"` lines
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

Time is linear in the size of the text: each line is read once (with str
methods where a regex call per line would dominate), and the records written
are checked from what was inserted rather than by reading the rewritten text
again (see rewrite_text). The default strategy reads a run of 8 or more plain
tt.load lines as its first and last line only; the lines in between get
their scopes from one regex substitution (see _rewrite_load_runs).
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import heapq
import itertools
import operator
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..contract.scope_names import check_scope_name
from ..writers.files import read_input
from .ttgir_text import code_text, record_line, record_op

DEFAULT_DUMP_DIR = "./ttgir_dump"

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
        data = read_input(str(path))  # a FIFO or device is refused, not waited on
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
    record, word = record_line(), record_op()
    return "".join([line for line in text.splitlines(keepends=True) if word not in line or not record.match(line)])


def backup_path(path: Path) -> Path:
    """Where the first backup of `path` lives; it is never overwritten."""
    return path.with_name(path.name + ".bak")


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
class _LoadRun:
    """One-line load scopes on consecutive lines (see _rewrite_load_runs),
    kept as a column of names rather than a Scope each: a file can hold a
    million."""

    first_line: int  # 0-based line of its first load
    names: list  # the scopes' names, in order
    out_start: int  # 1-based line of the first start record; each next one is 3 lines further


class ScopeList(Sequence):
    """The scopes of a rewrite, in the order of their start records (the
    order the command lists them in). A run of one-line load scopes becomes
    Scope objects only when they are read one by one; columns() reads all."""

    def __init__(self, scopes: Sequence[Scope], runs: Sequence[_LoadRun] = ()):
        self._items = sorted([*scopes, *runs], key=operator.attrgetter("out_start"))
        sizes = [len(item.names) if isinstance(item, _LoadRun) else 1 for item in self._items]
        self._ends = list(itertools.accumulate(sizes))  # items before and in each: to find the k-th scope

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError("scope index out of range")
        m = bisect.bisect_right(self._ends, k)
        item = self._items[m]
        if not isinstance(item, _LoadRun):
            return item
        j = k - (self._ends[m - 1] if m else 0)
        line, out = item.first_line + j, item.out_start + 3 * j
        return Scope(item.names[j], line, line + 1, f"tt.load on line {line + 1}", out_start=out, out_end=out + 2)

    def columns(self) -> tuple[list, list, list]:
        """(names, start record lines, end record lines) of all the scopes,
        1-based, in order: without a Scope object each."""
        names, starts, ends = [], [], []
        for item in self._items:
            if isinstance(item, _LoadRun):
                stop = item.out_start + 3 * len(item.names)
                names += item.names
                starts += range(item.out_start, stop, 3)
                ends += range(item.out_start + 2, stop + 2, 3)
            else:
                names.append(item.name)
                starts.append(item.out_start)
                ends.append(item.out_end)
        return names, starts, ends


@dataclass
class RewriteResult:
    text: str
    scopes: ScopeList


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


# -- strategies ---------------------------------------------------------------


def _default_scopes(mod: _Module, line_of: list[int] | None = None) -> list[Scope]:
    """The default strategy's scopes. `line_of` maps mod's lines to those of
    the text the names and origins refer to (see _rewrite_load_runs)."""
    scopes = []
    for fline, body, public in mod.functions():
        if not public:
            continue
        region = mod.regions[body]
        # Every way out of the body: an early return is a tt.return in a block of its own.
        returns = [i for i in _indices(mod.op, "tt.return", fline + 1, region.close_line) if mod.region[i] == body]
        scopes.append(_kernel_scope(mod, fline + 1, returns or [region.close_line]))
        # loads anywhere in allowed regions of this function
        loads_by_region: dict[int, list[int]] = {}
        wrapped: dict[int, bool] = {}  # region -> whether its loads get scopes
        for i in _indices(mod.op, "tt.load", fline + 1, region.close_line):
            rid = mod.region[i]
            if rid not in wrapped:
                wrapped[rid] = mod.allowed(rid) and _inside(mod, rid, body)
            if wrapped[rid]:
                result = mod.result[i]
                number = i + 1 if line_of is None else line_of[i] + 1
                name = f"load_{result}" if result else f"load_line{number}"
                last = i if mod.end_region[i] == rid else mod.op_last_line(i)  # most loads open no region
                scopes.append(_make_scope(mod, name, i, last + 1, f"tt.load on line {number}"))
                loads_by_region.setdefault(rid, []).append(i)
        for rid, loads in loads_by_region.items():
            after = mod.op_last_line(loads[-1]) + 1
            block = mod.block[loads[-1]]
            lines = mod.regions[rid].lines
            later = itertools.islice(lines, bisect.bisect_left(lines, after), None)
            store = next((i for i in later if mod.block[i] == block and mod.op[i] == "tt.store"), None)
            if store is not None and store > after:
                scopes.append(_make_scope(mod, "compute", after, store, "compute scope"))
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
        matches: dict[str, bool] = {}  # op name -> whether it matches: one regex call per name
        for i, op in enumerate(mod.op):
            if op is None or op in _TERMINATORS:
                continue
            if op not in matches:
                matches[op] = rx.fullmatch(op) is not None
            if not matches[op]:
                continue
            if not mod.allowed(mod.region[i]):
                continue  # e.g. inside a tt.reduce combiner, or a tt.func line itself
            name = f"{prefix or op.replace('.', '_')}_{n}"
            n += 1
            scopes.append(_make_scope(mod, name, i, mod.op_last_line(i) + 1, f"--wrap-op {pattern} on line {i + 1}"))
    return scopes


def _for_body_scopes(mod: _Module, name: str) -> list[Scope]:
    scopes = []
    for _, body, _public in mod.functions():
        for i in mod.regions[body].lines:
            if mod.op[i] != "scf.for":
                continue
            bodies = [
                mod.regions[rid]
                for rid in mod.opens.get(i, ())
                if mod.regions[rid].parent == body
                and mod.regions[rid].close_line is not None
                and mod.regions[rid].close_line > i
            ]
            if not bodies:
                continue
            r = bodies[-1]
            yields = [j for j in r.lines if mod.op[j] == "scf.yield"]
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
        for i in range(after, mod.n):
            if rx.search(mod.raw[i]):
                return i
        raise RewriteError(f"{mod.path}: {what}: no line at or after line {after + 1} matches {spec[3:]!r}")
    if not spec.isdigit() or not 1 <= int(spec) <= mod.n:
        raise RewriteError(f"{mod.path}: {what}: {spec!r} is not a line number in 1..{mod.n} nor a re:REGEX")
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
        rs, re_ = mod.start_region[s], mod.end_region[e]
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
    start_region = mod.start_region  # gap_region, inline
    for s in scopes:
        by_region.setdefault(start_region[s.start_gap], []).append(s)
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


@dataclass
class _Rewritten:
    """What _assemble wrote: the lines of the text, and where its records went."""

    lines: list  # the text, one line an item
    records: dict  # block -> the records added to it, in order: (kind, name, 0-based line of text)
    gaps: list  # the original lines before which records were added, ascending
    added: list  # added[k]: how many records were added before original line gaps[k]

    def line(self, i: int) -> int:
        """The 0-based line of the text that original line i became."""
        k = bisect.bisect_right(self.gaps, i)
        return i + (self.added[k - 1] if k else 0)


def _assemble(mod: _Module, scopes: list[Scope]) -> _Rewritten:
    for k, s in enumerate(scopes):
        s.seq = k
    ends_at: dict[int, list[Scope]] = {}
    starts_at: dict[int, list[Scope]] = {}
    for s in scopes:
        for gap in s.more_end_gaps:
            ends_at.setdefault(gap, []).append(s)
        ends_at.setdefault(s.end_gap, []).append(s)
        starts_at.setdefault(s.start_gap, []).append(s)
    raw, n, start_region, start_block = mod.raw, mod.n, mod.start_region, mod.start_block
    out: list[str] = []
    records: dict[int, list] = {}
    gaps = sorted(ends_at.keys() | starts_at.keys())
    added = []
    indents: dict[int, str] = {}  # region -> the indent of its records
    copied = 0  # original lines in `out`
    for gap in gaps:
        out += raw[copied:gap]  # the lines between records, copied as one slice
        copied = gap
        if gap == n and raw and not raw[-1].endswith("\n"):
            out[-1] += "\n"  # records follow the last line
        rid = start_region[gap]  # gap_region, inline
        indent = indents.get(rid)
        if indent is None:
            indent = indents[rid] = mod.indent_for(rid)
        block = records.setdefault(start_block[gap] if gap < n else mod.end_block, [])
        ends = ends_at.get(gap, ())
        if len(ends) > 1:
            ends = sorted(ends, key=lambda s: (-s.start_gap, -s.seq))
        for s in ends:
            out.append(f'{indent}proton.record end "{s.name}"\n')
            s.out_end = len(out)
            block.append(("end", s.name, len(out) - 1))
        starts = starts_at.get(gap, ())
        if len(starts) > 1:
            starts = sorted(starts, key=lambda s: (-s.end_gap, s.seq))
        for s in starts:
            out.append(f'{indent}proton.record start "{s.name}"\n')
            s.out_start = len(out)
            block.append(("start", s.name, len(out) - 1))
        added.append(len(out) - gap)
    out += raw[copied:]
    return _Rewritten(out, records, gaps, added)


def _verified_inserted(mod: _Module, scopes: list[Scope], rewritten: _Rewritten) -> bool:
    """Whether the records of the rewritten text verify, told from what
    _assemble added to `mod`'s text, which held no records: each added line
    reads back as the record written, in the block of the line after it, and
    every other line reads as before. False where that is not certain (a name
    with a quote, a backslash or a character that splits lines; records after
    the last line) or where they do not verify: verify_records, reading the
    rewritten text, then has the last word and the exact message."""
    names = "".join([s.name for s in scopes])
    if '"' in names or "\\" in names or not names.isprintable():
        return False
    if rewritten.gaps and rewritten.gaps[-1] >= mod.n:
        return False
    blocks = {}
    for block in rewritten.records.keys() | {b for b, lines in mod.block_lines.items() if lines}:
        records = rewritten.records.get(block, [])
        lines = mod.block_lines.get(block)
        last = rewritten.line(lines[-1]) if lines else -1
        branches = []
        if records and records[-1][2] > last:
            last = records[-1][2]  # a record is the block's last op
        elif mod.op[lines[-1]] in _BRANCHES:
            branches = mod.successors(lines[-1])
        blocks[block] = (records, last, branches)
    try:
        _check_blocks("<rewritten>", blocks)
    except (RewriteError, IndexError):
        return False
    return True


@_collector_paused()
def verify_records(text: str, path: str = "<text>") -> list[tuple[str, int, int]]:
    """Checks every `proton.record` in `text`: each start has an end with the
    same name in the same block, or on every path out of it through branches
    to other blocks of its region (early returns), and scopes nest without
    crossing. Returns (name, start line, end line) for each end, 1-based;
    raises RewriteError naming the file and line otherwise."""
    mod = _Module(text, path)
    record, word = record_line(), record_op()
    blocks = {}
    for block, lines in mod.block_lines.items():
        if not lines:
            continue
        records = []
        for i in lines:
            m = record.match(mod.raw[i]) if word in mod.raw[i] else None
            if m:
                records.append((m["kind"], m["name"], i))
        last = lines[-1]
        blocks[block] = (records, last, mod.successors(last) if mod.op[last] in _BRANCHES else [])
    return _check_blocks(path, blocks)


def _check_blocks(path: str, blocks: dict) -> list[tuple[str, int, int]]:
    """verify_records' walk over the blocks that hold ops: `blocks` maps each
    to (its records as (kind, name, 0-based line), its last op line, the
    blocks that op branches to)."""
    entry: dict[int, tuple] = {}  # block -> scopes open when it is entered
    found: list[tuple[str, int, int]] = []
    unclosed: list[tuple[int, str]] = []
    order = sorted(blocks)
    entered: list[int] = []  # heap of the blocks not walked yet whose entry is known
    walked: set[int] = set()
    k = 0
    for _ in order:
        # A block whose entry is known goes first (the lowest); a block no branch reaches starts with nothing open.
        if entered:
            block = heapq.heappop(entered)
        else:
            while order[k] in walked:
                k += 1
            block = order[k]
        walked.add(block)
        records, last, branches = blocks[block]
        stack = list(entry.get(block, ()))
        for kind, name, i in records:
            if kind == "start":
                stack.append((name, i + 1))
            elif stack and stack[-1][0] == name:
                found.append((name, stack.pop()[1], i + 1))
            else:
                _unpaired_end(path, i, name, stack)
        for successor in branches:
            if successor not in entry:
                entry[successor] = tuple(stack)
                if successor in blocks and successor not in walked:
                    heapq.heappush(entered, successor)
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


def _unpaired_end(path: str, i: int, name: str, stack: list) -> None:
    """Raises for the record `end name` on line i that does not close the
    innermost open scope."""
    if not stack:
        raise RewriteError(f"{path}:{i + 1}: proton.record end {name!r} without a start in the same block")
    top, top_line = stack[-1]
    if name in [n for n, _ in stack]:
        raise RewriteError(
            f"{path}:{i + 1}: scope {name!r} ends while {top!r} (started on line {top_line}) is still "
            "open: scopes cross"
        )
    raise RewriteError(f"{path}:{i + 1}: proton.record end {name!r} without a start in the same block")


@_collector_paused()
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
    if not force and "proton.record" in text:
        for i, raw in enumerate(text.splitlines()):
            if "proton.record" in raw:
                raise RewriteError(f"{path}:{i + 1}: already holds proton.record; use --force to add more")
    if not (wrap_ops or scopes or for_body) and record_op() not in text:
        fast = _rewrite_load_runs(text, path)
        if fast is not None:
            return fast
    mod = _Module(text, path)
    wanted: list[Scope] = []
    if not (wrap_ops or scopes or for_body):
        wanted += _default_scopes(mod)
    wanted += _wrap_op_scopes(mod, wrap_ops, names)
    wanted += _explicit_scopes(mod, scopes)
    if for_body:
        wanted += _for_body_scopes(mod, for_body)
    _check_nesting(mod, wanted)
    rewritten = _assemble(mod, wanted)
    # The records are verified as written; reading the rewritten text again
    # would take as long as all the rest, so where the text held no records
    # of its own they are checked from what was inserted.
    new_text = "".join(rewritten.lines)
    if record_op() in text or not _verified_inserted(mod, wanted, rewritten):
        verify_records(new_text, f"{path} (rewritten)")
    return RewriteResult(new_text, ScopeList(wanted))


# -- runs of loads --------------------------------------------------------------

# A line that is a tt.load and nothing else the rewrite looks at: a plain
# result (what _read_op reads without _OP_RE), the op exactly tt.load, no
# brace and no block label. Its scope is its own line, and it is not the
# first op of a region, a terminator or a store.
_LOAD_LINE = r"[ \t]*%[A-Za-z0-9_]+ = tt\.load(?![\w$]|\.[\w$])[^{}^\n]*\n"
# Runs of at least 8 such lines. The search starts at the literal op name
# (fast to find); the first line's head is checked apart (_LOAD_HEAD).
_LOAD_RUN = re.compile(rf"tt\.load(?![\w$]|\.[\w$])[^{{}}^\n]*\n(?:{_LOAD_LINE}){{7,}}")
_LOAD_HEAD = re.compile(r"[ \t]*%[A-Za-z0-9_]+ = ")
# On lines known to be _LOAD_LINE: each line with its result's name, and the
# name alone (the search skips the indent: faster than an anchor at each line).
_LOAD_NAME = re.compile(r"[ \t]*%([A-Za-z0-9_]+) = [^\n]*\n")
_LOAD_NAME_ONLY = re.compile(r"%([A-Za-z0-9_]+) = [^\n]*\n")
# What str.splitlines also takes for the end of a line: the runs are found by "\n" alone.
_OTHER_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _load_runs(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of the runs of 8 or more lines of _LOAD_LINE
    in `text`, each from the start of its first line to the end of its last."""
    if any(char in text for char in _OTHER_LINE_BREAKS):
        return []
    runs = []
    for m in _LOAD_RUN.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        if not _LOAD_HEAD.fullmatch(text, start, m.start()):
            start = text.index("\n", start) + 1  # the lines after the first are loads
        if text.count("\n", start, m.end()) >= 3:
            runs.append((start, m.end()))
    return runs


def _rewrite_load_runs(text: str, path: str) -> RewriteResult | None:
    """The default strategy's rewrite of `text` with only the first and last
    line of each run of loads (_load_runs) read line by line, or None where
    the text has no such run or the shortened text does not rewrite cleanly
    (rewrite_text then reads all of it, for the exact error).

    The lines in between cannot change anything but their own scopes: they
    are in the region and block of the first line, after its op and before
    the last line's, whose scopes are told apart from those of others on
    the same lines (they start or end right at their load). So the shortened
    text gets the same scopes, in the same order and checked the same way;
    each middle line then gets its own start and end record, indented like
    the first line's records, and shifts the lines after it."""
    runs = _load_runs(text)
    if not runs:
        return None
    pieces, middles, kept = [], [], []  # kept: (the shortened text's line of a run's first line, lines removed)
    copied = line = removed = 0  # offset copied, its line in text, lines removed before it
    for start, end in runs:
        first_end = text.index("\n", start) + 1
        last_start = text.rindex("\n", start, end - 1) + 1
        line += text.count("\n", copied, start)
        pieces.append(text[copied:first_end])
        middle = text[first_end:last_start]
        count = middle.count("\n")
        kept.append((line - removed, count))
        middles.append(middle)
        line += count + 1
        removed += count
        copied = last_start
    pieces.append(text[copied:])
    shortened = "".join(pieces)
    try:
        mod = _Module(shortened, path)
        # line_of[c]: the line of `text` that line c of the shortened text is (c = mod.n: the end).
        line_of: list[int] = []
        done = shift = 0
        for first, count in kept:
            line_of += range(done + shift, first + 1 + shift)
            done, shift = first + 1, shift + count
        line_of += range(done + shift, mod.n + 1 + shift)
        wanted = _default_scopes(mod, line_of)
        _check_nesting(mod, wanted)
        rewritten = _assemble(mod, wanted)
        if not _verified_inserted(mod, wanted, rewritten):
            return None
    except RewriteError:
        return None
    one_line_loads = {s.start_gap for s in wanted if s.end_gap == s.start_gap + 1 and s.origin.startswith("tt.load ")}
    out, parts, runs_out = rewritten.lines, [], []
    inserted = []  # (line of the shortened output the middle goes before, lines it adds)
    copied = added = 0
    for (first, count), middle in zip(kept, middles):
        wrapped = first in one_line_loads
        at = rewritten.line(first) + 1 + wrapped  # after the first load and its end record
        parts += out[copied:at]
        copied = at
        if wrapped:
            indent = mod.indent_for(mod.start_region[first + 1])
            names = ["load_" + name for name in _LOAD_NAME_ONLY.findall(middle)]
            middle = _LOAD_NAME.sub(
                f'{indent}proton.record start "load_\\1"\n\\g<0>{indent}proton.record end "load_\\1"\n', middle
            )
            runs_out.append(_LoadRun(line_of[first] + 1, names, at + added + 1))
        parts.append(middle)
        inserted.append((at, 3 * count if wrapped else count))
        added += inserted[-1][1]
    parts += out[copied:]
    starts = [at for at, _ in inserted]
    shifts = list(itertools.accumulate(n for _, n in inserted))

    def moved(out_line: int) -> int:  # a 1-based line of the shortened output in the whole one
        k = bisect.bisect_right(starts, out_line - 1)
        return out_line + (shifts[k - 1] if k else 0)

    for s in wanted:
        s.out_start, s.out_end = moved(s.out_start), moved(s.out_end)
        # A start goes before its line, an end after the line before it (the two differ across a middle).
        s.start_gap = line_of[s.start_gap]
        s.end_gap = line_of[s.end_gap - 1] + 1
        s.more_end_gaps = [line_of[gap - 1] + 1 for gap in s.more_end_gaps]
    return RewriteResult("".join(parts), ScopeList(wanted, runs_out))


# -- CLI ----------------------------------------------------------------------
