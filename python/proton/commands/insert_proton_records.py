"""`insert_proton_records [options] [TTGIR files or directories]`: the command
line of the TTGIR rewriter (proton.compiling.ttgir_rewriter). It finds the
dumped files, keeps a first backup of each (`<file>.bak`, never overwritten),
and writes the rewritten text or, with --dry-run, a diff. The
`insert_proton_records` console script; in a checkout,
tools/insert_proton_records/insert_proton_records.py runs it too."""

from __future__ import annotations

import argparse
import itertools
import operator
import os
import re
import sys
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from ..writers.files import output
from ..compiling.ttgir_rewriter import (
    DEFAULT_DUMP_DIR,
    InputError,
    RewriteError,
    backup_path,
    read_ttgir,
    rewrite_text,
    strip_records,
)
from ..compiling.ttgir_strategies import check_name, parse_scope_spec
from ..compiling.ttgir_text import record_op

EPILOG = r"""
rules (each inserted line is `proton.record start "NAME"` or `proton.record end "NAME"`,
indented like the ops of its block):

  default (no --wrap-op/--scope/--for-body):
    * "kernel": starts as the first op of every public tt.func body and ends
      right before each of its top-level tt.return (an early `return` in the
      kernel is a tt.return in a block of its own: the scope ends there too).
    * every tt.load (in the function body or in scf.for/scf.if/scf.while bodies)
      gets its own scope named load_<SSA result>:
          %a_5 = tt.load %a_4, %m_3 : ...   ->   load_a_5
          %5 = tt.load %4 : ...             ->   load_5
    * "compute": in each block holding wrapped loads, from the line after the
      last load to right before the first tt.store after it in the same block;
      omitted when there is no such store or nothing in between.
      example:  insert_proton_records ttgir_dump

  --wrap-op PATTERN (repeatable), --name PREFIX (repeatable, i-th applies to
  the i-th --wrap-op):
    wraps every op whose whole name matches the regular expression PATTERN
    (an op with regions is wrapped including them). Scopes are named
    <op name with '.' as '_'>_<n> or <PREFIX>_<n>, n counting from 0 per
    pattern in file order.
      example:  insert_proton_records --wrap-op tt.load --wrap-op ttng.warp_group_dot \
                    --name load --name mma k.ttgir      # load_0, load_1, mma_0
      example:  insert_proton_records --wrap-op tt.dot k.ttgir         # tt_dot_0

  --scope NAME:START:END (repeatable):
    START/END are 1-based line numbers of the original file, or re:REGEX
    (START: first line matching; END: first matching line at or after START;
    a regex may hold ':' but not ':re:'). Start goes before START's line, end
    after END's line. Both must be in the same block (brace nesting region),
    else an error names the file and lines.
      example:  insert_proton_records --scope epilogue:40:49 k.ttgir
      example:  insert_proton_records --scope 'loop:re:scf\.for:re:^    \} loc' k.ttgir

  --for-body NAME:
    wraps the body of every scf.for at the top level of a function: start as
    the first line inside the body, end right before its scf.yield (or before
    its closing brace when the loop yields nothing).
      example:  insert_proton_records --for-body iteration k.ttgir

safety: a file that already holds proton.record is refused unless --force.
<file>.bak keeps the text before the first insertion and is never overwritten;
--force re-inserts from that backup (its text without proton.record lines),
so earlier records are replaced, not doubled, and --scope line numbers refer
to the original text. A file whose non-record lines differ from its .bak
(edited after instrumenting, or a stale .bak) is refused: move the .bak away.
Unreadable, binary or non-UTF-8 inputs, broken links and directories named
*.ttgir stop the run with a one-line error (exit status 2) before anything is
written. A file whose rewrite is refused or does not verify is skipped with
its reason on stderr and the other files are instrumented (exit status 0);
when every file is skipped, nothing is written and the exit status is 2.

checks: records are never put after a terminator
or into regions other than tt.func/scf.for/scf.if/scf.while/scf.execute_region
bodies; scopes that cross are refused; the rewritten text is verified (each
start has its end in the same block, scopes nest) before anything is written.
--dry-run prints a unified diff and writes nothing.

run the rewritten kernels with stock Triton:
  TRITON_ALWAYS_COMPILE=1 TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=ttgir_dump python app.py
"""


