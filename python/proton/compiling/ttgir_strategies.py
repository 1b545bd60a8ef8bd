"""The TTGIR rewriter's strategies (proton.compiling.ttgir_rewriter): which
scopes to insert. The default (a kernel scope, a scope per tt.load and a
compute scope before the stores), --wrap-op, --for-body and --scope."""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence

from ..contract.scope_names import check_scope_name
from .ttgir_parsing import RewriteError, Scope, _check_gap, _indices, _make_scope, _Module, _TERMINATORS


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
