"""The LLVM IR bridge's invariant: Proton changes nothing of Triton's module
that it did not instrument.

Triton's LLVM IR is read by Proton's own LLVM (22.1.8), whose parser and
printer are not Triton's: it upgrades intrinsic names it considers old (Triton
3.6's `llvm.nvvm.ex2.approx.f` came back as `.f32`, unknown to Triton's LLVM),
rewrites attributes and renumbers metadata. This module works on the text on
both sides of the round trip:

- `legacy_float_literals` rewrites the floating-point literals that LLVM 24
  (Triton 3.9) prints and LLVM 22 cannot parse (`f0x3FB8AA3B`, `+inf`,
  `+qnan`, `0x1.8p3`) into the equivalent legacy forms, which every LLVM reads.
- `hide_intrinsics` renames Triton's intrinsic declarations before our LLVM
  parses them, so that it sees plain external functions it cannot upgrade;
  the compiler gives them their names back after export.
- `restore` puts back Triton's exact text for what we did not instrument: the
  target triple and data layout, every function header (declarations and
  definitions, with Triton's attribute groups), and global variables.
- `check` compares the result with Triton's module (headers, attribute groups,
  call targets, globals, named metadata, triple, data layout) and lists every
  difference that is not the instrumentation itself; the compiler refuses the
  kernel if there is one.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field

#: Identifier characters of an unquoted LLVM IR name.
_ID = r"[-a-zA-Z$._0-9]"
_NAME = rf"(?:[-a-zA-Z$._]{_ID}*|\"[^\"]*\")"
_HEADER = re.compile(rf"^(declare|define)\b[^@]*@({_NAME})\(")
_GLOBAL = re.compile(rf"^@({_NAME}) = ")
_GROUP = re.compile(r"^attributes #(\d+) = (.*)$")
_GROUP_REF = re.compile(r"#(\d+)\b")
_MD_NODE = re.compile(r"^!(\d+) = (.*)$")
_NAMED_MD = re.compile(r"^!([-a-zA-Z$._][-a-zA-Z$._0-9]*) = (.*)$")
_MD_REF = re.compile(r"!(\d+)\b")
_MD_REF_OR_STRING = re.compile(r'(c?"(?:[^"\\]|\\.)*")|!(\d+)\b')
_MD_ATTACHMENT = re.compile(r"\s*!([-a-zA-Z$._][-a-zA-Z$._0-9]*) !(\d+)")
_STRING = re.compile(r'c?"(?:[^"\\]|\\.)*"')
_CALLEE = re.compile(rf"@({_NAME})\(")
_INTRINSIC_REF = re.compile(rf"@(llvm\.{_ID}*)")

#: What Proton's lowering itself adds (lib/Conversion/ProtonGPUToLLVM): the
#: intrinsics for CTA, grid and thread ids, AMD's clocks, dispatch pointer and
#: scheduling barriers, and Triton's shared-memory symbol where the kernel had
#: none. Any other declaration, call or global the round trip adds is a change
#: to the kernel.
_OWN_INTRINSICS = re.compile(
    r"llvm\.(nvvm\.read\.ptx\.sreg\.(tid\.x|ctaid\.[xyz]|nctaid\.[xy])|"
    r"amdgcn\.(workitem\.id\.x|workgroup\.id\.[xyz]|s\.memtime|s\.memrealtime|dispatch\.ptr|"
    r"sched\.barrier|wave\.barrier))$"
)
_OWN_GLOBALS = {"global_smem"}


@dataclass
class Header:
    """A `declare` or `define` line, split where the round trip may differ."""

    kind: str
    name: str
    prefix: str  # up to and including the "(" of the parameter list
    params: list[str]
    suffix: str  # after the ")" without metadata attachments and "{"
    attachments: str  # " !dbg !4" and the like, definitions only

    def resolved(self, groups: dict[str, str], skip_param: int | None = None) -> str:
        """The header with attribute groups spelled out and metadata and value
        names left out, to compare across numberings."""
        params = [_value_name(p)[0] for i, p in enumerate(self.params) if i != skip_param]
        text = _without_metadata_refs(f"{self.prefix}{', '.join(params)}){self.suffix}")
        return _GROUP_REF.sub(lambda m: "{" + groups.get(m.group(1), "?") + "}", text)


@dataclass
class Surface:
    """What of a module the bridge keeps as Triton wrote it."""

    lines: list[str]
    datalayout: int | None = None  # line indices
    triple: int | None = None
    headers: dict[str, tuple[int, Header]] = field(default_factory=dict)
    globals: dict[str, int] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    md_nodes: dict[str, str] = field(default_factory=dict)
    named_md: dict[str, str] = field(default_factory=dict)
    named_md_lines: dict[str, int] = field(default_factory=dict)
    callees: dict[str, Counter] = field(default_factory=dict)

    def line(self, index: int | None) -> str | None:
        return None if index is None else self.lines[index]


def _split_params(text: str, start: int) -> tuple[list[str], int]:
    """The top-level comma-separated parameters from `start` (just after "(")
    and the index of the closing ")"."""
    depth, params, begin, i = 0, [], start, start
    while i < len(text):
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1)
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            if depth == 0:
                last = text[begin:i].strip()
                if last or params:
                    params.append(last)
                return params, i
            depth -= 1
        elif c == "," and depth == 0:
            params.append(text[begin:i].strip())
            begin = i + 1
        i += 1
    raise ValueError(f"unbalanced parameter list in: {text[:200]}")


def _parse_header(line: str) -> Header | None:
    match = _HEADER.match(line)
    if not match:
        return None
    params, close = _split_params(line, match.end())
    rest = line[close + 1 :].rstrip()
    if rest.endswith("{"):
        rest = rest[:-1].rstrip()
    attachments = "".join(m.group(0) for m in _MD_ATTACHMENT.finditer(rest))
    suffix = _MD_ATTACHMENT.sub("", rest)
    return Header(match.group(1), match.group(2), line[: match.end()], params, suffix, attachments)


def parse(text: str) -> Surface:
    lines = text.split("\n")
    surface = Surface(lines)
    current = None
    for i, line in enumerate(lines):
        if current is not None:
            if line.startswith("}"):
                current = None
            elif " call " in line or " invoke " in line or line.lstrip().startswith(("call ", "invoke ")):
                for callee in _CALLEE.findall(_STRING.sub('""', line))[:1]:
                    surface.callees[current][callee] += 1
            continue
        if line.startswith("target datalayout"):
            surface.datalayout = i
        elif line.startswith("target triple"):
            surface.triple = i
        elif line.startswith(("declare", "define")):
            header = _parse_header(line)
            if header is not None:
                surface.headers[header.name] = (i, header)
                if header.kind == "define":
                    current = header.name
                    surface.callees[current] = Counter()
        elif line.startswith("@"):
            match = _GLOBAL.match(line)
            if match:
                surface.globals[match.group(1)] = i
        elif line.startswith("attributes #"):
            match = _GROUP.match(line)
            if match:
                surface.groups[match.group(1)] = match.group(2).strip()
        elif line.startswith("!"):
            match = _MD_NODE.match(line)
            if match:
                surface.md_nodes[match.group(1)] = match.group(2)
            else:
                match = _NAMED_MD.match(line)
                if match:
                    surface.named_md[match.group(1)] = match.group(2)
                    surface.named_md_lines[match.group(1)] = i
    return surface


# ------------------------------------------------------------ float literals

#: (exponent bits, mantissa bits) of the IR's floating-point types.
_FP_FORMATS = {"half": (5, 10), "bfloat": (8, 7), "float": (8, 23), "double": (11, 52)}
_FP_TYPE = re.compile(r"\b(half|bfloat|float|double|fp128|x86_fp80|ppc_fp128)\b")
_NEW_FP_LITERAL = re.compile(
    r'(?P<string>c?"(?:[^"\\]|\\.)*")|'
    r"(?<![\w.$%@!#-])(?:(?P<bits>f0x[0-9A-Fa-f]+)|(?P<special>[-+](?:inf|qnan|s?nan\(0x[0-9A-Fa-f]+\)))|"
    r"(?P<hexfloat>[-+]?0x(?:[0-9A-Fa-f]*\.[0-9A-Fa-f]*(?:p[-+]?\d+)?|[0-9A-Fa-f]+p[-+]?\d+))|"
    r"(?P<decimal>[-+]?\d+\.\d*(?:[eE][-+]?\d+)?))(?![\w.$])"
)


class LiteralError(ValueError):
    """A floating-point literal the bridge cannot translate for our LLVM."""


def _special_bits(text: str, exp_bits: int, man_bits: int) -> int:
    sign = (1 if text[0] == "-" else 0) << (exp_bits + man_bits)
    all_ones = ((1 << exp_bits) - 1) << man_bits
    quiet = 1 << (man_bits - 1)
    body = text[1:]
    if body == "inf":
        return sign | all_ones
    if body == "qnan":
        return sign | all_ones | quiet
    payload = int(body[body.index("(") + 1 : -1], 16)
    if body.startswith("snan"):
        if not 0 < payload < quiet:
            raise LiteralError(f"signaling NaN payload out of range in {text!r}")
        return sign | all_ones | payload
    if payload >= quiet:
        raise LiteralError(f"NaN payload out of range in {text!r}")
    return sign | all_ones | quiet | payload


def _value_bits(value: float, fp_type: str, text: str) -> int:
    import struct

    if fp_type == "double":
        return struct.unpack("<Q", struct.pack("<d", value))[0]
    if fp_type == "float":
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        exact = struct.unpack("<f", struct.pack("<I", bits))[0] == value
    elif fp_type == "half":
        bits = struct.unpack("<H", struct.pack("<e", value))[0]
        exact = struct.unpack("<e", struct.pack("<H", bits))[0] == value
    else:  # bfloat: the high half of a float
        wide = struct.unpack("<I", struct.pack("<f", value))[0]
        bits, exact = wide >> 16, wide & 0xFFFF == 0 and struct.unpack("<f", struct.pack("<I", wide))[0] == value
    if not exact:
        raise LiteralError(f"{text!r} is not exactly a {fp_type}")
    return bits


def _nearest_bits(value: float, fp_type: str) -> int:
    """The bits of the `fp_type` value nearest to `value` (ties to even)."""
    import struct

    if fp_type == "half":
        return struct.unpack("<H", struct.pack("<e", value))[0]
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if fp_type == "bfloat":
        if (bits >> 23) & 0xFF == 0xFF:  # inf and NaN: keep the high half
            return bits >> 16 | (0x40 if bits & 0x7FFFFF and not bits & 0x7F0000 else 0)
        return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits


def _legacy_spelling(bits: int, fp_type: str) -> str:
    """LLVM 22's hexadecimal spelling of a value of `fp_type` with `bits`:
    half 0xH, bfloat 0xR, double its bits, float the bits of the same value
    as a double."""
    if fp_type == "half":
        return f"0xH{bits:04X}"
    if fp_type == "bfloat":
        return f"0xR{bits:04X}"
    if fp_type == "double":
        return f"0x{bits:016X}"
    sign, exponent, mantissa = bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exponent == 0xFF:  # inf and NaN keep their payload, shifted
        wide = (sign << 63) | (0x7FF << 52) | (mantissa << 29)
    else:
        import struct

        wide = struct.unpack("<Q", struct.pack("<d", struct.unpack("<f", struct.pack("<I", bits))[0]))[0]
    return f"0x{wide:016X}"


def legacy_float_literals(text: str) -> str:
    """The module with LLVM 24's floating-point literals spelled the legacy
    way. A literal's type is the nearest floating-point type named before it
    on its line (`fmul float %x, f0x3F800000`, `splat (half +inf)`)."""

    def convert(match: re.Match) -> str:
        if match.group("string"):
            return match.group(0)
        line_start = text.rfind("\n", 0, match.start()) + 1
        types = _FP_TYPE.findall(text, line_start, match.start())
        fp_type = types[-1] if types else None
        literal = match.group(0)
        if fp_type not in _FP_FORMATS:
            raise LiteralError(
                f"cannot tell the type of the floating-point literal {literal!r} "
                f"(line {text.count(chr(10), 0, match.start()) + 1})"
            )
        exp_bits, man_bits = _FP_FORMATS[fp_type]
        if match.group("bits"):
            bits = int(literal[3:], 16)
            if bits >> (1 + exp_bits + man_bits):
                raise LiteralError(f"{literal!r} does not fit a {fp_type}")
        elif match.group("special"):
            bits = _special_bits(literal, exp_bits, man_bits)
        elif match.group("decimal"):
            # LLVM 23+ prints the shortest decimal that reads back as the
            # same value; LLVM 22 wants a float's decimal to be exact.
            if fp_type == "double":
                return literal
            bits = _nearest_bits(float(literal), fp_type)
        else:
            bits = _value_bits(float.fromhex(literal), fp_type, literal)
        return _legacy_spelling(bits, fp_type)

    def checked(match: re.Match) -> str:
        try:
            return convert(match)
        except OverflowError as error:
            raise LiteralError(f"{match.group(0)!r} is out of range: {error}") from None

    return _NEW_FP_LITERAL.sub(checked, text)


# ------------------------------------------------------------ intrinsics


def hide_intrinsics(text: str, prefix: str) -> str:
    """Renames every intrinsic Triton declares to `prefix + name`, so that our
    LLVM reads it as a plain external function: it cannot upgrade, rename or
    re-attribute what it does not recognise. Intrinsics over metadata or token
    values stay (only intrinsics may take those); `check` covers them.
    `immarg` is dropped from the hidden declarations (it is only valid on
    intrinsics); `restore` puts Triton's declaration lines back."""
    hidden = set()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("declare"):
            header = _parse_header(line)
            if (
                header
                and header.name.startswith("llvm.")
                and not re.search(r"\b(metadata|token)\b", " ".join([header.prefix, *header.params]))
            ):
                hidden.add(header.name)
                lines[i] = re.sub(r"\s+immarg\b", "", line)
    if not hidden:
        return text
    return _INTRINSIC_REF.sub(
        lambda m: "@" + prefix + m.group(1) if m.group(1) in hidden else m.group(0), "\n".join(lines)
    )


