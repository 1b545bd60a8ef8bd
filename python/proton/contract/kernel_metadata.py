"""What the compiler says about one instrumented kernel, typed: the profile
buffer's layout and the record table (one row per id a record's tag carries:
a scope, an asynchronous event, a mark or a value). It is the one contract
between compile time (the stage hook writes it into Triton's metadata) and
run time (the session, calibration and the decoder read it; the writers get
its names, parents and kinds with the decoded events), parsed once from the
compiler's JSON; and the registry of every instrumented kernel this process
compiled or loaded, by kernel id.

A row's `kind` is an IdKind of the compiler's, and what that kind's rows
carry (a value's dtype) is the IdKind's traits (compiler_exports, from
ProtonEnums.td): a new record kind changes nothing here unless it needs a
new field of RecordTableRow."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

from .errors import ProfilerError


@dataclass(frozen=True)
class BufferLayout:
    """Where and how a kernel's records lie in its profile buffer
    (docs/buffer-format.md); the names are the compiler's."""

    buffer_type: str  # "global", "shared" or "registers"
    granularity: str
    clock_bits: int  # 32 or 64
    warps: tuple[int, ...]  # the recording warps: one segment each
    segment_bytes: int  # a segment's records
    record_bytes: int
    capacity: int  # records a segment holds
    bytes_per_cta: int
    num_warps: int = 0
    overhang: int = 0  # records past a segment's ring (NVIDIA's deferred stores)
    block_bytes: int | None = None  # a segment padded to whole sectors (older compilers: absent)
    segment_header_bytes: int | None = None
    shared_offset: int = 0
    shared_bytes: int = 0

    @staticmethod
    def from_dict(d: dict) -> "BufferLayout":
        known = {k: d[k] for k in _LAYOUT_FIELDS if k in d}
        return BufferLayout(**{**known, "warps": tuple(int(w) for w in d["warps"])})

    def to_dict(self) -> dict:
        """As the compiler writes it (its JSON keys are sorted)."""
        out = {k: getattr(self, k) for k in sorted(_LAYOUT_FIELDS)}
        out["warps"] = list(self.warps)
        return {k: v for k, v in out.items() if v is not None}


_LAYOUT_FIELDS = tuple(BufferLayout.__dataclass_fields__)


@dataclass(frozen=True)
class RecordTableRow:
    """One id of a kernel's record table (the compiler's scope table)."""

    id: int
    name: str
    parent: int  # the enclosing scope's id, -1 at the top level
    kind: str = "scope"  # an IdKind name (compiler_exports.ID_KIND_TRAITS)
    location: str = ""  # file:line:col of the marker
    dtype: str | None = None  # a value's 32-bit type (its IdKind's value_types)
    #: Whether the compiler wrote `kind` (older compilers did not): kept so
    #: that the metadata serializes back as it was read.
    kind_given: bool = field(default=True, repr=False)

    @staticmethod
    def from_dict(d: dict, kinds: dict) -> "RecordTableRow":
        """`kinds`: the IdKinds' traits by name (record_kinds())."""
        kind = d.get("kind", "scope")
        if kind not in kinds:
            raise ValueError(
                f"scope table entry {d['id']} ({d['name']!r}) has unknown kind {kind!r}; known: {', '.join(kinds)}"
            )
        dtype = d.get("dtype")
        value_types = kinds[kind].value_types
        # A value's dtype defaults to the first type (compilers before dtype wrote i32 only).
        if value_types and d.get("dtype", value_types[0]) not in value_types:
            known = ", ".join(value_types)
            raise ValueError(f"scope table entry {d['id']} ({d['name']!r}) has value type {dtype!r}; known: {known}")
        return RecordTableRow(
            int(d["id"]), d["name"], int(d["parent"]), kind, d.get("loc", ""), dtype, kind_given="kind" in d
        )

    @property
    def is_float(self) -> bool:
        """A value row (of an IdKind with value types) whose 32 bits are an f32."""
        return self.dtype == "f32" and record_kinds()[self.kind].has_value

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"dtype": self.dtype} if self.dtype is not None else {}
        out["id"] = self.id
        if self.kind_given:
            out["kind"] = self.kind
        out.update(loc=self.location, name=self.name, parent=self.parent)
        return out


