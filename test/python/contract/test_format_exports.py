"""The formats `_C` exports (buffer layout, marker text, ODS enums) against
what docs/buffer-format.md states and what the compiler accepts: a constant
that drifts from the document, or from the compiler, fails here."""

import re

import numpy as np
import pytest

from proton import _C
import suite_paths

DOC = (suite_paths.REPO / "docs" / "buffer-format.md").read_text()
F = _C.buffer_format


def stated(pattern, text=DOC):
    """The groups of the one place `pattern` matches in `text`."""
    found = re.findall(pattern, text)
    assert len(found) == 1, f"docs/buffer-format.md should state {pattern!r} once, found {found}"
    return found[0]


def section(title):
    """The text of a `## ` section of the document."""
    return stated(r"(?ms)^## " + re.escape(title) + r"\n(.*?)(?=^## |\Z)")


def table_rows(text):
    """The cells of a Markdown table's body rows."""
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("|")
    ]
    return rows[2:]  # after the header and the --- line


def bit_range(text):
    """'4-5' -> (4, 5); '31' -> (31, 31)."""
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def codes(listing):
    """'0 shared, 1 global, 2 registers' -> {'shared': 0, ...}, named as the
    ODS enums name them ('warp group' -> 'warp_group', 'CTA' -> 'cta')."""
    pairs = (item.strip().split(" ", 1) for item in listing.split(","))
    return {name.lower().replace(" ", "_"): int(code) for code, name in pairs}


def test_every_constant_is_exported_as_an_int():
    names = [
        "MAGIC",
        "VERSION",
        "PREVIOUS_VERSION",
        "HEADER_WORDS",
        "SEGMENT_HEADER_BYTES",
        "W_MAGIC_FLAGS",
        "W_KERNEL_ID",
        "W_COUNT",
        "W_LOCATION",
        "W_TIMER_START",
        "W_CLOCK_START",
        "W_TIMER_END",
        "W_CLOCK_END",
        "CLOCK64_BIT",
        "BUFFER_TYPE_SHIFT",
        "GRANULARITY_SHIFT",
        "TIMER_100MHZ_BIT",
        "WARP_SHIFT",
        "RECORD_WORDS",
        "RECORD_BYTES",
        "TAG_SHIFT",
        "END_TAG_BIT",
        "MAX_SCOPES",
        "CHUNK_BYTES",
        "SECTOR_BYTES",
    ]
    exported = {name for name in dir(F) if name.isupper()}
    assert exported == set(names)
    assert all(type(getattr(F, name)) is int for name in names)


def test_magic_and_version():
    assert F.MAGIC == int(stated(r"magic `(0x[0-9A-Fa-f]+)`"), 16)
    assert F.VERSION == int(stated(r"bits 0-3 format version \((\d+)\)"))
    assert F.VERSION == int(stated(r"Format (\d+) \(this one"))
    # The magic fills bits 16-31 of word 0.
    low, high = bit_range(stated(r"bits (\d+-\d+): magic"))
    assert (low, high) == (16, 31) and F.MAGIC < 1 << (high - low + 1)


def test_segment_header():
    assert F.HEADER_WORDS == int(stated(r"## Segment header \((\d+) x u32\)"))
    assert F.SEGMENT_HEADER_BYTES == int(stated(r"its (\d+)-byte header")) == 4 * F.HEADER_WORDS
    header, record, sector = stated(r"`block_bytes = roundup\((\d+) \+ segment_bytes \+ (\d+) \* overhang, (\d+)\)`")
    assert (F.SEGMENT_HEADER_BYTES, F.RECORD_BYTES, F.SECTOR_BYTES) == (int(header), int(record), int(sector))