def _md_hashes(surface: Surface) -> dict[str, str]:
    """A numbering-independent hash of every numbered metadata node."""
    memo: dict[str, str] = {}

    def digest(node: str, stack: tuple = ()) -> str:
        if node in memo:
            return memo[node]
        if node in stack:
            return "cycle"
        body = surface.md_nodes.get(node, "?")
        text = _MD_REF.sub(lambda m: "!" + digest(m.group(1), stack + (node,)), body)
        memo[node] = hashlib.sha1(text.encode()).hexdigest()[:16]
        return memo[node]

    for node in surface.md_nodes:
        digest(node)
    return memo


def _named_md(surface: Surface) -> dict[str, str]:
    hashes = _md_hashes(surface)
    return {
        name: _MD_REF.sub(lambda m: "!" + hashes.get(m.group(1), "?"), body) for name, body in surface.named_md.items()
    }


def restore(original: str, instrumented: str, kernel: str) -> str:
    """`instrumented` with Triton's own text for everything the
    instrumentation did not change. In `kernel`, the last parameter (Triton's
    profile_scratch) keeps our attributes: the instrumentation writes through
    it."""
    theirs, ours = parse(original), parse(instrumented)
    lines = list(ours.lines)
    for index, attr in ((ours.datalayout, theirs.datalayout), (ours.triple, theirs.triple)):
        if index is not None and attr is not None:
            lines[index] = theirs.lines[attr]
    group_base = max((int(n) for n in ours.groups), default=-1) + 1
    copied: dict[str, str] = {}  # Triton's group number -> ours

    def remap_groups(text: str) -> str:
        def copy(match):
            group = match.group(1)
            if group not in copied:
                copied[group] = str(group_base + len(copied))
            return "#" + copied[group]

        return _GROUP_REF.sub(copy, text)

    for name, (index, header) in ours.headers.items():
        if name not in theirs.headers:
            continue
        _, original_header = theirs.headers[name]
        if len(original_header.params) != len(header.params) or original_header.kind != header.kind:
            continue  # left for `check` to report
        # Triton's parameter attributes with our value names, which the
        # body uses (MLIR's export numbers values afresh).
        params = [_with_value_name(p, q) for p, q in zip(original_header.params, header.params)]
        if name == kernel and header.kind == "define" and params:
            params[-1] = header.params[-1]
        text = f"{original_header.prefix}{', '.join(params)}){original_header.suffix}"
        mine = f"{header.prefix}{', '.join(header.params)}){header.suffix}"
        text = _adopt_metadata_refs(text, mine)  # e.g. `declare !dbg !6 i32 @vprintf`
        if text is None:
            continue  # left for `check` to report
        line = remap_groups(text) + header.attachments
        lines[index] = line + " {" if header.kind == "define" else line
    for name, index in ours.globals.items():
        if name in theirs.globals:
            text = _adopt_metadata_refs(theirs.lines[theirs.globals[name]], lines[index])
            if text is not None:
                lines[index] = text
    # MLIR's export adds module flags (the debug-info version) to a module
    # that had none; the nodes they name stay, unreferenced and harmless.
    for name in ours.named_md.keys() - theirs.named_md.keys():
        lines[ours.named_md_lines[name]] = ""
    # ... and drops named metadata it does not model (`!nvvmir.version` from
    # libdevice in Triton 3.9): copy it back with the nodes it names.
    node_base = max((int(n) for n in ours.md_nodes), default=-1) + 1
    for name in sorted(theirs.named_md.keys() - ours.named_md.keys()):
        copied_nodes = _copy_metadata(theirs, theirs.named_md[name], node_base)
        if copied_nodes is not None:
            body, nodes = copied_nodes
            lines += [f"!{name} = {body}", *nodes]
            node_base += len(nodes)
    text = "\n".join(lines).rstrip("\n")
    extra = [
        f"attributes #{ours_number} = {theirs.groups[group]}"
        for group, ours_number in copied.items()
        if group in theirs.groups
    ]
    return text + "\n" + "\n".join(extra) + "\n" if extra else text + "\n"


