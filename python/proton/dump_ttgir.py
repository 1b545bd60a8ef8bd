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

from .hook import DUMP_ENV

DEFAULT_OUT = "./ttgir_dump"


def dump(command: Sequence[str], out: str | os.PathLike = DEFAULT_OUT) -> tuple[int, list[Path]]:
    """Runs `command`; returns its exit status and the .ttgir files kept
    (paths under `out`)."""
    out = Path(out)
    tmp = Path(tempfile.mkdtemp(prefix="proton-ttgir-dump-"))
    try:
        env = dict(os.environ)
        # DUMP_ENV: a program that imports proton keys its dump as the
        # profiled rerun will look it up (hook.install_dump_keying_hook).
        env.update({"TRITON_KERNEL_DUMP": "1", "TRITON_DUMP_DIR": str(tmp), "TRITON_ALWAYS_COMPILE": "1",
                    DUMP_ENV: "1"})
        try:
            rc = subprocess.call(list(command), env=env)
        except OSError as e:
            print(f"proton-dump-ttgir: cannot run {command[0]!r}: {e}", file=sys.stderr)
            return 127, []
        kept = []
        for src in sorted(tmp.rglob("*.ttgir")):
            dst = out / src.relative_to(tmp)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            kept.append(dst)
        return rc, kept
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="proton-dump-ttgir",
        description="Run COMMAND with TRITON_KERNEL_DUMP=1, TRITON_ALWAYS_COMPILE=1 and a temporary "
        "TRITON_DUMP_DIR, then copy only the .ttgir files into DIR as <source hash>/<kernel>.ttgir, "
        "the layout TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=DIR expects.",
        epilog="example:\n  proton-dump-ttgir --out ttgir_dump python app.py\n"
        "  insert_proton_records ttgir_dump\n"
        "  TRITON_ALWAYS_COMPILE=1 TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=ttgir_dump python app.py",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"where to keep the TTGIR (default {DEFAULT_OUT})")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command to run (after an optional --)")
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("no command given")
    rc, kept = dump(command, args.out)
    if kept:
        print(f"proton-dump-ttgir: kept {len(kept)} .ttgir file(s) in {args.out}:")
        for f in kept:
            print(f"  {f}")
    else:
        print(f"proton-dump-ttgir: the command compiled no Triton kernel; nothing kept in {args.out}")
    if rc != 0:
        print(f"proton-dump-ttgir: the command exited with status {rc}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