@pytest.mark.parametrize(
    "name,meaning,words",
    [
        ("W_MAGIC_FLAGS", "magic", 1),
        ("W_KERNEL_ID", "kernel id", 1),
        ("W_COUNT", "records written", 1),
        ("W_LOCATION", "warp id", 1),
        ("W_TIMER_START", "global timer at kernel entry", 2),
        ("W_CLOCK_START", "cycle counter at kernel entry", 2),
        ("W_TIMER_END", "global timer at return", 2),
        ("W_CLOCK_END", "cycle counter at return", 2),
    ],
)
def test_header_words(name, meaning, words):
    rows = [row for row in table_rows(section("Segment header (12 x u32)")) if meaning in row[1]]
    assert len(rows) == 1, f"one header row should say {meaning!r}"
    first, last = bit_range(rows[0][0])
    assert getattr(F, name) == first and last - first + 1 == words


def test_header_rows_fill_the_header():
    rows = table_rows(section("Segment header (12 x u32)"))
    assert bit_range(rows[-1][0])[1] + 1 == F.HEADER_WORDS


def test_flags():
    assert F.CLOCK64_BIT == 1 << int(stated(r"bit (\d+) 64-bit clock"))
    assert F.TIMER_100MHZ_BIT == 1 << int(stated(r"bit (\d+) the global timer ticks at 100 MHz"))
    assert F.BUFFER_TYPE_SHIFT == int(stated(r"bits (\d+)-\d+ buffer type"))
    assert F.GRANULARITY_SHIFT == int(stated(r"bits (\d+)-\d+ granularity"))
    # Bits 0-3 hold the version: the flags start above it.
    assert F.VERSION < F.CLOCK64_BIT


def test_warp_shift():
    assert F.WARP_SHIFT == int(stated(r"bits (\d+)-31: warp id"))
    assert stated(r"bits 0-(\d+): where the warp ran") == str(F.WARP_SHIFT - 1)


def test_records():
    rows = table_rows(section("Records"))
    words = {int(row[0]) for row in rows}
    assert F.RECORD_WORDS == max(words) + 1 == len(words)
    assert (
        F.RECORD_BYTES == 4 * F.RECORD_WORDS == int(stated(r"followed by its `segment_bytes` of\s+(\d+)-byte records"))
    )
    assert stated(r"`capacity = segment_bytes / (\d+)`") == str(F.RECORD_BYTES)
    scope_row = [row for row in rows if row[2].startswith("scope id")][0]
    end_row = [row for row in rows if row[2].startswith("set for an end record")][0]
    assert F.TAG_SHIFT == bit_range(scope_row[1])[0] == int(stated(r"`tag = word1 >> (\d+)`"))
    assert F.END_TAG_BIT == 1 << int(stated(r"the end flag in tag bit (\d+)"))
    assert F.END_TAG_BIT == int(stated(r"tag bit \d+ \(`(0x[0-9a-fA-F]+)`\)"), 16)
    assert F.END_TAG_BIT == 1 << (bit_range(end_row[1])[0] - F.TAG_SHIFT)
    scope_bits = bit_range(scope_row[1])
    assert F.MAX_SCOPES == 1 << (scope_bits[1] - scope_bits[0] + 1)
    assert F.MAX_SCOPES == int(stated(r"at most (\d+) scopes per kernel"))


def test_chunks_and_sectors():
    assert F.CHUNK_BYTES == int(stated(r"fits in one (\d+)-byte chunk per lane"))
    assert stated(r"keeps bytes\s+`\[(\d+) L, \d+ L \+ \d+\)`") == str(F.CHUNK_BYTES)
    assert F.SECTOR_BYTES == int(stated(r"padded to whole\s+(\d+)-byte memory sectors"))


def test_buffer_type_and_granularity_codes():
    buffer_types = codes(stated(r"buffer type \(([^)]*)\)"))
    granularities = codes(stated(r"granularity \((\d[^)]*)\)"))
    assert buffer_types == {"shared": 0, "global": 1, "registers": 2}
    assert {name: _C.ENUMS["BufferType"][name] for name in buffer_types} == buffer_types
    # auto is an option value only, resolved before anything is written.
    assert set(_C.ENUMS["BufferType"]) == set(buffer_types) | {"auto"}
    assert _C.ENUMS["BufferType"]["auto"] not in buffer_types.values()
    assert _C.ENUMS["Granularity"] == granularities
    # Both fit their 2-bit fields.
    assert max(_C.ENUMS["BufferType"].values()) < 4 and max(granularities.values()) < 4