#: A line of the list of scopes: name, start line, end line.
SCOPE_LINE = "  {:<24} start line {}, end line {}\n"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="insert_proton_records",
        description="Insert proton.record start/end scopes into dumped TTGIR files "
        "(see proton-dump-ttgir) for TRITON_KERNEL_OVERRIDE.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "inputs",
        nargs="*",
        help=f"TTGIR files or directories searched recursively for *.ttgir (default: {DEFAULT_DUMP_DIR})",
    )
    p.add_argument(
        "--wrap-op",
        action="append",
        default=[],
        metavar="PATTERN",
        help="wrap every op whose name matches PATTERN (regex, whole name)",
    )
    p.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="PREFIX",
        help="scope name prefix for the --wrap-op at the same position",
    )
    p.add_argument(
        "--scope",
        action="append",
        default=[],
        metavar="NAME:START:END",
        help="explicit scope; START/END are line numbers or re:REGEX",
    )
    p.add_argument("--for-body", metavar="NAME", help="wrap the body of every top-level scf.for")
    p.add_argument(
        "--force",
        action="store_true",
        help="re-instrument files that already hold proton.record, starting again from <file>.bak",
    )
    p.add_argument("--dry-run", action="store_true", help="print a unified diff, write nothing")
    return p


def find_inputs(inputs: Iterable[str]) -> list[Path]:
    """The files named, and the *.ttgir entries under the directories named
    (directories and broken links among them too: reading them reports the
    problem). InputError for a path that does not exist or cannot be listed."""
    files: list[Path] = []
    for item in list(inputs) or [DEFAULT_DUMP_DIR]:
        p = Path(item)
        if p.is_symlink() and not p.exists():
            raise InputError(f"{item}: broken symbolic link (its target {os.readlink(p)} does not exist)")
        if p.is_dir() and p.name.endswith(".ttgir"):
            raise InputError(f"{item}: is a directory, not a TTGIR file")
        if p.name.endswith(".bak"):
            raise InputError(
                f"{item}: a backup this command keeps (never instrumented or overwritten); name "
                f"{p.name[: -len('.bak')]} instead"
            )
        if p.is_dir():
            try:
                with os.scandir(p):
                    pass
            except OSError as e:
                raise InputError(f"{item}: cannot list the directory: {e.strerror or e}") from None
            files += sorted(p.rglob("*.ttgir"))
        elif p.exists():
            files.append(p)
        else:
            hint = " (dump the TTGIR first: proton-dump-ttgir --out DIR COMMAND)" if not list(inputs) else ""
            raise InputError(f"{item}: no such file or directory{hint}")
    unique: dict[str, Path] = {}
    for f in files:  # a file named twice is rewritten once
        unique.setdefault(os.path.realpath(f), f)
    return list(unique.values())


def _plan(f: Path, force: bool) -> tuple[str, str, str, str | None, str | None]:
    """(current text, text to instrument, its name for messages, text of an
    existing backup or None, current text without proton.record lines or None
    where not needed). With --force the text to instrument is the backup's (or,
    with no backup yet, the file's) without proton.record lines. Each text is
    stripped once: that reads every line."""
    text = read_ttgir(f)
    bak = backup_path(f)
    bak_text = read_ttgir(bak) if (bak.exists() or bak.is_symlink()) else None
    stripped = bak_base = None
    if bak_text is not None:
        bak_base, stripped = strip_records(bak_text), strip_records(text)
        if bak_base != stripped:
            raise RewriteError(
                f"{f}: differs from its backup {bak} in lines other than proton.record (edited after "
                f"instrumenting, or a backup of another version); the backup is never overwritten and --force "
                f"would re-insert from it: compare the two, then move {bak} away to instrument {f} as it is now"
            )
    if not force:
        return text, text, str(f), bak_text, stripped
    if bak_base is not None:
        return text, bak_base, str(bak), bak_text, stripped
    base = strip_records(text)
    return text, base, (str(f) if base == text else f"{f} (without its proton.record lines)"), None, base


