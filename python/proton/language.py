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
`// @proton start <name>` (or `end`; proton.instrument.format); Proton's compiler lifts it from the LLVM
IR into `proton.record` and lowers it to a clock read and a store. When no
instrumentation session is active nothing at all is emitted, so plain builds
are untouched.
"""

from __future__ import annotations

import triton.language as tl

from .instrument import state

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


#: The kernel languages whose markers emit records. Triton's Proton enables
#: only Gluon by default and asks for enable_semantic("triton"); here both are
#: on (Proton warns at compile time where pipelining moves a scope's work
#: instead), and disable_semantic turns one off as upstream does.
_SEMANTICS = {"triton", "gluon"}


def _semantic_name(semantic) -> str:
    return "gluon" if "gluon" in type(semantic).__module__.lower() else "triton"


def enable_semantic(semantic_name: str) -> None:
    """Lets markers record in kernels of this language ("triton" or "gluon")."""
    _SEMANTICS.add(_check_semantic(semantic_name))


def disable_semantic(semantic_name: str) -> None:
    """Makes markers in kernels of this language an error, as in Triton's Proton."""
    _SEMANTICS.discard(_check_semantic(semantic_name))


def _check_semantic(semantic_name: str) -> str:
    if semantic_name not in ("triton", "gluon"):
        raise ValueError(f"unknown semantic {semantic_name!r}; valid: 'triton', 'gluon'")
    return semantic_name


def _emit(kind: str, name, semantic) -> None:
    name = _scope_name(name)
    if not state.instrumentation_active():
        return
    language = _semantic_name(semantic)
    if language not in _SEMANTICS:
        raise TypeError(f"proton markers are disabled for {language} kernels (proton.language.disable_semantic); "
                        f"call proton.language.enable_semantic({language!r})")
    # A scalar argument yields exactly one carrier per thread.
    carrier_arg = semantic.to_tensor(0)
    from .instrument.format import marker_text  # loads the compiler: a session is active
    tl.core.inline_asm_elementwise(marker_text(kind, name), "=r,r", [carrier_arg], dtype=tl.int32,
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