@dataclass(frozen=True)
class KernelMetadata:
    """One instrumented kernel build: its layout, its record table (rows in
    id order) and what the stage hook added (kernel id, target, compile
    warnings, warp-specialization partitions)."""

    kernel: str
    layout: BufferLayout
    rows: tuple[RecordTableRow, ...]
    profile_scratch_size: int
    profile_scratch_align: int = 16
    shared_memory_total: int = 0
    kernel_id: int | None = None  # the segment headers' W_KERNEL_ID; None: not checked
    target: str = "nvptx"
    warnings: tuple[str, ...] = ()
    #: Which warps run which gl.warp_specialize partition (warp_specialize.partition_layout).
    warp_specialize: Any = None

    def __post_init__(self):
        _check_parents(self.rows, self.kernel)

    @staticmethod
    def from_dict(d: dict) -> "KernelMetadata":
        """Parses the compiler's metadata (plus the stage hook's keys);
        raises ValueError for a row of a kind or value type this Proton
        cannot decode, or a table whose parents do not form a tree."""
        kinds = record_kinds()
        rows = tuple(sorted((RecordTableRow.from_dict(r, kinds) for r in d["scopes"]), key=lambda r: r.id))
        layout = BufferLayout.from_dict(d["layout"])
        return KernelMetadata(
            kernel=d.get("kernel", "kernel"),
            layout=layout,
            rows=rows,
            profile_scratch_size=int(d.get("profile_scratch_size", layout.bytes_per_cta)),
            profile_scratch_align=int(d.get("profile_scratch_align", 16)),
            shared_memory_total=int(d.get("shared_memory_total", 0)),
            kernel_id=d.get("kernel_id"),
            target=d.get("target", "nvptx"),
            warnings=tuple(d.get("warnings") or ()),
            warp_specialize=d.get("warp_specialize"),
        )

    def to_dict(self) -> dict:
        """The compiler's keys (sorted, as it writes them; the stage hook
        replaces its warnings), then the stage hook's."""
        out = {
            "instrumented": True,
            "kernel": self.kernel,
            "layout": self.layout.to_dict(),
            "profile_scratch_align": self.profile_scratch_align,
            "profile_scratch_size": self.profile_scratch_size,
            "scopes": [row.to_dict() for row in self.rows],
            "shared_memory_total": self.shared_memory_total,
            "warnings": list(self.warnings),
        }
        if self.kernel_id is not None:
            out["kernel_id"] = self.kernel_id
        out["target"] = self.target
        if self.warp_specialize is not None:
            out["warp_specialize"] = self.warp_specialize
        return out

    @property
    def names(self) -> list[str]:
        return [row.name for row in self.rows]

    @property
    def parents(self) -> list[int]:
        return [row.parent for row in self.rows]


def _check_parents(rows: tuple[RecordTableRow, ...], kernel: str) -> None:
    """Each row's parent is -1 or another row, and no chain of parents comes
    back to where it started: the decoder and the writers walk parents up to
    the top, which a cycle (a corrupted Triton cache) would make endless."""
    parent = {row.id: row.parent for row in rows}
    if len(parent) != len(rows):
        raise ValueError(f"record table of {kernel}: an id appears twice")
    top: set[int] = set()  # ids known to reach -1
    for row in rows:
        chain: list[int] = []
        on_chain: set[int] = set()
        at = row.id
        while at != -1 and at not in top:
            if at not in parent:
                raise ValueError(f"record table of {kernel}: row {chain[-1]} has parent {at}, which is no row")
            if at in on_chain:
                cycle = " -> ".join(str(i) for i in chain[chain.index(at) :] + [at])
                raise ValueError(f"record table of {kernel}: its parents form a cycle ({cycle})")
            chain.append(at)
            on_chain.add(at)
            at = parent[at]
        top.update(chain)


def record_kinds() -> dict:
    """The kinds a record-table row may have, as the compiler names them,
    with their traits (compiler_exports.IdKindTraits)."""
    from .compiler_exports import ID_KIND_TRAITS

    return ID_KIND_TRAITS


# The registry: every instrumented kernel this process compiled or loaded,
# by kernel id (header word W_KERNEL_ID of every segment of its buffers).
KERNELS: dict[int, KernelMetadata] = {}


def kernel_id_of(llvm_ir: str, mode_key: str) -> int:
    """A stable 31-bit id for a kernel build: the same source and mode give
    the same id in every process, so kernels loaded from Triton's disk cache
    match their metadata."""
    return (zlib.crc32((mode_key + "\0" + llvm_ir).encode()) & 0x7FFFFFFF) or 1


def register(meta: KernelMetadata) -> None:
    KERNELS[int(meta.kernel_id)] = meta


# Every instrumented kernel this process loaded, by the handle Triton launches
# it with (its CUfunction): the kernel id its launches' buffers must carry.
# A handle not here is a kernel without records.
LAUNCHED: dict[int, int] = {}


def register_loaded(function: int, kernel_id: int) -> None:
    LAUNCHED[int(function)] = int(kernel_id)


def metadata_for_buffer(data, kernel: str) -> KernelMetadata:
    """The metadata of the kernel that wrote `data` (a u8 numpy buffer),
    found by the kernel id in its first segment header."""
    import numpy as np

    from .compiler_exports import LAYOUT

    if data.nbytes < 4 * LAYOUT.HEADER_WORDS:
        raise ProfilerError(f"profile buffer of {kernel} is empty")
    kernel_id = int(np.asarray(data[: 4 * LAYOUT.HEADER_WORDS]).view(np.uint32)[LAYOUT.W_KERNEL_ID])
    meta = KERNELS.get(kernel_id)
    if meta is None:
        raise ProfilerError(
            f"no metadata for kernel id {kernel_id} of {kernel}: it was not compiled or loaded "
            "while a Proton session was active (or its buffer is corrupted)"
        )
    return meta