def _changes(a: list[str], b: list[str]) -> list[tuple[int, int, int, int]]:
    """(i1, i2, j1, j2) for each run of lines a[i1:i2] that became b[j1:j2];
    the lines between runs are equal. b is a with proton.record lines removed
    (--force) and inserted, so the lines of a and b without that word pair up
    in order and every run lies between two pairs: one pass finds them all
    (difflib's search for the longest matches is quadratic here, and among
    repeated lines may remove a line and insert it again). Should a pair
    differ (a last line without a newline gets one before records put after
    it), the rest of both files is one run."""
    # A substring test, not the record regex: 10 times faster, and every line removed or inserted holds the word.
    word = record_op()
    na, nb = len(a), len(b)
    runs = []
    i = j = 0
    while True:
        i2, j2 = i, j
        while i2 < na and word in a[i2]:
            i2 += 1
        while j2 < nb and word in b[j2]:
            j2 += 1
        paired = i2 < na and j2 < nb and a[i2] == b[j2]
        if not paired:
            i2, j2 = na, nb
        if i2 > i or j2 > j:
            # Equal lines at either end of a run (records re-inserted as they were) are context.
            while i < i2 and j < j2 and a[i] == b[j]:
                i, j = i + 1, j + 1
            e, f = i2, j2
            while e > i and f > j and a[e - 1] == b[f - 1]:
                e, f = e - 1, f - 1
            if i < e or j < f:
                runs.append((i, e, j, f))
        if not paired:
            return runs
        i, j = i2 + 1, j2 + 1


def unified_diff(a: list[str], b: list[str], fromfile: str, tofile: str, context: int = 3) -> Iterator[str]:
    """A unified diff from a to b (b the rewrite of a), in pieces of text, as
    difflib.unified_diff writes it: hunks with `context` equal lines around
    each run of changes, one hunk where at most 2 * context equal lines lie
    between runs; nothing where a and b are equal. In time linear in the
    number of lines (difflib took 153 s on 16,000 scopes)."""
    inserted = _inserted_lines(a, b)
    if inserted is not None:
        yield from _insertions_diff(a, b, inserted, fromfile, tofile, context)
        return
    runs = _changes(a, b)
    if runs:
        yield f"--- {fromfile}\n+++ {tofile}\n"

    k = 0
    while k < len(runs):
        m = k + 1
        while m < len(runs) and runs[m][0] - runs[m - 1][1] <= 2 * context:
            m += 1
        # The equal lines before a hunk and after it are the same in a and b.
        before = min(context, runs[k][0])
        after = min(context, len(a) - runs[m - 1][1])
        i, j = runs[k][0] - before, runs[k][2] - before
        end_i, end_j = runs[m - 1][1] + after, runs[m - 1][3] + after
        yield f"@@ -{_span(i, end_i)} +{_span(j, end_j)} @@\n"
        for i1, i2, j1, j2 in runs[k:m]:
            yield "".join([" " + line for line in a[i:i1]] + ["-" + line for line in a[i1:i2]])
            yield "".join(["+" + line for line in b[j1:j2]])
            i = i2
        yield "".join([" " + line for line in a[i:end_i]])
        k = m


def _inserted_lines(a: list[str], b: list[str]) -> bytes | None:
    """A byte per line of b, 1 where it is a proton.record line, where b is
    a with such lines inserted and none removed (the rewrite of a file
    without records); None otherwise. Read with C loops (map, compress):
    a large file has millions of lines."""
    word = record_op()
    if any(map(operator.contains, a, itertools.repeat(word))):
        return None
    inserted = bytes(map(operator.contains, b, itertools.repeat(word)))
    if list(itertools.compress(b, inserted.translate(_FLIPPED))) != a:
        return None  # e.g. a last line without a newline, given one before records after it
    return inserted


_FLIPPED = bytes.maketrans(b"\x00\x01", b"\x01\x00")


def _insertions_diff(
    a: list[str], b: list[str], inserted: bytes, fromfile: str, tofile: str, context: int
) -> Iterator[str]:
    """unified_diff where b is a with the lines marked in `inserted` added:
    each run of them is a change, and a hunk's lines are b's, "+" before the
    inserted ones and " " before the others. A hunk ends where more than
    2 * context lines of a lie between two runs: found as a run of zero bytes
    by a regex, with no Python step per line or per run."""
    first = inserted.find(1)
    if first < 0:
        return
    yield f"--- {fromfile}\n+++ {tofile}\n"
    bounds = [first]  # the first inserted line of each hunk, and the end of its last run
    for gap in re.compile(b"\x00{%d,}" % (2 * context + 1)).finditer(inserted, first):
        if gap.end() < len(inserted):  # not after the last run
            bounds += gap.span()
    bounds.append(inserted.rfind(1) + 1)
    counted = earlier = 0  # inserted lines before b's line `counted`
    for j1, j2 in zip(bounds[0::2], bounds[1::2]):
        i1 = j1 - (earlier := earlier + inserted.count(1, counted, j1))  # where the hunk's first run goes in a
        i2 = j2 - (earlier := earlier + inserted.count(1, j1, j2))
        counted = j2
        lead, trail = min(context, i1), min(context, len(a) - i2)
        j, end_j = j1 - lead, j2 + trail
        yield f"@@ -{_span(i1 - lead, i2 + trail)} +{_span(j, end_j)} @@\n"
        # Marks and lines interleaved by slice assignment: no string made per line before the join.
        pieces = [""] * (2 * (end_j - j))
        pieces[0::2] = map([" ", "+"].__getitem__, inserted[j:end_j])
        pieces[1::2] = b[j:end_j]
        yield "".join(pieces)


