"""The device-side markers of proton.language (its docstring says how a
kernel uses them): each emits a side-effecting inline-assembly carrier
whose text is `// @proton <kind> <name>` (proton.contract.compiler_exports),
while Triton compiles the kernel and an instrumentation session is active;
nothing at all otherwise, so plain builds are untouched."""

from __future__ import annotations

import triton.language as tl

from . import instrumentation_state
from ..contract.scope_names import check_scope_name
from .inductor import teach_inductor_the_markers

# Kernels with markers compiled by torch.compile (Inductor) need this module in their copy.
teach_inductor_the_markers()


def _scope_name(name) -> str:
    name = tl.core._unwrap_if_constexpr(name)
    if not isinstance(name, str):
        raise TypeError(f"a proton scope name must be a constant string, got {name!r}")
    return check_scope_name(name)


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


def _emit(kind: str, name, semantic, value=None) -> None:
    name = _scope_name(name)
    if not instrumentation_state.instrumentation_active():
        return
    language = _semantic_name(semantic)
    if language not in _SEMANTICS:
        raise TypeError(
            f"proton markers are disabled for {language} kernels (proton.language.disable_semantic); "
            f"call proton.language.enable_semantic({language!r})"
        )
    # A scalar argument yields exactly one carrier per thread; a value
    # marker's argument is the value, lifted into the record's operand.
    carrier_arg = semantic.to_tensor(0) if value is None else value
    constraint = "=r,f" if value is not None and value.dtype == tl.float32 else "=r,r"
    from ..contract.compiler_exports import marker_text  # loads the compiler: a session is active

    tl.core.inline_asm_elementwise(
        marker_text(kind, name), constraint, [carrier_arg], dtype=tl.int32, is_pure=False, pack=1, _semantic=semantic
    )


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


class event_type(tl.core.base_type):
    """The frontend type of an event handle: no IR value (it flattens to
    nothing), so that a handle crosses loops, function calls and
    warp-specialized partitions as a compile-time constant does."""

    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, event_type) and other.name == self.name

    def __hash__(self):
        return hash(("proton_event", self.name))

    def __repr__(self):
        return f"proton_event[{self.name}]"

    def mangle(self) -> str:
        return f"PE{self.name}"

    def _flatten_ir_types(self, builder, out) -> None:
        return

    def _unflatten_ir(self, handles, cursor):
        return event(self.name), cursor


class event(tl.core.base_value):
    """An asynchronous event: `pl.allocate_event(name)` makes one; its
    starts and ends are recorded by `pl.start_event`/`pl.end_event`."""

    def __init__(self, name: str):
        self.name = name
        self.type = event_type(name)

    def _flatten_ir(self, handles) -> None:
        return

    def _set_name(self, builder, name) -> None:
        return  # Triton 3.8+ names function arguments; a handle has no IR value to name

    def __repr__(self):
        return f"proton.language.event({self.name!r})"


def _event_of(ev, what: str) -> event:
    ev = tl.core._unwrap_if_constexpr(ev)
    if not isinstance(ev, event):
        raise TypeError(f"proton.language.{what} takes an event from proton.language.allocate_event, got {ev!r}")
    return ev


@tl.core.builtin
def allocate_event(name, _semantic=None):
    """An asynchronous event named `name` (a constant string). Events of one
    name are one event: each end closes the earliest open start."""
    return event(_scope_name(name))


@tl.core.builtin
def start_event(ev, _semantic=None):
    """Records a start of `ev` (need not pair with an end on the same path)."""
    _emit("event_start", _event_of(ev, "start_event").name, _semantic)


@tl.core.builtin
def end_event(ev, _semantic=None):
    """Records an end of `ev`: it closes the earliest start still open."""
    _emit("event_end", _event_of(ev, "end_event").name, _semantic)


@tl.core.builtin
def mark(name, _semantic=None):
    """Records one instant named `name` (a constant string) in every warp
    that runs it: an instant event in the traces."""
    _emit("mark", name, _semantic)


def _scalar_value(name: str, value, semantic):
    """`value` as an i32 or f32 scalar: a record has 32 bits for it
    (docs/buffer-format.md). Narrower types widen exactly; others are
    refused rather than silently truncated."""
    value = tl.core._unwrap_if_constexpr(value)
    if isinstance(value, (bool, int, float)):
        value = semantic.to_tensor(value)
    if not isinstance(value, tl.core.tensor) or value.type.is_block():
        raise TypeError(
            f"proton.language.record_value({name!r}, ...) takes a scalar (one value per program), got {value!r}"
        )
    dtype = value.dtype
    if dtype.is_int1() or (dtype.is_int() and dtype.primitive_bitwidth < 32):
        value = value.to(tl.int32, _semantic=semantic)
    elif dtype in (tl.float16, tl.bfloat16):
        value = value.to(tl.float32, _semantic=semantic)
    if value.dtype not in (tl.int32, tl.float32):
        raise TypeError(
            f"proton.language.record_value({name!r}, ...) records int32 or float32 values (narrower ones are "
            f"widened); got {dtype}: a record has 32 bits for it. Cast it, e.g. value.to(tl.int32), knowing "
            "what is lost"
        )
    return value


@tl.core.builtin
def record_value(name, value, _semantic=None):
    """Records `value`, a scalar of the kernel (i32 or f32; narrower ints
    and floats are widened, 64-bit types refused), with the time, under
    `name` (a constant string) in every warp that runs it: a counter in the
    traces, summed in the tree's column `name`."""
    name = _scope_name(name)
    if not instrumentation_state.instrumentation_active():
        return
    _emit("value", name, _semantic, _scalar_value(name, value, _semantic))
