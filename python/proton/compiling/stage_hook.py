"""The Triton stage hook: wraps the `llir` stage so that Triton's LLVM IR goes
through Proton's pipeline before Triton's own ptx/cubin (or amdgcn/hsaco)
stages, and records in the kernel's metadata what the launcher and the decoder
need (profile_scratch size and alignment, shared memory, the scope table)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import re
import tempfile
import warnings

import triton
import triton.knobs

from . import instrumentation_state
from ..contract.errors import PipeliningWarning, ProfilerError
from ..contract.kernel_metadata import KernelMetadata, kernel_id_of, register, register_loaded
from .override import OverrideTranslation, compiling_kernel, variant_file_name
from .compiler import InstrumentationError, PipelineOptions, instrument_llvm_ir, triton_arch, triton_version
from .plain_arithmetic import (
    has_llvm_markers,
    has_value_markers,
    place_in_plain_build,
    same_without_markers,
    without_markers,
)
from .pipelining import markers_in_loops, pipelining_moved_markers, pipelining_warnings, unpipeline_marker_loops
from .warp_specialize import partition_layout

#: Prefix of this hook's cache key. Triton 3.6 does not ask the hook for a
#: key, so there the key goes into the instrumentation_mode compile option,
#: which Triton hashes into both of its caches (3.6 reacts only to the exact
#: mode "consan"). From 3.7 on Triton asks the hook for `(key, hash)` and
#: puts them into both caches itself; the mode knob stays untouched there,
#: because 3.9 reads it as a set of sanitizer modes and drops `maxnreg` for
#: any non-empty one.
MODE_PREFIX = "proton-ext:"

#: The Triton releases this plugin supports: the stage inspection hook
#: appeared in 3.6; each release's hook contract and LLVM are tested.
SUPPORTED_TRITON = ((3, 6), (3, 9))


def check_triton_version() -> None:
    """Intra-kernel instrumentation needs the stage inspection hook (3.6+)."""
    low, high = SUPPORTED_TRITON
    version = triton_version()
    if version < low:
        raise ProfilerError(
            f"intra-kernel profiling needs Triton {low[0]}.{low[1]} to {high[0]}.{high[1]}; the "
            f"installed Triton {triton.__version__} has no stage inspection hook "
            f"(host profiling, backend=\"cupti\" or \"roctracer\", works with it)"
        )
    if version > high:
        warnings.warn(
            f"Proton is tested with Triton {low[0]}.{low[1]} to {high[0]}.{high[1]}, not "
            f"{triton.__version__}; instrumented builds are checked, and refused if the LLVM IR bridge "
            "would change them",
            stacklevel=3,
        )


#: Whether Triton asks the hook for its cache key (3.7+) rather than keying
#: instrumented builds by the instrumentation_mode option (3.6).
HOOK_GIVES_CACHE_KEY = triton_version() >= (3, 7)

#: Key under which the kernel's Proton metadata travels in Triton's metadata.
METADATA_KEY = "proton"

DUMP_ENV = instrumentation_state.DUMP_ENV


def _dump_hook(backend=None, stages=None, options=None, language=None, capability=None):
    """proton-dump-ttgir's stage hook: keeps every compiled variant's TTGIR
    (override.VARIANT_MARK) beside Triton's own dump, and changes nothing."""
    if stages is None:
        return ("", "")  # Triton 3.7+ asks for a cache key: none
    if "ttgir" in stages:
        stages["ttgir"] = _keeping_variants(stages["ttgir"], options)
    return None


def _keeping_variants(make_ttgir, options):
    def ttgir(src, metadata):
        file_name, _override, dump = compiling_kernel()
        result = make_ttgir(src, metadata)
        if file_name and dump is not None and not instrumentation_state.running_own_kernels():
            with open(os.path.join(dump.cache_dir, variant_file_name(file_name, options)), "w") as f:
                f.write(str(result))
        return result

    return ttgir


def install_dump_hook() -> bool:
    """For proton-dump-ttgir's run of the user's program (its processes load
    it at start: commands/dump_startup). It keeps a TTGIR file per compiled
    variant of each kernel, so that the profiled rerun compiles each variant
    from its own file. From Triton 3.7 on it also keys the dump as the rerun
    looks it up: Triton keys TRITON_KERNEL_OVERRIDE files by the kernel's
    specialization, and a launch made while any stage inspection hook is
    installed is specialized with one more entry; the rerun has Proton's
    hook, so the dump run needs a hook too, or the rerun looks for the
    files under another hash and silently compiles the kernel without them."""
    if triton.knobs.runtime.add_stages_inspection_hook is not None:
        return False
    triton.knobs.runtime.add_stages_inspection_hook = _dump_hook
    return True