def _span(start: int, stop: int) -> str:
    """A hunk header's range: first line (1-based) and count; an empty range names the line before."""
    count = stop - start
    return f"{start + 1}" if count == 1 else f"{start + (count > 0)},{count}"


def main(argv: Sequence[str] | None = None) -> int:
    prog = "insert_proton_records"
    args = build_parser().parse_args(argv)
    if len(args.name) > len(args.wrap_op):
        print(f"{prog}: more --name than --wrap-op", file=sys.stderr)
        return 2
    try:  # options that are wrong for every file: refused before any is read
        for spec in args.scope:
            parse_scope_spec(spec)
        for prefix in args.name:
            check_name(prefix, f"--name {prefix!r}")
        if args.for_body is not None:
            check_name(args.for_body, f"--for-body {args.for_body!r}")
    except RewriteError as e:
        print(f"{prog}: error: {e}; nothing written", file=sys.stderr)
        return 2
    results = []
    skipped = []  # (file, reason): one kernel that cannot be instrumented does not stop the others
    try:
        files = find_inputs(args.inputs)
        if not files:
            print(f"{prog}: no .ttgir files in {', '.join(args.inputs) or DEFAULT_DUMP_DIR}", file=sys.stderr)
            return 2
        for f in files:
            try:
                text, base, name, bak_text, stripped = _plan(f, args.force)
                res = rewrite_text(
                    base,
                    path=name,
                    wrap_ops=args.wrap_op,
                    names=args.name,
                    scopes=args.scope,
                    for_body=args.for_body,
                    force=args.force,
                )
            except RewriteError as e:
                skipped.append((f, str(e)))
                continue
            results.append((f, text, base, bak_text, stripped, res))
    except InputError as e:
        print(f"{prog}: error: {e}; nothing written", file=sys.stderr)
        return 2
    for f, reason in skipped:
        print(f"{prog}: skipped {f}: {reason}", file=sys.stderr)
    if skipped and not results:
        print(f"{prog}: nothing written", file=sys.stderr)
        return 2
    written = 0
    for f, text, base, bak_text, stripped, res in results:
        # base differs from text only with --force, where _plan stripped text.
        replaced = len(text.splitlines()) - len(stripped.splitlines()) if base != text else 0
        if args.dry_run:
            sys.stdout.writelines(
                unified_diff(
                    text.splitlines(keepends=True), res.text.splitlines(keepends=True), str(f), f"{f} (rewritten)"
                )
            )
        elif res.scopes:
            bak = backup_path(f)
            try:
                if bak_text is None:
                    with open(bak, "xb") as out:  # the first backup; never replaced
                        out.write(text.encode("utf-8"))
                with output(str(f)) as target:  # the original stays whole until then (a link: its target)
                    Path(target).write_bytes(res.text.encode("utf-8"))
            except OSError as e:
                done = f" ({written} file(s) before it were rewritten; their originals are in *.bak)" if written else ""
                print(f"{prog}: error: cannot write {e.filename or f}: {e.strerror or e}{done}", file=sys.stderr)
                return 2
            written += 1
        verb = "would insert" if args.dry_run else "inserted"
        notes = []
        if replaced:
            notes.append(f"replacing {replaced} earlier record line(s)")
        if not args.dry_run and res.scopes:
            notes.append(f"backup {f.name}.bak")
        print(f"{f}: {verb} {len(res.scopes)} scope(s)" + (f" ({'; '.join(notes)})" if notes else ""))
        # One write for all the scopes of a file, in the order of their start lines: a large file has a million.
        sys.stdout.write("".join(map(SCOPE_LINE.format, *res.scopes.columns())))
    if skipped:
        print(
            f"{prog}: {len(results)} file(s) instrumented, {len(skipped)} skipped (listed above; they run "
            "without records)",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