def _adopt_metadata_refs(theirs: str, ours: str) -> str | None:
    """Triton's text with the metadata references (`!dbg !6`) of ours, which
    name our module's numbered nodes; None if the two do not have the same
    number of references."""
    refs = [m.group(2) for m in _MD_REF_OR_STRING.finditer(ours) if m.group(2)]
    if len(refs) != sum(1 for m in _MD_REF_OR_STRING.finditer(theirs) if m.group(2)):
        return None
    numbers = iter(refs)
    return _MD_REF_OR_STRING.sub(lambda m: m.group(1) or "!" + next(numbers), theirs)


def _md_kinds(surface: Surface, line: str) -> list[str]:
    """What the metadata references of a line name (`DISubprogram`, `tuple`),
    in order: a reference to the wrong kind of node crashes Triton's LLVM."""
    kinds = []
    for match in _MD_REF_OR_STRING.finditer(line):
        if match.group(2):
            body = surface.md_nodes.get(match.group(2), "?")
            kind = re.match(r"(?:distinct )?!(\w*)", body)
            kinds.append(kind.group(1) or "tuple" if kind else "?")
    return kinds


def _without_metadata_refs(text: str) -> str:
    return _MD_REF_OR_STRING.sub(lambda m: m.group(1) or "!?", text)