def _key_direct_compiles(on: bool) -> None:
    """Triton 3.6: JITFunction.run passes the instrumentation_mode knob to
    triton.compile, but callers of triton.compile with their own options
    (Inductor, for torch.compile) do not, so their builds would share cache
    entries with plain builds: a plain build would come back from the cache
    uninstrumented while a session is active, and an instrumented one after
    it. While on, each backend's parse_options fills in the knob where the
    options leave the mode out."""
    import triton.backends

    for backend in triton.backends.backends.values():
        compiler = backend.compiler
        current = compiler.__dict__.get("parse_options")
        original = getattr(current, "__wrapped__", None)
        if on and current is not None and original is None:

            def parse_options(self, opts, _original=current):
                if not opts.get("instrumentation_mode"):
                    opts = {**opts, "instrumentation_mode": triton.knobs.compilation.instrumentation_mode}
                return _original(self, opts)

            parse_options.__wrapped__ = current
            compiler.parse_options = parse_options
        elif not on and original is not None:
            compiler.parse_options = original


#: Names of kernels loaded from Triton's cache that a session's hook compiled
#: with nothing to record (Triton 3.6 keeps the hook's key in the kernel's
#: instrumentation_mode): the report's reason for their launches.
LOADED_WITHOUT_RECORDS: set[str] = set()


def register_loaded_kernel(module, function, name, metadata_group, hash) -> None:
    """Triton's kernel_load_end_hook, installed with the first session and
    kept (kernels compiled in a session may be loaded and launched after
    it): registers the kernel's metadata (kernels from the disk cache, which
    did not pass through the stage hook) and its launch handle."""
    path = (metadata_group or {}).get(f"{name}.json")
    if not path:
        return
    try:
        with open(path) as f:
            metadata = json.load(f)
    except (OSError, ValueError):
        return
    text = metadata.get(METADATA_KEY)
    if text:
        try:
            meta = KernelMetadata.from_dict(json.loads(text))
        except (ValueError, KeyError, TypeError) as error:  # a damaged cache entry must not fail the launch
            warnings.warn(
                f"proton: kernel {name} from Triton's cache ({path}) has Proton metadata that cannot be "
                f"read ({type(error).__name__}: {error}); its launches record nothing Proton can decode",
                stacklevel=2,
            )
            return
        register(meta)
        register_loaded(function, meta.kernel_id)
    elif str(metadata.get("instrumentation_mode", "")).startswith(MODE_PREFIX):
        LOADED_WITHOUT_RECORDS.add(name)


