"""`proton.record` lines in `TRITON_KERNEL_OVERRIDE` files, with stock Triton.

Triton parses an override TTGIR file with its own MLIR context, which has no
`proton` dialect of ours (ours lives in a separate MLIR copy that only sees
LLVM IR text: the README's architecture section), and it could not translate
the op to LLVM IR anyway. So while an instrumentation hook is installed and overriding is
on, the override directory is mirrored into a temporary directory in which
every

    proton.record start "name"

line is rewritten, on the same line, into the same two ops the
`proton.language` markers produce:

    %proton_c12 = arith.constant 0 : i32 loc(...) %proton_m12 = tt.elementwise_inline_asm
        "// @proton start name ;loc=<file>:12:5" {...} %proton_c12 : i32 -> i32 loc(...)

(one line in the file, so that line numbers are kept)

and Triton's `knobs.cache.override_dir` points at the mirror until the hook
is uninstalled. The markers reach the LLVM IR like the DSL's and are lifted
into records there; their locations name the user's file and line. Only
Triton's documented knobs (`knobs.compilation.override`,
`knobs.cache.override_dir`) and the printed form of
`tt.elementwise_inline_asm` are relied on; a Triton without those knobs gets
a clear error.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import triton

from ..errors import ProfilerError
from ..language import _scope_name
from .ttgir_text import record_line

OVERRIDE_SUFFIXES = (".ttgir", ".ttir")


class OverrideError(ProfilerError):
    """A `proton.record` line that cannot be compiled; names the file and line."""


def translate(text: str, path: str) -> tuple[str, int]:
    """`text` with every `proton.record` line replaced by marker ops; the
    number of records. Line numbers are kept."""
    from ..compiler_exports import RECORD_OP, marker_text

    lines = text.split("\n")
    count = 0
    for number, line in enumerate(lines, start=1):
        if RECORD_OP not in line:
            continue
        match = record_line().match(line)
        if not match:
            raise OverrideError(
                f"{path}:{number}: malformed record (expected `proton.record start|end \"name\"`): {line.strip()}"
            )
        try:
            name = _scope_name(match["name"])
        except (TypeError, ValueError) as e:
            raise OverrideError(f"{path}:{number}: {e}") from None
        column = len(match["indent"]) + 1
        loc = match["loc"] or f'loc("{path}":{number}:{column})'
        # Triton's debug info keeps only the kernel's own file name, so the
        # marker names its source itself (LiftMarkers reads ';loc=').
        asm = marker_text(match["kind"], name, f"{path}:{number}:{column}")
        carrier, marker = f"%proton_c{number}", f"%proton_m{number}"
        lines[number - 1] = (
            f'{match["indent"]}{carrier} = arith.constant 0 : i32 {loc} '
            f'{marker} = tt.elementwise_inline_asm "{asm}" '
            f'{{constraints = "=r,r", packed_element = 1 : i32, pure = false}} {carrier} : i32 -> i32 {loc}'
        )
        count += 1
    return "\n".join(lines), count


def _knobs():
    knobs = getattr(triton, "knobs", None)
    compilation, cache = getattr(knobs, "compilation", None), getattr(knobs, "cache", None)
    if not (hasattr(compilation, "override") and hasattr(cache, "override_dir")):
        raise OverrideError(
            f"Triton {triton.__version__} has no knobs.compilation.override / "
            "knobs.cache.override_dir: proton.record in TRITON_KERNEL_OVERRIDE files needs them "
            "(Triton 3.4 or newer)"
        )
    return compilation, cache


def _read(path: Path) -> str:
    """An override file's text; a clear error for one that cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise OverrideError(f"{path}: cannot read: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise OverrideError(
            f"{path}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})"
        ) from None


class OverrideTranslation:
    """Points Triton's override directory at a translated mirror while
    installed (only when overriding is on and some file holds records)."""

    def __init__(self):
        self.mirror: Path | None = None
        self.records = 0
        self._original: str | None = None

    def install(self) -> None:
        compilation, cache = _knobs()
        if not compilation.override or self.mirror is not None:
            return
        source = Path(cache.override_dir)
        if not source.is_dir():
            raise OverrideError(f"TRITON_KERNEL_OVERRIDE is on but the override directory {source} does not exist")
        files = [p for p in sorted(source.rglob("*")) if p.suffix in OVERRIDE_SUFFIXES and p.is_file()]
        texts = {p: _read(p) for p in files}
        if not any("proton.record" in t for t in texts.values()):
            return
        mirror = Path(tempfile.mkdtemp(prefix="proton-override-"))
        try:
            shutil.copytree(source, mirror, dirs_exist_ok=True)
            for path, text in texts.items():
                if "proton.record" in text:
                    translated, count = translate(text, str(path))
                    (mirror / path.relative_to(source)).write_text(translated)
                    self.records += count
        except BaseException:
            shutil.rmtree(mirror, ignore_errors=True)
            raise
        self._original = str(source)
        cache.override_dir = str(mirror)
        self.mirror = mirror

    def uninstall(self) -> None:
        if self.mirror is None:
            return
        _, cache = _knobs()
        cache.override_dir = self._original
        shutil.rmtree(self.mirror, ignore_errors=True)
        self.mirror = None
        self.records = 0
