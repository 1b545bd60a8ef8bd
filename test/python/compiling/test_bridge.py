"""The LLVM IR bridge changes nothing of Triton's module that it did not
instrument: what our LLVM would rename or rewrite is hidden from it or
restored, and any other difference refuses the kernel with a clear error."""

import re
from collections import Counter

import pytest

from proton import _C
from proton.compiling import bridge, compiler
from proton.compiling.compiler import InstrumentationError, PipelineOptions, instrument_llvm_ir

from ir_mutations import mutations

# Triton 3.6 writes `llvm.nvvm.ex2.approx.f`; LLVM 22.1.8 upgrades it to
# `.f32`, which Triton 3.6's LLVM does not know (an external call in PTX).
EXP_KERNEL = """\
target datalayout = "e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@global_smem = external addrspace(3) global [0 x i8], align 16

define ptx_kernel void @k(ptr addrspace(1) %out, float %x, ptr addrspace(1) readnone captures(none) %scratch) local_unnamed_addr #0 {
  %a = tail call i32 asm sideeffect "// @proton start work", "=r,r"(i32 0) #4
  %tid = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %e = tail call float @llvm.nvvm.ex2.approx.f(float %x)
  %f = tail call float @llvm.nvvm.ex2.approx.ftz.f(float %e)
  tail call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %p = getelementptr float, ptr addrspace(1) %out, i32 %tid
  store float %f, ptr addrspace(1) %p, align 4
  %b = tail call i32 asm sideeffect "// @proton end work", "=r,r"(i32 0) #4
  ret void
}

declare noundef range(i32 0, 1024) i32 @llvm.nvvm.read.ptx.sreg.tid.x() #1
declare !dbg !1 i32 @vprintf(ptr, ptr) local_unnamed_addr
declare float @llvm.nvvm.ex2.approx.f(float) #2
declare float @llvm.nvvm.ex2.approx.ftz.f(float) #2
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 immarg) #3

attributes #0 = { nounwind "nvvm.reqntid"="128" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { mustprogress nocallback nofree nosync nounwind willreturn memory(none) }
attributes #3 = { convergent nocallback nounwind }
attributes #4 = { nounwind }

!llvm.module.flags = !{!0}
!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !DISubprogram(name: "vprintf", linkageName: "vprintf", scope: !2, file: !2, spFlags: DISPFlagOptimized)
!2 = !DIFile(filename: "printf.h", directory: "")
"""

OPTIONS = PipelineOptions(arch="sm_90", num_warps=4)


def declarations(text):
    return sorted(line for line in text.splitlines() if line.startswith("declare"))


def group_of(text, name):
    """The attribute group body of the declaration of @name."""
    line = next(line for line in text.splitlines() if line.startswith("declare") and f"@{name}(" in line)
    number = re.search(r"#(\d+)\s*$", line).group(1)
    return re.search(rf"^attributes #{number} = (.*)$", text, re.M).group(1)


def test_triton_declarations_come_back_exactly():
    kernel = instrument_llvm_ir(EXP_KERNEL, OPTIONS)
    assert kernel.instrumented and "%clock64" in kernel.llvm_ir
    out = kernel.llvm_ir
    # Every declaration Triton wrote comes back word for word (immarg and the
    # old intrinsic names included), with its attribute group's exact text.
    for line in declarations(EXP_KERNEL):
        assert line.rsplit("#", 1)[0] in [d.rsplit("#", 1)[0] for d in declarations(out)]
    for name in (
        "llvm.nvvm.ex2.approx.f",
        "llvm.nvvm.ex2.approx.ftz.f",
        "llvm.nvvm.read.ptx.sreg.tid.x",
        "llvm.nvvm.barrier.cta.sync.aligned.all",
    ):
        assert group_of(out, name) == group_of(EXP_KERNEL, name)
    assert "ex2.approx.f32" not in out and "ftz.f32" not in out
    assert out.count("call float @llvm.nvvm.ex2.approx.f(") == 1
    # Our lowering reads tid.x too: one declaration, Triton's.
    assert sum("@llvm.nvvm.read.ptx.sreg.tid.x()" in d for d in declarations(out)) == 1
    assert _C.HIDDEN_INTRINSIC_PREFIX not in out
    # Triton's triple, data layout and global, as written.
    for line in EXP_KERNEL.splitlines()[:4]:
        assert line in out.splitlines()
    # The kernel's header is Triton's but for the profile_scratch parameter,
    # which the instrumentation writes through.
    header = next(line for line in out.splitlines() if line.startswith("define"))
    assert header.startswith(
        "define ptx_kernel void @k(ptr addrspace(1) %0, float %1, ptr addrspace(1) %2) local_unnamed_addr #"
    )
    assert bridge.check(EXP_KERNEL, out, "k") == []
    # A declaration's debug info (Triton 3.9's vprintf) names our node.
    vprintf = next(line for line in out.splitlines() if "@vprintf(" in line)
    node = re.match(r"declare !dbg !(\d+) i32 @vprintf\(ptr, ptr\) local_unnamed_addr$", vprintf).group(1)
    assert re.search(rf"^!{node} = !DISubprogram\(name: \"vprintf\"", out, re.M)