def test_record_kind_matches_the_end_bit():
    # The end bit is set for the kinds that close a pair (end, event_end)
    # and for a value's second record (value_end), the lowering's rule
    # (ProtonGPUToLLVM reads end_bit; its lit tests check the tags written).
    kinds = _C.ENUMS["RecordKind"]
    traits = _C.RECORD_KIND_TRAITS
    assert list(traits) == list(kinds)
    value_records = {t["value_record"] for t in traits.values()} - {None}
    for name, t in traits.items():
        assert t["end_bit"] == (t["closes"] or name in value_records), name
    assert {name for name, t in traits.items() if t["end_bit"]} >= {"end", "event_end", "value_end"}


def test_record_kind_traits_are_every_kinds_and_well_typed():
    # One traits entry per RecordKind case, in the enum's order, with fields
    # of the types compiler_exports reads; and as the generator promises.
    from proton.contract.compiler_exports import RECORD_KIND_TRAITS, RecordKind

    kinds, id_kinds = _C.ENUMS["RecordKind"], _C.ENUMS["IdKind"]
    assert list(kinds.values()) == list(range(len(kinds)))
    assert list(RECORD_KIND_TRAITS) == list(kinds) == [k.name for k in RecordKind]
    fields = {
        "id_kind": str,
        "pairing": str,
        "closes": bool,
        "value_types": tuple,
        "value_record": (str, type(None)),
        "records": int,
        "end_bit": bool,
        "recordable": bool,
    }
    for name, t in _C.RECORD_KIND_TRAITS.items():
        assert set(t) == set(fields), name
        for field, types in fields.items():
            assert isinstance(t[field], types), (name, field)
        assert t["id_kind"] in id_kinds
        assert t["pairing"] in ("scope", "event", "point")
        assert all(isinstance(v, str) for v in t["value_types"])
        # A kind taking a value writes its time, then the value's record:
        # a kind of the same ids that proton.record refuses.
        assert (t["value_record"] is not None) == bool(t["value_types"]) == (t["records"] == 2), name
        if t["value_record"]:
            partner = _C.RECORD_KIND_TRAITS[t["value_record"]]
            assert not partner["recordable"] and partner["id_kind"] == t["id_kind"]
        assert not (t["closes"] and t["pairing"] == "point"), name
    # Every pair a kind opens, a kind of the same ids closes.
    for name, t in _C.RECORD_KIND_TRAITS.items():
        if t["pairing"] != "point" and not t["closes"]:
            assert any(
                o["closes"] and o["pairing"] == t["pairing"] and o["id_kind"] == t["id_kind"]
                for o in _C.RECORD_KIND_TRAITS.values()
            ), name


def test_id_kind_traits_follow_their_record_kinds():
    from proton.contract.compiler_exports import ID_KIND_TRAITS, IdKind

    assert list(_C.ID_KIND_TRAITS) == list(_C.ENUMS["IdKind"])
    for name, t in _C.ID_KIND_TRAITS.items():
        own = [k for k in _C.RECORD_KIND_TRAITS.values() if k["id_kind"] == name]
        assert own, f"no record kind's ids are {name!r}"
        assert {k["pairing"] for k in own} == {t["pairing"]}
        assert set(t["value_types"]) == {v for k in own for v in k["value_types"]}
        assert ID_KIND_TRAITS[name].code == IdKind[name].value == _C.ENUMS["IdKind"][name]


