"""torch.compile (Inductor) under an instrumentation session.

Inductor compiles the Triton kernels of a compiled model with
`triton.compile`, by default in worker processes that the session's stage
hook never reaches, and launches them with a static launcher that passes no
profile buffer. While a session is active, Inductor is set to compile in
this process and to launch through Triton's own launcher, so that the
kernels it compiles go through the hook (and get their profile buffers);
the settings are restored when the session is deactivated. Builds are keyed
by the session's mode (stage_hook), so neither Inductor's caches nor
Triton's hand back a plain build of a kernel compiled during the session.
What a session cannot reach (a model compiled before it started, in this
process) is listed in the report as launched without records.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import types

#: Inductor config while a session is active: compile in this process
#: (not in compile workers) and launch with Triton's launcher (the static
#: launcher allocates no profile buffer and calls no launch hooks).
SESSION_CONFIG = {"compile_threads": 1, "use_static_cuda_launcher": False}


class InductorSettings:
    def __init__(self):
        self._saved: dict | None = None

    def apply(self) -> None:
        if self._saved is not None or "torch" not in sys.modules:
            return  # without torch there is no Inductor to set
        try:
            import torch._inductor.config as config
        except Exception:  # noqa: BLE001 - an Inductor that does not import has nothing to set
            return
        self._config = config
        self._saved = {}
        for key, value in SESSION_CONFIG.items():
            if hasattr(config, key):
                self._saved[key] = getattr(config, key)
                setattr(config, key, value)

    def restore(self) -> None:
        if self._saved is None:
            return
        for key, value in self._saved.items():
            setattr(self._config, key, value)
        self._saved = None


# -- a user's kernel with markers, compiled by Inductor ------------------------

#: Inductor's module that copies a user's @triton.jit kernel into a module of
#: its own, with the imports it knows how to write (Triton's).
WRAPPER_MODULE = "torch._inductor.codegen.wrapper"
SOURCE_COLLECTOR = "user_defined_triton_kernel_transitive_closure_source_code"
#: Where proton.language's markers are defined (the copy imports them from proton.language).
MARKERS_MODULE = __name__.rpartition(".")[0] + ".markers"


def teach_inductor_the_markers() -> None:
    """A kernel with `pl.scope` called inside a torch.compile'd function is
    compiled by Inductor from a copy of its source, in a module that lacks
    the kernel's `import proton.language as pl`, and fails with "pl is not
    defined" (with or without a session). Inductor's source collector is
    wrapped so that the copy also imports what the kernel and the JIT
    functions it calls take from Proton. Done when Inductor's module is
    imported, so that importing Proton imports nothing of Inductor."""
    module = sys.modules.get(WRAPPER_MODULE)
    if module is not None:
        _wrap_source_collector(module)
    elif not any(isinstance(finder, _WrapOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _WrapOnImport())


def marker_imports(kernel) -> str:
    """The import lines for the Proton names `kernel` (a JITFunction) and
    the JIT functions it calls use, to append to Inductor's copy."""
    from triton.runtime.jit import JITFunction

    lines: list[str] = []
    seen: set[int] = set()

    def walk(jit) -> None:
        seen.add(id(jit))
        fn = getattr(jit, "fn", None)
        if fn is None:
            return
        for name in fn.__code__.co_names:
            value = fn.__globals__.get(name)
            if isinstance(value, JITFunction):
                if id(value) not in seen:
                    walk(value)
                continue
            if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] == "proton":
                line = f"import {value.__name__} as {name}"
            elif getattr(value, "__module__", "") == MARKERS_MODULE and hasattr(value, "__name__"):
                line = f"from proton.language import {value.__name__} as {name}"
            else:
                continue
            if line not in lines:
                lines.append(line)

    walk(kernel)
    return "".join(f"\n{line}" for line in lines) + ("\n" if lines else "")


def _wrap_source_collector(module) -> None:
    collect = getattr(module, SOURCE_COLLECTOR, None)
    if collect is None or getattr(collect, "__wrapped__", None) is not None:
        return

    def with_marker_imports(kernel):
        # Appended: the copy starts with the kernel's decorator and def; the
        # names are read when Triton compiles it, after the module ran.
        return collect(kernel) + marker_imports(kernel)

    with_marker_imports.__wrapped__ = collect
    setattr(module, SOURCE_COLLECTOR, with_marker_imports)


class _WrapOnImport(importlib.abc.MetaPathFinder):
    """Wraps the collector once Inductor's module has been executed."""

    def find_spec(self, name, path, target=None):
        if name != WRAPPER_MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module):
            run(module)
            _wrap_source_collector(module)

        loader.exec_module = exec_module
        return spec