def test_a_renamed_intrinsic_is_refused_with_a_clear_error(monkeypatch):
    # Without hiding, our LLVM upgrades the ex2 intrinsics: the check catches
    # the rename before Triton's ptxas would ("Parsing error near '.nvvm'").
    monkeypatch.setattr(bridge, "hide_intrinsics", lambda text, prefix: text)
    with pytest.raises(InstrumentationError) as error:
        instrument_llvm_ir(EXP_KERNEL, OPTIONS)
    message = str(error.value)
    first = message.splitlines()[0]
    assert first.startswith("kernel k: Proton's LLVM IR bridge would change more than the instrumentation")
    assert f"Proton's LLVM {_C.LLVM_VERSION}" in first and "Triton 3." in first
    assert "declare of @llvm.nvvm.ex2.approx.f was removed or renamed" in message
    assert "call(s) to @llvm.nvvm.ex2.approx.f in @k were removed or retargeted" in message
    assert "declare of @llvm.nvvm.ex2.approx.f32 was added" in message


def test_llvm_version_is_the_pinned_one():
    assert _C.LLVM_VERSION == "22.1.8"


def test_hiding_renames_intrinsics_only():
    hidden = bridge.hide_intrinsics(EXP_KERNEL, "__h.")
    assert "@__h.llvm.nvvm.ex2.approx.f(float %x)" in hidden
    assert "declare float @__h.llvm.nvvm.ex2.approx.ftz.f(float) #2" in hidden
    # immarg is only valid on intrinsics; restore brings Triton's line back.
    assert "declare void @__h.llvm.nvvm.barrier.cta.sync.aligned.all(i32) #3" in hidden
    assert "@k(" in hidden and "@global_smem" in hidden and "@proton start" in hidden
    # Intrinsics over metadata or tokens cannot be plain functions: not hidden.
    text = "declare i32 @llvm.read_register.i32(metadata)\ndeclare token @llvm.experimental.convergence.entry()\n"
    assert bridge.hide_intrinsics(text, "__h.") == text


def mutate(text, old, new):
    assert old in text, old
    return text.replace(old, new)


@pytest.mark.parametrize(
    "old,new,problem",
    [
        (
            'target triple = "nvptx64-nvidia-cuda"',
            'target triple = "nvptx64-nvidia-cudax"',
            "the target triple changed",
        ),
        ('-n16:32:64"', '-n16:32"', "the target data layout changed"),
        (
            "declare float @llvm.nvvm.ex2.approx.f(float) #2",
            "declare float @llvm.nvvm.ex2.approx.f(float noundef) #2",
            "the declare of @llvm.nvvm.ex2.approx.f changed",
        ),
        (
            "attributes #3 = { convergent nocallback nounwind }",
            "attributes #3 = { nocallback nounwind }",
            "the declare of @llvm.nvvm.barrier.cta.sync.aligned.all changed",
        ),
        ("local_unnamed_addr #0 {", "#0 {", "the define of @k changed"),
        ("float %x, ptr", "float noundef %x, ptr", "the define of @k changed"),
        ("ptr addrspace(1) readnone captures(none) %scratch", "ptr addrspace(4) %scratch", "profile_scratch parameter"),
        (
            "@global_smem = external addrspace(3) global [0 x i8], align 16",
            "@global_smem = external addrspace(3) global [0 x i8], align 8",
            "global @global_smem changed",
        ),
        (
            "call float @llvm.nvvm.ex2.approx.ftz.f(",
            "call float @llvm.nvvm.ex2.approx.f(",
            "call(s) to @llvm.nvvm.ex2.approx.ftz.f in @k were removed or retargeted",
        ),
        ("  ret void", "  call void @vprintf()\n  ret void", "call(s) to @vprintf were added to @k"),
        (
            "declare float @llvm.nvvm.ex2.approx.f(float) #2",
            "declare float @llvm.nvvm.ex2.approx.f(float) #2\ndeclare float @llvm.nvvm.lg2.approx.f(float) #2",
            "declare of @llvm.nvvm.lg2.approx.f was added",
        ),
        (
            "!0 = !{i32 2, !\"Debug Info Version\", i32 3}",
            "!0 = !{i32 2, !\"Debug Info Version\", i32 4}",
            "named metadata !llvm.module.flags changed",
        ),
    ],
)
def test_check_names_each_kind_of_change(old, new, problem):
    problems = bridge.check(EXP_KERNEL, mutate(EXP_KERNEL, old, new), "k")
    assert any(problem in p for p in problems), problems