class StageHook:
    """The compile-time hook: installs itself as
    triton.knobs.runtime.add_stages_inspection_hook (chained with any hook
    already there) and wraps Triton's `llir` stage with Proton's pipeline;
    restores the previous hook on uninstall. proton.hooks.InstrumentationHook
    (upstream's name, for HookManager) activates one of these."""

    def __init__(self, options: PipelineOptions, label: str = "default"):
        self.options = options
        # Every option that changes the code is in the key, so that builds of
        # different modes never share a cache entry.
        self.mode_key = f"{label}:{options.to_pass_options()}"
        self._previous_hook = None
        self._previous_mode = None
        self._installed = False
        self.overrides = OverrideTranslation()
        #: Kernels this hook compiled that have nothing to record (no
        #: markers, nothing the mode instruments): the session report's reason.
        self.compiled_without_records: set[str] = set()
        #: Kernels whose override files are for other compiled variants only.
        self.override_variant_missing: set[str] = set()

    def install(self) -> None:
        if self._installed:
            return
        # First, so that a malformed override file fails before anything changes.
        self.overrides.install()
        check_triton_version()
        self._previous_hook = triton.knobs.runtime.add_stages_inspection_hook
        self._previous_mode = triton.knobs.compilation.instrumentation_mode
        triton.knobs.runtime.add_stages_inspection_hook = self
        if not HOOK_GIVES_CACHE_KEY:
            triton.knobs.compilation.instrumentation_mode = self.cache_key()
            _key_direct_compiles(True)
        triton.knobs.runtime.kernel_load_end_hook.add(register_loaded_kernel)  # kept: see its docstring
        instrumentation_state._enter()
        self._installed = True

    def uninstall(self) -> None:
        if not self._installed:
            return
        triton.knobs.runtime.add_stages_inspection_hook = self._previous_hook
        if not HOOK_GIVES_CACHE_KEY:
            triton.knobs.compilation.instrumentation_mode = self._previous_mode
            _key_direct_compiles(False)
        self.overrides.uninstall()
        instrumentation_state._exit()
        self._installed = False

    def __enter__(self):
        self.install()
        return self

    def __exit__(self, *exc):
        self.uninstall()
        return False

    def _overriding_variants(self, make_ttgir, options):
        """The ttgir stage, giving each compiled variant of a kernel the
        override file dumped for that variant (override.VARIANT_MARK) in
        place of Triton's one file per kernel."""

        def ttgir(src, metadata):
            kernel, path = self.overrides.variant_file(options)
            result = make_ttgir(src, metadata)
            if path is False:
                self.override_variant_missing.add(kernel)
                warnings.warn(
                    f"kernel {kernel}: the override directory has TTGIR files for other compiled variants of it "
                    f"only (not num_warps={getattr(options, 'num_warps', '?')}, num_stages="
                    f"{getattr(options, 'num_stages', '?')}); this variant compiles as it is, without the "
                    "override's records. Dump again with proton-dump-ttgir running the same program.",
                    stacklevel=2,
                )
            if not path:
                return result
            return _parse_ttir(path.read_text(), src.context)

        return ttgir

    def cache_key(self) -> str:
        """What keys this hook's builds in Triton's caches: the mode, and the
        override files' digest while TRITON_KERNEL_OVERRIDE is on."""
        key = MODE_PREFIX + self.mode_key
        return key if self.overrides.digest is None else f"{key}|override:{self.overrides.digest}"

    @staticmethod
    @functools.lru_cache(maxsize=64)
    def _key_hash(key: str) -> str:
        # Triton 3.7+ calls the hook on every launch: cache the digest.
        return hashlib.sha256(key.encode()).hexdigest()

    def __call__(self, backend=None, stages=None, options=None, language=None, capability=None):
        if stages is None:
            # Called with no arguments: the cache key of this hook's builds
            # (3.7+: a (key, hash) pair; a chained hook's key is part of it).
            key = self.cache_key()
            if not HOOK_GIVES_CACHE_KEY:
                return key
            if self._previous_hook is not None:
                key += "|" + self._previous_hook()[0]
            return key, self._key_hash(key)
        if self._previous_hook is not None:
            self._previous_hook(backend, stages, options, language, capability)
        make_llir = stages["llir"]
        target, arch = triton_arch(backend.target)
        num_warps = getattr(options, "num_warps", 0)
        num_stages = int(getattr(options, "num_stages", 1) or 1)
        # Gluon kernels are not software-pipelined: their errors stay as they are.
        gluon = getattr(language, "name", "") == "GLUON"
        pipeliner = None if gluon else _pipeliner_that_rejects_markers(backend.target)
        unpipelined = []  # the warning of a retry without pipelining the loops that hold scopes
        if pipeliner and "ttgir" in stages:
            holding = None if backend.target.backend == "hip" else _MMA_LOOP
            stages["ttgir"] = _pipeliner_check(stages["ttgir"], num_stages, pipeliner, holding, unpipelined)
        if self.overrides.has_variants and "ttgir" in stages:
            stages["ttgir"] = self._overriding_variants(stages["ttgir"], options)

        def instrumented_llir(src, metadata):
            ttgir = str(src)  # before make_llir lowers the module in place
            llvm_ir = make_llir(src, metadata)
            # make_llir sets the total of a warp-specialized kernel's
            # partitions; options.num_warps counts the default one only.
            warps = int(metadata.get("num_warps") or num_warps)
            pipeline = PipelineOptions(
                **{
                    **self.options.for_warps(warps).__dict__,
                    "target": target,
                    "arch": arch,
                    "num_warps": warps,
                    "shared_offset": int(metadata.get("shared", 0) or 0),
                }
            )
            pipeline = PipelineOptions(**{**pipeline.__dict__, "kernel_id": kernel_id_of(llvm_ir, self.mode_key)})
            try:
                kernel = instrument_llvm_ir(llvm_ir, pipeline)
            except InstrumentationError as error:
                scopes = markers_in_loops(ttgir) if pipeliner and num_stages > 1 else []
                if not scopes:
                    raise
                raise _pipelining_error(ttgir, scopes, num_stages, pipeliner) from error
            if not kernel.instrumented:
                defined = _KERNEL_DEFINITION.search(llvm_ir)
                if defined:
                    self.compiled_without_records.add(defined.group(1).strip('"'))
                return llvm_ir
            kernel, arithmetic = _with_plain_arithmetic(
                kernel, llvm_ir, ttgir, src.context, make_llir, metadata, pipeline
            )
            compiled = KernelMetadata.from_dict(kernel.metadata)
            meta = dataclasses.replace(
                compiled,
                kernel_id=pipeline.kernel_id,
                target=target,
                warnings=tuple(unpipelined + _warn_about_pipelining(ttgir, compiled.kernel) + arithmetic),
                # Which warps run which gl.warp_specialize partition: trace labels, tests.
                warp_specialize=partition_layout(ttgir, backend, options, warps, int(num_warps or warps)),
            )
            register(meta)
            metadata["profile_scratch_size"] = meta.profile_scratch_size
            metadata["profile_scratch_align"] = meta.profile_scratch_align
            metadata["shared"] = max(int(metadata.get("shared", 0) or 0), meta.shared_memory_total)
            metadata[METADATA_KEY] = json.dumps(meta.to_dict())
            return kernel.llvm_ir

        stages["llir"] = instrumented_llir


