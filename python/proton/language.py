"""Device-side markers for Triton and Gluon kernels.

    import proton.language as pl

    @triton.jit
    def kernel(...):
        pl.enter_scope("load")
        ...
        pl.exit_scope("load")
        with pl.scope("compute"):
            ...

A marker becomes a side-effecting inline-assembly carrier whose text is
`// @proton start <name>` (or `end`); Proton's compiler lifts it from the LLVM
IR into `proton.record` and lowers it to a clock read and a store. When no
instrumentation session is active nothing at all is emitted, so plain builds
are untouched.
"""

from __future__ import annotations

import triton.language as tl

from . import state

MARKER_PREFIX = "// @proton"
_ALLOWED_PUNCTUATION = set("_-.:/[]()<>, +=#@")


def _scope_name(name) -> str:
    name = tl.core._unwrap_if_constexpr(name)
    if not isinstance(name, str):
        raise TypeError(f"a proton scope name must be a constant string, got {name!r}")
    if not name or name != name.strip():
        raise ValueError(f"proton scope name {name!r} must be non-empty without surrounding spaces")
    bad = [c for c in name if not (c.isalnum() and c.isascii()) and c not in _ALLOWED_PUNCTUATION]
    if bad:
        raise ValueError(f"proton scope name {name!r} contains {bad[0]!r}; allowed are letters, digits, "
                         f"spaces and {''.join(sorted(_ALLOWED_PUNCTUATION))}")
    return name


def _emit(kind: str, name, semantic) -> None:
    name = _scope_name(name)
    if not state.instrumentation_active():
        return
    # A scalar argument yields exactly one carrier per thread.
    carrier_arg = semantic.to_tensor(0)
    tl.core.inline_asm_elementwise(f"{MARKER_PREFIX} {kind} {name}", "=r,r", [carrier_arg], dtype=tl.int32,
                                   is_pure=False, pack=1, _semantic=semantic)


@tl.core.builtin
def enter_scope(name, _semantic=None):
    """Opens the scope `name` (a constant string) in every warp that runs it."""
    _emit("start", name, _semantic)


@tl.core.builtin
def exit_scope(name, _semantic=None):
    """Closes the innermost open scope, which must be `name`."""
    _emit("end", name, _semantic)


class scope:
    """`with pl.scope("name"):` opens the scope for the body of the block."""

    def __init__(self, name, _semantic=None):
        self.name = _scope_name(name)
        self.semantic = _semantic

    def __enter__(self):
        _emit("start", self.name, self.semantic)
        return self

    def __exit__(self, *exc):
        _emit("end", self.name, self.semantic)
        return False