def test_check_allows_exactly_the_instrumentation():
    # Our lowering's intrinsics, calls to them, and dropping attributes of
    # profile_scratch are the instrumentation; nothing else is.
    text = mutate(EXP_KERNEL, "readnone captures(none) %scratch", "%scratch")
    text = mutate(text, "  ret void", "  %c = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n  ret void")
    text += "declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()\n"
    assert bridge.check(EXP_KERNEL, text, "k") == []
    assert bridge.check(EXP_KERNEL, text, "other") != []


def test_restore_renumbers_nothing_it_does_not_own():
    # Triton's attribute groups are appended under fresh numbers, so ours
    # (used by our call sites) keep theirs.
    ours = mutate(EXP_KERNEL, "attributes #4 = { nounwind }", "attributes #4 = { nounwind }\nattributes #9 = { cold }")
    ours = mutate(
        ours, "declare float @llvm.nvvm.ex2.approx.f(float) #2", "declare float @llvm.nvvm.ex2.approx.f(float) #9"
    )
    restored = bridge.restore(EXP_KERNEL, ours, "k")
    assert "attributes #9 = { cold }" in restored
    assert group_of(restored, "llvm.nvvm.ex2.approx.f") == group_of(EXP_KERNEL, "llvm.nvvm.ex2.approx.f")
    assert bridge.check(EXP_KERNEL, restored, "k") == []


def test_bridge_error_lists_a_bounded_number_of_problems():
    message = compiler._bridge_error("k", [f"problem {i}" for i in range(30)])
    assert "problem 7" in message and "problem 8" not in message and "and 22 more" in message


@pytest.mark.parametrize(
    "new,legacy",
    [
        # LLVM 24 (Triton 3.9) prints float bits as f0x...; LLVM 22 reads a float
        # as the bits of the same value as a double.
        ("fmul <8 x float> %0, splat (float f0x3FB8AA3B)", "fmul <8 x float> %0, splat (float 0x3FF7154760000000)"),
        ("fadd float %a, f0x3F800000", "fadd float %a, 0x3FF0000000000000"),
        ("fadd double %a, f0x3FF0000000000000", "fadd double %a, 0x3FF0000000000000"),
        ("fadd half %a, f0x3C00", "fadd half %a, 0xH3C00"),
        ("select i1 %c, bfloat %a, bfloat f0x3F80", "select i1 %c, bfloat %a, bfloat 0xR3F80"),
        ("fcmp olt double %x, -inf", "fcmp olt double %x, 0xFFF0000000000000"),
        ("fcmp olt float %x, +inf", "fcmp olt float %x, 0x7FF0000000000000"),
        ("store half +qnan, ptr %p", "store half 0xH7E00, ptr %p"),
        ("fadd float %x, +nan(0x1)", "fadd float %x, 0x7FF8000020000000"),
        ("fadd float %x, -snan(0x5)", "fadd float %x, 0xFFF00000A0000000"),
        ("fmul float %x, 0x1.8p3", "fmul float %x, 0x4028000000000000"),
        ("fmul half %x, -0x1p-2", "fmul half %x, 0xHB400"),
        # Untouched: legacy literals, strings, names.
        ("fadd float %x, 0x3FF0000000000000", "fadd float %x, 0x3FF0000000000000"),
        ('call void asm "add.f32 $0, +inf; f0x12", ""()', 'call void asm "add.f32 $0, +inf; f0x12", ""()'),
        ("br label %bb.inf", "br label %bb.inf"),
    ],
)
def test_newer_float_literals_are_spelled_for_our_llvm(new, legacy):
    assert bridge.legacy_float_literals(new) == legacy


@pytest.mark.parametrize(
    "text,problem",
    [
        ("store i32 f0x3F800000, ptr %p", "cannot tell the type"),
        ("fadd half %x, f0x3F800000", "does not fit a half"),
        ("fmul float %x, 0x1.0000000001p0", "not exactly a float"),
        ("fmul float %x, 1.0e+39", "out of range"),
        ("fmul double %x, 0x1p99999", "out of range"),
        ("fmul half %x, 1.0e+06", "out of range"),
    ],
)
def test_untranslatable_float_literals_are_refused(text, problem):
    with pytest.raises(bridge.LiteralError, match=problem):
        bridge.legacy_float_literals(text)


def test_llvm24_module_is_instrumented_and_keeps_triton_text():
    text = EXP_KERNEL.replace(
        "%f = tail call float @llvm.nvvm.ex2.approx.ftz.f(float %e)",
        "%s = fmul float %e, f0x3FB8AA3B\n  %f = tail call float @llvm.nvvm.ex2.approx.ftz.f(float %s)",
    )
    kernel = instrument_llvm_ir(text, OPTIONS)
    assert "fmul float %" in kernel.llvm_ir and "0x3FF7154760000000" in kernel.llvm_ir
    assert bridge.check(text, kernel.llvm_ir, "k") == []