def _with_plain_arithmetic(kernel, llvm_ir, ttgir, context, make_llir, metadata, pipeline):
    """The instrumented kernel built from the markers put into the plain
    build's optimized IR (plain_arithmetic says why and how), and the
    warnings to keep; where that cannot be done, `kernel` as it is with a
    warning that its arithmetic may differ from an unprofiled build's.
    `kernel` was built from `llvm_ir` first, so that a wrong scope is
    reported at its own source line."""
    if not has_llvm_markers(llvm_ir):
        return kernel, []  # MMA mode: records added after -O3 already
    try:
        with _stderr_dropped_on_failure():  # a failure here is recovered from: it prints nothing
            plain_ir = make_llir(_parse_ttir(without_markers(ttgir), context), dict(metadata))
    except Exception:  # noqa: BLE001 - any failure of the plain build keeps the instrumented one, with the warning
        plain_ir = None
    if plain_ir is not None:
        try:
            placed = place_in_plain_build(llvm_ir, plain_ir)
            replanted = instrument_llvm_ir(placed, pipeline) if placed is not None else None
        except Exception:  # noqa: BLE001 - a placement the pipeline refuses keeps the instrumented build
            replanted = None
        if replanted is not None and replanted.instrumented:
            if _scope_rows(replanted.metadata) == _scope_rows(kernel.metadata):
                return replanted, []
        if same_without_markers(llvm_ir, plain_ir):
            return kernel, []  # e.g. value markers, which stay where they are: -O3 did the same with them
    name = KernelMetadata.from_dict(kernel.metadata).kernel
    if has_value_markers(llvm_ir):
        message = (
            f"kernel {name}: its recorded values are computed for the records and kept alive until they are "
            "written, so LLVM compiles the kernel differently while it is profiled, and its results may differ "
            "in the last bits from an unprofiled run's."
        )
    else:
        message = (
            f"kernel {name}: LLVM optimized this kernel differently with its Proton scopes than without them, "
            "and Proton could not put the scopes into the unprofiled build, so its results may differ in the "
            "last bits from an unprofiled run's; scopes around whole loops or functions avoid it."
        )
    warnings.warn(message, PipeliningWarning, stacklevel=3)
    return kernel, [message]


def _scope_rows(metadata: dict) -> list:
    return [tuple(scope.get(key) for key in ("id", "name", "parent", "kind")) for scope in metadata.get("scopes", [])]


#: The first function a module defines: Triton's kernel.
_KERNEL_DEFINITION = re.compile(r"^define\b[^@\n]*@(\"[^\"]+\"|[\w.$]+)\(", re.M)


def _warn_about_pipelining(ttgir: str, kernel: str) -> list[str]:
    """Warns (once per compile) about scopes that software pipelining changed;
    the messages also go to the kernel's metadata for the session report."""
    if "scf.for" not in ttgir:
        return []
    messages = [f"kernel {kernel}: {m}" for m in pipelining_warnings(ttgir)]
    for message in messages:
        warnings.warn(message, PipeliningWarning, stacklevel=3)
    return messages


#: On sm_100, the loops Triton's pipeliner cannot take with markers are
#: those whose dots become tcgen05 MMAs.
_MMA_LOOP = re.compile(r"= tt\.dot(?:_scaled)? ")