def _copy_metadata(surface: Surface, body: str, base: int) -> tuple[str, list[str]] | None:
    """`body` and the numbered nodes it reaches, renumbered from `base`; None
    if any is `distinct` (its identity, e.g. debug info, cannot be copied)."""
    order, seen, stack = [], set(), _MD_REF.findall(body)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        if node not in surface.md_nodes or surface.md_nodes[node].startswith("distinct"):
            return None
        seen.add(node)
        order.append(node)
        stack.extend(_MD_REF.findall(surface.md_nodes[node]))
    numbers = {node: str(base + i) for i, node in enumerate(order)}
    renumber = lambda text: _MD_REF.sub(lambda m: "!" + numbers[m.group(1)], text)  # noqa: E731
    return renumber(body), [f"!{numbers[node]} = {renumber(surface.md_nodes[node])}" for node in order]


def check(original: str, final: str, kernel: str) -> list[str]:
    """Every difference between Triton's module and ours that is not the
    instrumentation of `kernel`, one sentence each; empty when none."""
    theirs, ours = parse(original), parse(final)
    problems = []
    for what, a, b in (
        ("target data layout", theirs.line(theirs.datalayout), ours.line(ours.datalayout)),
        ("target triple", theirs.line(theirs.triple), ours.line(ours.triple)),
    ):
        if a != b:
            problems.append(f"the {what} changed from {a!r} to {b!r}")
    for name, (_, header) in theirs.headers.items():
        if name not in ours.headers:
            problems.append(f"{header.kind} of @{name} was removed or renamed")
            continue
        _, mine = ours.headers[name]
        skip = len(header.params) - 1 if name == kernel and header.kind == "define" else None
        before, after = header.resolved(theirs.groups, skip), mine.resolved(ours.groups, skip)
        if before != after:
            problems.append(f"the {header.kind} of @{name} changed from '{before}' to '{after}'")
        elif skip is not None and not _only_drops_attributes(header.params[-1], mine.params[-1]):
            problems.append(
                f"the profile_scratch parameter of @{name} changed from '{header.params[-1]}' to '{mine.params[-1]}'"
            )
    for name in theirs.headers.keys() & ours.headers.keys():
        before = _md_kinds(theirs, theirs.lines[theirs.headers[name][0]])
        after = _md_kinds(ours, ours.lines[ours.headers[name][0]])
        if before != after:
            problems.append(f"the metadata of @{name} changed from {before} to {after}")
    for name, (_, header) in ours.headers.items():
        if name not in theirs.headers and not (header.kind == "declare" and _OWN_INTRINSICS.match(name)):
            problems.append(f"{header.kind} of @{name} was added")
    for name, index in theirs.globals.items():
        mine = ours.line(ours.globals.get(name))
        if mine is None or _without_metadata_refs(mine) != _without_metadata_refs(theirs.lines[index]):
            problems.append(f"global @{name} changed or was removed")
    for name in ours.globals.keys() - theirs.globals.keys() - _OWN_GLOBALS:
        problems.append(f"global @{name} was added")
    for function, calls in theirs.callees.items():
        now = ours.callees.get(function, Counter())
        for callee, count in (calls - now).items():
            problems.append(f"{count} call(s) to @{callee} in @{function} were removed or retargeted")
        for callee, count in (now - calls).items():
            if not _OWN_INTRINSICS.match(callee):
                problems.append(f"{count} call(s) to @{callee} were added to @{function}")
    before, after = _named_md(theirs), _named_md(ours)
    for name in sorted(before.keys() | after.keys()):
        if before.get(name) != after.get(name):
            problems.append(f"named metadata !{name} changed")
    return problems


def _value_name(param: str) -> tuple[str, str]:
    """(parameter without its value name, the value name or "")."""
    head, _, last = param.rpartition(" ")
    return (head, last) if head and last.startswith("%") else (param, "")


def _with_value_name(theirs: str, ours: str) -> str:
    head, _ = _value_name(theirs)
    _, name = _value_name(ours)
    return f"{head} {name}" if name else head


def _only_drops_attributes(before: str, after: str) -> bool:
    """`after` is `before` without some attribute words (value names aside)."""
    words_before, words_after = _value_name(before)[0].split(), _value_name(after)[0].split()
    remaining = iter(words_before)
    return all(any(w == v for v in remaining) for w in words_after)