@pytest.mark.parametrize(
    "new,legacy",
    [
        # LLVM 23+ prints the shortest decimal that reads back as the same float;
        # LLVM 22 wants a float's decimal to be exact, so it gets the bits.
        ("fmul float %x, 1.442695e+00", "fmul float %x, 0x3FF7154760000000"),
        ("fmul float %x, 1.000000e+00", "fmul float %x, 0x3FF0000000000000"),
        ("fmul float %x, -3.140000e+00", "fmul float %x, 0xC0091EB860000000"),
        ("fmul half %x, 1.000000e-01", "fmul half %x, 0xH2E66"),
        ("fmul bfloat %x, 1.000000e-01", "fmul bfloat %x, 0xR3DCD"),
        ("fmul double %x, 1.000000e-01", "fmul double %x, 1.000000e-01"),
        (
            "%r = fadd <2 x float> %v, <float 5.000000e-01, float 2.500000e-01>",
            "%r = fadd <2 x float> %v, <float 0x3FE0000000000000, float 0x3FD0000000000000>",
        ),
    ],
)
def test_shortest_decimal_floats_become_exact(new, legacy):
    assert bridge.legacy_float_literals(new) == legacy


def test_named_metadata_our_llvm_drops_is_copied_back():
    # Triton 3.9 links libdevice, which brings !nvvmir.version; MLIR's LLVM IR
    # export does not keep it.
    text = EXP_KERNEL.replace("!llvm.module.flags = !{!0}", "!llvm.module.flags = !{!0}\n!nvvmir.version = !{!9}")
    text += "!9 = !{i32 2, i32 0}\n"
    kernel = instrument_llvm_ir(text, OPTIONS)
    assert re.search(r"^!nvvmir\.version = !\{!(\d+)\}$", kernel.llvm_ir, re.M)
    number = re.search(r"^!nvvmir\.version = !\{!(\d+)\}$", kernel.llvm_ir, re.M).group(1)
    assert f"!{number} = !{{i32 2, i32 0}}" in kernel.llvm_ir
    assert bridge.check(text, kernel.llvm_ir, "k") == []


def test_check_catches_metadata_pointing_at_the_wrong_node():
    # Triton's LLVM asserts (cast<DISubprogram>) on a declaration whose !dbg
    # names another kind of node.
    wrong = EXP_KERNEL.replace("declare !dbg !1 i32 @vprintf", "declare !dbg !2 i32 @vprintf")
    problems = bridge.check(EXP_KERNEL, wrong, "k")
    assert any("the metadata of @vprintf changed from ['DISubprogram'] to ['DIFile']" in p for p in problems)


#: Tokens the bridge's text functions care about, spliced into mutated lines.
BRIDGE_TOKENS = [
    "(",
    ")",
    ",",
    "#",
    "!",
    "@",
    '"',
    "f0x",
    "+inf",
    "0x1.8p3",
    "1.5e+00",
    "declare ",
    "immarg",
    "!dbg !7",
    "#9",
    "float ",
    "half ",
    "llvm.",
    "{",
    "}",
]


def test_bridge_text_functions_fail_only_with_value_errors():
    # The bridge reads whatever Triton (or a user's override) produced: a
    # malformed module is a ValueError the compiler turns into an
    # InstrumentationError, never another exception.
    instrumented = instrument_llvm_ir(EXP_KERNEL, OPTIONS).llvm_ir
    for text in mutations(EXP_KERNEL, 400, 0, BRIDGE_TOKENS):
        for step in (
            lambda: bridge.legacy_float_literals(text),
            lambda: bridge.hide_intrinsics(text, "__h."),
            lambda: bridge.restore(text, instrumented, "k"),
            lambda: bridge.check(text, instrumented, "k"),
            lambda: bridge.restore(EXP_KERNEL, text, "k"),
            lambda: bridge.check(EXP_KERNEL, text, "k"),
        ):
            try:
                step()
            except ValueError:
                pass


def test_mutated_modules_come_back_or_are_refused():
    # End to end (without the C++ parser's aborts on broken debug info, issue
    # 17): every mutation compiles or raises InstrumentationError.
    outcomes = Counter()
    base = "\n".join(line for line in EXP_KERNEL.splitlines() if not line.startswith(("!", "declare !dbg")))
    for text in mutations(base, 150, 1, BRIDGE_TOKENS):
        try:
            instrument_llvm_ir(text, OPTIONS)
            outcomes["compiled"] += 1
        except InstrumentationError:
            outcomes["refused"] += 1
    assert outcomes["compiled"] and outcomes["refused"]
