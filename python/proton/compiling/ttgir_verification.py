"""The TTGIR rewriter's checks (proton.compiling.ttgir_rewriter): scopes of
one region do not cross (_check_nesting), and every `proton.record` of a
text pairs in its block or on every path out of it (verify_records)."""

from __future__ import annotations

import heapq

from .ttgir_parsing import RewriteError, Scope, _BRANCHES, _collector_paused, _Module
from .ttgir_text import record_line, record_op


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
