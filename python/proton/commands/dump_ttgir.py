"""`proton-dump-ttgir [--out DIR] command...`: run a command with Triton's IR
dump on and keep only the TTGIR files, laid out as `TRITON_KERNEL_OVERRIDE`
reads them.

Triton 3.6 (`triton/compiler/compiler.py`, `triton/runtime/cache.py`) dumps
every stage of a compiled kernel to
`$TRITON_DUMP_DIR/<base32 of the source hash>/<kernel name[:150]>.<stage>`
and, with `TRITON_KERNEL_OVERRIDE=1`, looks each stage up at the same
relative path under `$TRITON_OVERRIDE_DIR`. Both directories are keyed by the
hash of the kernel source only (not of options or Triton's version), so the
copied `<hash>/<name>.ttgir` files are found again when the same kernel is
compiled with `TRITON_OVERRIDE_DIR=DIR`; stages with no file there (ttir,
llir, ptx, ...) are compiled normally.

Because Triton's files are keyed by the source only, the compiled variants of
one kernel (an autotuner's configs: other num_warps or num_stages) share one
`<hash>/<name>.ttgir`, the last one compiled. So the command's processes also
keep one file per variant beside it, `<hash>/<name>.variant-<options>.ttgir`
(stage_hook.install_dump_hook, loaded through dump_startup/), and a profiled
rerun compiles each variant from its own file (override.OverrideTranslation).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from ..compiling.override import VARIANT_MARK, is_variant_file
from ..compiling.stage_hook import DUMP_ENV

DEFAULT_OUT = "./ttgir_dump"
_KEPT_SUFFIXES = (".ttgir", ".ttgir.bak")  # what a run could overwrite, and insert_proton_records' backups


class DumpError(Exception):
    """An output directory that cannot be used, or files it holds that a run
    could overwrite; the message names the path. Exit status 2."""


def existing_files(out: Path) -> list[Path]:
    """The TTGIR files (and their .bak backups) already under `out`."""
    return sorted(p for p in out.rglob("*") if p.name.endswith(_KEPT_SUFFIXES) and (p.is_file() or p.is_symlink()))


def _backup_dir(out: Path) -> Path:
    """A new, empty directory beside `out`: <out>.bak, else <out>.bak.1, .2, ..."""
    resolved = out.resolve()
    if not resolved.name:
        raise DumpError(f"--out {out}: cannot make a backup directory beside it")
    for n in range(10000):
        candidate = resolved.with_name(f"{resolved.name}.bak" + (f".{n}" if n else ""))
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        except OSError as e:
            raise DumpError(f"cannot create the backup directory {candidate}: {e.strerror or e}") from None
        return candidate
    raise DumpError(f"--out {out}: too many backup directories beside it")


def prepare_out(out: str | os.PathLike, force: bool = False) -> Path | None:
    """Checks `out` before the command runs and creates it if missing (its
    parent must exist). Existing TTGIR files in it are refused unless
    `force`, which first moves them (and their .bak files) into a new
    <out>.bak[.N] directory, never overwritten; returns that directory."""
    out = Path(out)
    if out.is_symlink() and not out.exists():
        raise DumpError(f"--out {out}: broken symbolic link (its target {os.readlink(out)} does not exist)")
    if out.exists() and not out.is_dir():
        raise DumpError(f"--out {out}: is a file, not a directory; choose another --out")
    if not out.exists():
        parent = out.absolute().parent
        if not parent.is_dir():
            raise DumpError(f"--out {out}: the directory {parent} does not exist; create it or choose another --out")
        try:
            out.mkdir()
        except OSError as e:
            raise DumpError(f"--out {out}: cannot create the directory: {e.strerror or e}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise DumpError(f"--out {out}: the directory is not writable")
    existing = existing_files(out)
    if not existing:
        return None
    if not force:
        shown = ", ".join(str(p.relative_to(out)) for p in existing[:3]) + (", ..." if len(existing) > 3 else "")
        raise DumpError(
            f"--out {out} already holds {len(existing)} TTGIR file(s) ({shown}), maybe edited or "
            "instrumented, that this run could overwrite; nothing was run. Choose another --out, or "
            f"pass --force to move them first into a new {out}.bak directory (never overwritten)"
        )
    backup = _backup_dir(out)
    moved = 0
    try:
        for src in existing:
            dst = backup / src.relative_to(out)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(src), str(dst))
            moved += 1
    except OSError as e:
        raise DumpError(
            f"cannot move {src} to {backup}: {e.strerror or e} ({moved} file(s) moved there; nothing was run)"
        ) from None
    return backup


def dump(command: Sequence[str], out: str | os.PathLike = DEFAULT_OUT, force: bool = False) -> tuple[int, list[Path]]:
    """Runs `command`; returns its exit status and the .ttgir files kept
    (paths under `out`). DumpError, before the command runs, when `out`
    cannot be used or holds TTGIR files (unless `force`: prepare_out);
    files are never overwritten."""
    out = Path(out)
    backup = prepare_out(out, force)
    if backup is not None:
        print(f"proton-dump-ttgir: moved the TTGIR files that were in {out} to {backup}", file=sys.stderr)
    tmp = Path(tempfile.mkdtemp(prefix="proton-ttgir-dump-"))
    keep_tmp = False
    try:
        env = dict(os.environ)
        # DUMP_ENV and dump_startup/: every Python process of the command
        # installs Proton's dump hook once it imports Triton (a TTGIR file per
        # compiled variant, and from Triton 3.7 the dump keyed as the
        # profiled rerun looks it up: stage_hook.install_dump_hook).
        startup = str(Path(__file__).resolve().parent / "dump_startup")
        env.update(
            {
                "TRITON_KERNEL_DUMP": "1",
                "TRITON_DUMP_DIR": str(tmp),
                "TRITON_ALWAYS_COMPILE": "1",
                DUMP_ENV: "1",
                "PYTHONPATH": os.pathsep.join(filter(None, [startup, env.get("PYTHONPATH")])),
            }
        )
        try:
            rc = subprocess.call(list(command), env=env)
        except OSError as e:
            print(f"proton-dump-ttgir: cannot run {command[0]!r}: {e}", file=sys.stderr)
            return 127, []
        kept, clashes = [], []
        for src in sorted(tmp.rglob("*.ttgir")):
            dst = out / src.relative_to(tmp)
            try:
                dst.parent.mkdir(parents=True, exist_ok=True)
                with open(dst, "xb") as f:  # a file that appeared meanwhile is left alone
                    f.write(src.read_bytes())
            except FileExistsError:
                clashes.append(dst)
                continue
            except OSError as e:
                keep_tmp = True
                raise DumpError(
                    f"cannot write {e.filename or dst}: {e.strerror or e}; the whole dump is kept in {tmp}"
                ) from None
            kept.append(dst)
        if clashes:
            keep_tmp = True
            raise DumpError(
                f"{len(clashes)} file(s) appeared in {out} while the command ran and were left as they "
                f"are ({', '.join(map(str, clashes[:3]))}); the whole dump is kept in {tmp}"
            )
        return rc, kept
    finally:
        if not keep_tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="proton-dump-ttgir",
        description="Run COMMAND with TRITON_KERNEL_DUMP=1, TRITON_ALWAYS_COMPILE=1 and a temporary "
        "TRITON_DUMP_DIR, then copy only the .ttgir files into DIR as <source hash>/<kernel>.ttgir, "
        "the layout TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=DIR expects.",
        epilog="example:\n  proton-dump-ttgir --out ttgir_dump python app.py\n"
        "  insert_proton_records ttgir_dump\n"
        "  TRITON_ALWAYS_COMPILE=1 TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=ttgir_dump python app.py\n\n"
        "safety: DIR is checked before COMMAND runs. If it already holds .ttgir files (perhaps edited or\n"
        "instrumented) nothing is run and the exit status is 2: choose another --out, or pass --force to\n"
        "first move them (with their .bak files) into a new DIR.bak, DIR.bak.1, ... directory that is\n"
        "never overwritten. A missing DIR is created (its parent must exist).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"where to keep the TTGIR (default {DEFAULT_OUT})")
    p.add_argument(
        "--force",
        action="store_true",
        help="move .ttgir files already in DIR into a new DIR.bak[.N] directory instead of refusing",
    )
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command to run (after an optional --)")
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("no command given")
    try:
        rc, kept = dump(command, args.out, force=args.force)
    except DumpError as e:
        print(f"proton-dump-ttgir: error: {e}", file=sys.stderr)
        return 2
    if kept:
        variants = [f for f in kept if is_variant_file(f)]
        print(
            f"proton-dump-ttgir: kept {len(kept) - len(variants)} .ttgir file(s) in {args.out}"
            + (f" (and {len(variants)} of their compiled variants, <kernel>{VARIANT_MARK}*.ttgir)" if variants else "")
            + ":"
        )
        for f in kept:
            if f not in variants:
                print(f"  {f}")
    else:
        print(f"proton-dump-ttgir: the command compiled no Triton kernel; nothing kept in {args.out}")
    if rc != 0:
        print(f"proton-dump-ttgir: the command exited with status {rc}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
