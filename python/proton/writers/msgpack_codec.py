"""MessagePack (https://msgpack.org, the spec's formats) for the JSON-like
values of a profile tree: the `.hatchet_msgpack` output and
`proton.data.get_msgpack`. Written here so that profiling needs no
`msgpack` package; files and bytes it writes are read by `msgpack.load(f,
raw=False, strict_map_key=False)` as the same lists, dicts, strings and
numbers. Integers take the smallest format (unsigned ones for values >= 0),
floats are always 64-bit, tuples pack as arrays."""

from __future__ import annotations

import numbers
import struct

_FLOAT64 = struct.Struct(">d")
_UNSIGNED = ((0xFF, 0xCC, ">B"), (0xFFFF, 0xCD, ">H"), (0xFFFFFFFF, 0xCE, ">I"), ((1 << 64) - 1, 0xCF, ">Q"))
_SIGNED = ((1 << 7, 0xD0, ">b"), (1 << 15, 0xD1, ">h"), (1 << 31, 0xD2, ">i"), (1 << 63, 0xD3, ">q"))


def packb(value) -> bytes:
    """`value` (None, bool, int, float, str, bytes, list, tuple, dict) as MessagePack."""
    out = bytearray()
    _pack(value, out)
    return bytes(out)


def _header(out: bytearray, n: int, fix_base: int, fix_limit: int, codes: tuple, what: str) -> None:
    # str, bin, array and map lengths: a "fix" byte when short, else 8/16/32-bit.
    if fix_base is not None and n < fix_limit:
        out.append(fix_base | n)
        return
    for code, fmt, limit in codes:
        if n <= limit:
            out.append(code)
            out += struct.pack(fmt, n)
            return
    raise ValueError(f"msgpack: {what} of {n} entries is over the format's 2**32 - 1")


_STR = ((0xD9, ">B", 0xFF), (0xDA, ">H", 0xFFFF), (0xDB, ">I", 0xFFFFFFFF))
_BIN = ((0xC4, ">B", 0xFF), (0xC5, ">H", 0xFFFF), (0xC6, ">I", 0xFFFFFFFF))
_ARRAY = ((0xDC, ">H", 0xFFFF), (0xDD, ">I", 0xFFFFFFFF))
_MAP = ((0xDE, ">H", 0xFFFF), (0xDF, ">I", 0xFFFFFFFF))


def _pack(value, out: bytearray) -> None:
    if value is None:
        out.append(0xC0)
    elif value is True or value is False:
        out.append(0xC3 if value else 0xC2)
    elif isinstance(value, str):
        data = value.encode("utf-8")
        _header(out, len(data), 0xA0, 32, _STR, "a string")
        out += data
    elif isinstance(value, numbers.Integral):  # numpy integers too
        _pack_int(int(value), out)
    elif isinstance(value, numbers.Real):
        out.append(0xCB)
        out += _FLOAT64.pack(float(value))
    elif isinstance(value, (list, tuple)):
        _header(out, len(value), 0x90, 16, _ARRAY, "an array")
        for item in value:
            _pack(item, out)
    elif isinstance(value, dict):
        _header(out, len(value), 0x80, 16, _MAP, "a map")
        for key, item in value.items():
            _pack(key, out)
            _pack(item, out)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        _header(out, len(data), None, 0, _BIN, "a byte string")
        out += data
    else:
        raise TypeError(f"msgpack: cannot pack {type(value).__name__}")


def _pack_int(value: int, out: bytearray) -> None:
    if 0 <= value < 0x80:
        out.append(value)  # positive fixint
    elif -32 <= value < 0:
        out.append(value & 0xFF)  # negative fixint
    elif value >= 0:
        for limit, code, fmt in _UNSIGNED:
            if value <= limit:
                out.append(code)
                out += struct.pack(fmt, value)
                return
        raise OverflowError(f"msgpack: integer {value} is over 2**64 - 1")
    else:
        for bound, code, fmt in _SIGNED:
            if value >= -bound:
                out.append(code)
                out += struct.pack(fmt, value)
                return
        raise OverflowError(f"msgpack: integer {value} is under -2**63")


def unpackb(data: bytes):
    """The value packed in `data` (strings as str, byte strings as bytes);
    ValueError for truncated or malformed data, trailing bytes or extension
    types."""
    view = memoryview(bytes(data))
    value, end = _unpack(view, 0)
    if end != len(view):
        raise ValueError(f"msgpack: {len(view) - end} bytes after the value")
    return value


def _take(view: memoryview, pos: int, n: int) -> tuple[memoryview, int]:
    if pos + n > len(view):
        raise ValueError(f"msgpack: truncated at byte {pos} (needs {n} more)")
    return view[pos : pos + n], pos + n


def _number(view: memoryview, pos: int, fmt: str) -> tuple:
    chunk, pos = _take(view, pos, struct.calcsize(fmt))
    return struct.unpack(fmt, chunk)[0], pos


# Format byte -> (kind, struct format of the length or value).
_FIXED = {
    0xCC: ("num", ">B"), 0xCD: ("num", ">H"), 0xCE: ("num", ">I"), 0xCF: ("num", ">Q"),
    0xD0: ("num", ">b"), 0xD1: ("num", ">h"), 0xD2: ("num", ">i"), 0xD3: ("num", ">q"),
    0xCA: ("num", ">f"), 0xCB: ("num", ">d"),
    0xD9: ("str", ">B"), 0xDA: ("str", ">H"), 0xDB: ("str", ">I"),
    0xC4: ("bin", ">B"), 0xC5: ("bin", ">H"), 0xC6: ("bin", ">I"),
    0xDC: ("array", ">H"), 0xDD: ("array", ">I"),
    0xDE: ("map", ">H"), 0xDF: ("map", ">I"),
}  # fmt: skip


def _unpack(view: memoryview, pos: int):
    chunk, pos = _take(view, pos, 1)
    code = chunk[0]
    if code < 0x80:
        return code, pos
    if code >= 0xE0:
        return code - 0x100, pos
    if code < 0x90:
        kind, n = "map", code & 0x0F
    elif code < 0xA0:
        kind, n = "array", code & 0x0F
    elif code < 0xC0:
        kind, n = "str", code & 0x1F
    elif code in (0xC0, 0xC2, 0xC3):
        return {0xC0: None, 0xC2: False, 0xC3: True}[code], pos
    elif code in _FIXED:
        kind, fmt = _FIXED[code]
        n, pos = _number(view, pos, fmt)
        if kind == "num":
            return n, pos
    else:
        raise ValueError(f"msgpack: unsupported format byte 0x{code:02x} at byte {pos - 1}")
    if kind in ("str", "bin"):
        chunk, pos = _take(view, pos, n)
        return (str(chunk, "utf-8") if kind == "str" else bytes(chunk)), pos
    if kind == "array":
        items = []
        for _ in range(n):
            item, pos = _unpack(view, pos)
            items.append(item)
        return items, pos
    mapping = {}
    for _ in range(n):
        key, pos = _unpack(view, pos)
        if isinstance(key, (list, dict)):
            raise ValueError(f"msgpack: a map key at byte {pos} is an array or map")
        mapping[key], pos = _unpack(view, pos)
    return mapping, pos