def _pipeliner_that_rejects_markers(target) -> str | None:
    """The name of the Triton software pipeliner that cannot keep a scope in a
    pipelined loop on this target, or None where scopes in loops compile
    (Hopper and older, consumer Blackwell). AMD's stream pipeliner fails to
    predicate a marker up to 3.8 and splits a scope across stages in 3.9;
    on datacenter Blackwell (sm_100/sm_103/sm_110, tcgen05 MMA) Triton
    3.6-3.8 fail the same way in the loop that holds the MMA, and 3.9 puts
    the scope's start and end in different stages."""
    if target.backend == "hip":
        return "AMD software pipeliner"
    if target.backend == "cuda" and isinstance(target.arch, int) and 100 <= target.arch < 120:
        return f"software pipeliner for sm_{target.arch} (tcgen05 MMA loops)"
    return None


def _pipelining_error(ttir: str, scopes: list[str], num_stages: int, pipeliner: str) -> InstrumentationError:
    """The error for the scopes in loops (`scopes`) that `pipeliner` cannot take."""
    return InstrumentationError(
        f"kernel {_kernel_name(ttir)}: Triton's {pipeliner} (num_stages={num_stages}) cannot "
        f"pipeline a loop that holds Proton scopes: {', '.join(scopes)}. While profiling, launch this "
        "kernel with num_stages=1, or move the scopes out of the loop."
    )


def _kernel_name(ttir: str) -> str:
    name = re.search(r"tt\.func (?:public )?@([\w$.]+)", ttir)
    return name.group(1) if name else "?"


def _pipeliner_check(make_ttgir, num_stages: int, pipeliner: str, holding, unpipelined: list):
    """Where `pipeliner` cannot take a loop that holds markers (the compile
    fails, or a scope's start and end end up in different stages),
    compiles again with `tt.num_stages = 1` on the loops that hold markers
    (and an op matching `holding`, if given) only: Triton's per-loop
    setting, as `tl.range(num_stages=1)` gives. The kernel's other loops
    stay pipelined, and a warning says which loops run unpipelined while
    profiled. A kernel the pipeliner takes as it is compiles unchanged; a
    failure that remains becomes an error that names the scopes."""

    def checked_ttgir(src, metadata):
        ttir = str(src)  # make_ttgir changes src in place
        scopes = markers_in_loops(ttir)
        if not scopes:  # nothing the pipeliner could trip on: Triton's own compile
            return make_ttgir(src, metadata)
        first_error = None
        try:
            with _stderr_dropped_on_failure():
                result = make_ttgir(src, metadata)
            if not pipelining_moved_markers(ttir, str(result)):
                return result
        except Exception as error:
            first_error = error
        rewritten, unpipelined_scopes = unpipeline_marker_loops(ttir, num_stages, holding)
        if not unpipelined_scopes:
            if first_error is None:
                return result  # markers moved outside any loop we could unpipeline: the llir stage judges them
            raise _pipelining_error(ttir, scopes, num_stages, pipeliner) from first_error
        try:
            result = make_ttgir(_parse_ttir(rewritten, src.context), metadata)
        except Exception as error:
            raise _pipelining_error(ttir, scopes, num_stages, pipeliner) from error
        message = (
            f"kernel {_kernel_name(ttir)}: Triton's {pipeliner} cannot pipeline a loop that holds Proton scopes "
            f"({', '.join(dict.fromkeys(scopes))}); while profiled, the loops holding them run without software "
            "pipelining (num_stages=1 for those loops only), so their timing is not the unprofiled kernel's. Move "
            "the scopes out of the loop to profile it pipelined."
        )
        warnings.warn(message, PipeliningWarning, stacklevel=2)
        unpipelined.append(message)
        return result

    return checked_ttgir


@contextlib.contextmanager
def _stderr_dropped_on_failure():
    """Holds back what the process writes to file descriptor 2 inside the
    block (MLIR prints a failed pass's reproducer there) and writes it out
    afterwards unless the block raised: a failure that Proton recovers from
    prints nothing. PROTON_DEBUG_IR=1 always writes it."""
    import sys

    with tempfile.TemporaryFile() as held:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(held.fileno(), 2)
        raised = False
        try:
            yield
        except BaseException:
            raised = True
            raise
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if not raised or os.environ.get("PROTON_DEBUG_IR") == "1":
                held.seek(0)
                os.write(2, held.read())


def _parse_ttir(text: str, context):
    """A TTIR module parsed from `text` into `context`, the compile's own
    (Triton hands it along as the module's `context` attribute)."""
    from triton._C.libtriton import ir

    with tempfile.TemporaryDirectory(prefix="proton-ttir-") as folder:
        path = os.path.join(folder, "kernel.ttir")
        with open(path, "w") as file:
            file.write(text)
        module = ir.parse_mlir_module(path, context)
    module.context = context
    return module
