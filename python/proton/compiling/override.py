"""`proton.record` lines in `TRITON_KERNEL_OVERRIDE` files, with stock Triton.

Triton parses an override TTGIR file with its own MLIR context, which has no
`proton` dialect of ours (ours lives in a separate MLIR copy that only sees
LLVM IR text: docs/architecture.md), and it could not translate
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

import hashlib
import shutil
import tempfile
from pathlib import Path

import triton

from ..contract.errors import ProfilerError
from ..contract.scope_names import check_scope_name
from .ttgir_text import record_line

OVERRIDE_SUFFIXES = (".ttgir", ".ttir")

#: proton-dump-ttgir's run keeps, beside Triton's own <hash>/<name>.ttgir,
#: one file per compiled variant of the kernel: <hash>/<name>.variant-<options
#: digest>.ttgir. Triton keys its dump and override files by the kernel's
#: source only, so the variants of one kernel (an autotuner's configs: other
#: num_warps, num_stages, ...) share <name>.ttgir, the last one compiled,
#: which Triton's override would compile for every variant: another variant's
#: layouts, other results.
VARIANT_MARK = ".variant-"

#: Options that do not change the code a kernel compiles to.
_NOT_CODEGEN = frozenset({"instrumentation_mode"})


def variant_file_name(file_name: str, options) -> str:
    """The file of the variant of kernel `file_name` (Triton's name, at most
    150 characters) compiled with `options`."""
    digest = hashlib.sha256(file_name.encode())
    for name, value in sorted(vars(options).items()):
        if name not in _NOT_CODEGEN:
            digest.update(f"\0{name}={value!r}".encode())
    return f"{file_name}{VARIANT_MARK}{digest.hexdigest()[:16]}.ttgir"


def is_variant_file(path: Path) -> bool:
    return path.suffix == ".ttgir" and VARIANT_MARK in path.name


def compiling_kernel() -> tuple[str | None, object, object]:
    """(file name, override manager, dump manager) of the kernel that
    triton.compile is compiling, read from its frame a few calls up (a
    stage's caller; Triton 3.6-3.9 name these locals alike); Nones where
    it is not found."""
    import sys

    frame = sys._getframe(1)
    for _ in range(6):
        if frame is None:
            break
        found = frame.f_locals
        if "fn_override_manager" in found and "file_name" in found:
            name = found["file_name"]
            return (name if isinstance(name, str) else None), found["fn_override_manager"], found.get("fn_dump_manager")
        frame = frame.f_back
    return None, None, None


class OverrideError(ProfilerError):
    """A `proton.record` line that cannot be compiled; names the file and line."""


def translate(text: str, path: str) -> tuple[str, int]:
    """`text` with every `proton.record` line replaced by marker ops; the
    number of records. Line numbers are kept."""
    from ..contract.compiler_exports import RECORD_OP, marker_text

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
            name = check_scope_name(match["name"])
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
        #: Whether the override files hold files of compiled variants
        #: (VARIANT_MARK): each compile then takes its own (variant_file).
        self.has_variants = False
        #: While overriding is on: a digest of the override files, part of
        #: the builds' cache key, so that a kernel built from them never
        #: comes back from Triton's cache to a session that does not use
        #: them (nor to one whose files were edited since).
        self.digest: str | None = None

    def install(self) -> None:
        compilation, cache = _knobs()
        if not compilation.override or self.mirror is not None:
            return
        source = Path(cache.override_dir)
        if not source.is_dir():
            raise OverrideError(f"TRITON_KERNEL_OVERRIDE is on but the override directory {source} does not exist")
        files = [p for p in sorted(source.rglob("*")) if p.suffix in OVERRIDE_SUFFIXES and p.is_file()]
        texts = {p: _read(p) for p in files}
        digest = hashlib.sha256()
        for path, text in texts.items():
            digest.update(f"{path.relative_to(source)}\0{text}\0".encode())
        self.digest = digest.hexdigest()[:16]
        variants = [p for p in files if is_variant_file(p)]
        if not variants and not any("proton.record" in t for t in texts.values()):
            return
        mirror = Path(tempfile.mkdtemp(prefix="proton-override-"))
        try:
            shutil.copytree(source, mirror, dirs_exist_ok=True)
            for path, text in texts.items():
                if "proton.record" in text:
                    translated, count = translate(text, str(path))
                    (mirror / path.relative_to(source)).write_text(translated)
                    self.records += count
            # Triton's own file of a kernel with variant files is one of them: the stage hook picks
            # each compile's own (variant_file), so Triton must not put that one over every variant.
            for variant in variants:
                own = mirror / variant.relative_to(source).parent / (variant.name.split(VARIANT_MARK)[0] + ".ttgir")
                own.unlink(missing_ok=True)
            self.has_variants = bool(variants)
        except BaseException:
            shutil.rmtree(mirror, ignore_errors=True)
            raise
        self._original = str(source)
        cache.override_dir = str(mirror)
        self.mirror = mirror

    def variant_file(self, options) -> tuple[str | None, Path | None | bool]:
        """For the kernel being compiled (a stage's caller is triton.compile):
        its name and the override file of its variant compiled with
        `options`; None when the override directory has no variant files of
        it (Triton's own override applies); False when it has some, but not
        this variant's (it then compiles as it is, without records)."""
        file_name, manager, _dump = compiling_kernel()
        if file_name is None or manager is None:
            return file_name, None
        folder = Path(manager.cache_dir)
        own = folder / variant_file_name(file_name, options)
        if own.is_file():
            return file_name, own
        others = any(is_variant_file(p) and p.name.startswith(file_name + VARIANT_MARK) for p in folder.glob("*"))
        return file_name, (False if others else None)

    def uninstall(self) -> None:
        self.digest = None
        self.has_variants = False
        if self.mirror is None:
            return
        _, cache = _knobs()
        cache.override_dir = self._original
        shutil.rmtree(self.mirror, ignore_errors=True)
        self.mirror = None
        self.records = 0
