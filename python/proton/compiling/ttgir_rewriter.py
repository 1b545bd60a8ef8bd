"""The TTGIR rewriter behind `insert_proton_records` (its front end is
proton.commands.insert_proton_records): inserts `proton.record start/end "name"` lines
into TTGIR text dumped by Triton, for use with `TRITON_KERNEL_OVERRIDE`.

This is a line-oriented text tool: it does not parse MLIR (ttgir_parsing
reads the regions, blocks and ops of each line; ttgir_strategies chooses the
scopes; ttgir_verification checks the records). Scopes are only
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
import itertools
import operator
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..writers.files import read_input
from .ttgir_parsing import _BRANCHES, RewriteError, Scope, _collector_paused, _Module
from .ttgir_strategies import _default_scopes, _explicit_scopes, _for_body_scopes, _wrap_op_scopes
from .ttgir_text import record_line, record_op
from .ttgir_verification import _check_blocks, _check_nesting, verify_records

DEFAULT_DUMP_DIR = "./ttgir_dump"


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