def test_id_kinds_are_the_compilers():
    # The scope table's `kind` names, numbered as the decoder reads them;
    # ids without a kind (older compilers) are scopes.
    from proton.recording import decode_non_scope

    assert decode_non_scope.KIND_CODES == _C.ENUMS["IdKind"]
    assert _C.ID_KIND_TRAITS["scope"]["pairing"] == "scope"
    for name, code in _C.ENUMS["IdKind"].items():
        pairing = _C.ID_KIND_TRAITS[name]["pairing"]
        has_value = bool(_C.ID_KIND_TRAITS[name]["value_types"])
        assert (code in decode_non_scope.NOT_SCOPE) == (pairing != "scope")
        assert (code in decode_non_scope.PAIRED_BY_NAME) == (pairing == "event")
        assert (code in decode_non_scope.INSTANTS) == (pairing == "point" and not has_value)
        assert (code in decode_non_scope.VALUES) == (pairing == "point" and has_value)
    codes = np.array(list(_C.ENUMS["IdKind"].values()) * 3, dtype=np.int8)
    for group in ("NOT_SCOPE", "PAIRED_BY_NAME", "INSTANTS", "VALUES"):
        chosen = getattr(decode_non_scope, group)
        assert (decode_non_scope.of_kinds(codes, chosen) == np.isin(codes, chosen)).all(), group


def test_malformed_marker_lists_the_recordable_kinds():
    recordable = [name for name, t in _C.RECORD_KIND_TRAITS.items() if t["recordable"]]
    kernel = """
define ptx_kernel void @k(ptr addrspace(1) %scratch) #0 {
  call void asm sideeffect "// @proton middle work", ""()
  ret void
}
attributes #0 = { "nvvm.reqntid"="128" }
"""
    with pytest.raises(_C.CompilerError) as error:
        _C.instrument(kernel, "arch=sm_90")
    assert "with <kind> one of " + ", ".join(recordable) + ", optionally" in str(error.value)


def test_marker_text_is_what_the_compiler_lifts():
    M = _C.markers
    assert (M.PREFIX, M.LOCATION_SUFFIX, M.RECORD_OP) == ("// @proton ", " ;loc=", "proton.record")
    kernel = f"""
define ptx_kernel void @k(ptr addrspace(1) %out, ptr addrspace(1) %scratch) #0 {{
  call void asm sideeffect "{M.PREFIX}start work{M.LOCATION_SUFFIX}kernel.py:3:5", ""()
  store i32 1, ptr addrspace(1) %out, align 4
  call void asm sideeffect "{M.PREFIX}end work", ""()
  ret void
}}
attributes #0 = {{ "nvvm.reqntid"="128" }}
"""
    _, metadata, _ = _C.instrument(kernel, "arch=sm_90")
    assert '"name":"work"' in metadata and '"loc":"kernel.py:3:5"' in metadata


def test_sampling_strategies_are_those_the_compiler_accepts():
    strategies = list(_C.ENUMS["SamplingStrategy"])
    assert strategies == ["none", "selective"]
    kernel = """
define ptx_kernel void @k(ptr addrspace(1) %scratch) #0 {
  call void asm sideeffect "// @proton start work", ""()
  call void asm sideeffect "// @proton end work", ""()
  ret void
}
attributes #0 = { "nvvm.reqntid"="128" }
"""
    with pytest.raises(_C.CompilerError) as error:
        _C.instrument(kernel, "sampling-strategy=bogus")
    assert "valid: " + ", ".join(strategies) in str(error.value)


@pytest.mark.parametrize("segment_bytes,overhang", [(16, 0), (64, 0), (64, 1), (1024, 7), (4096, 0), (4096, 511)])
def test_block_bytes_is_the_stated_formula(segment_bytes, overhang):
    """`_C.block_bytes`, the compiler's LayoutAttr::blockBytesFor, is the
    formula docs/buffer-format.md states (checked against it above)."""
    used = F.SEGMENT_HEADER_BYTES + segment_bytes + F.RECORD_BYTES * overhang
    assert _C.block_bytes(segment_bytes, overhang) == -(-used // F.SECTOR_BYTES) * F.SECTOR_BYTES
    assert _C.block_bytes(segment_bytes) == _C.block_bytes(segment_bytes, 0)
