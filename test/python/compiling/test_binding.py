"""The binding's contract: options, metadata, and errors as exceptions."""

import json
import subprocess
import sys

import pytest

from proton import _C
from proton.compiling.compiler import InstrumentationError, PipelineOptions, instrument_llvm_ir

KERNEL = """
define ptx_kernel void @k(ptr addrspace(1) %out, ptr addrspace(1) readnone captures(none) %scratch) #0 {
  %a = tail call i32 asm sideeffect "// @proton start work", "=r,r"(i32 0)
  store i32 1, ptr addrspace(1) %out, align 4
  %b = tail call i32 asm sideeffect "// @proton end work", "=r,r"(i32 0)
  ret void
}
attributes #0 = { "nvvm.reqntid"="256" }
"""


def test_instrument_returns_ir_and_metadata():
    kernel = instrument_llvm_ir(KERNEL, PipelineOptions(arch="sm_90", clock_bits=32))
    assert kernel.instrumented
    assert kernel.metadata["kernel"] == "k"
    assert kernel.metadata["scopes"] == [{"id": 0, "name": "work", "parent": -1, "loc": "", "kind": "scope"}]
    assert kernel.metadata["layout"]["num_warps"] == 8
    assert "%clock;" in kernel.llvm_ir and "@proton" not in kernel.llvm_ir
    # Writing through profile_scratch: Triton's readnone/captures(none) are gone.
    assert "readnone" not in kernel.llvm_ir.split("define")[1].split("{")[0]


def test_module_without_markers_is_returned_unchanged():
    text = KERNEL.replace("// @proton start work", "nop").replace("// @proton end work", "nop")
    kernel = instrument_llvm_ir(text)
    assert not kernel.instrumented and kernel.llvm_ir == text


def test_invalid_ir_raises_instead_of_aborting():
    with pytest.raises(InstrumentationError, match="LLVM IR parse error at line 1"):
        instrument_llvm_ir('this is not LLVM IR "// @proton start x"')
    # Without markers the text is not read at all: Triton gets it back as is.
    assert instrument_llvm_ir("this is not LLVM IR").llvm_ir == "this is not LLVM IR"


def test_unknown_pass_option_is_an_error():
    with pytest.raises(_C.CompilerError, match="no such option bogus"):
        _C.instrument(KERNEL, "bogus=1")


@pytest.mark.parametrize(
    "field,value,valid",
    [
        ("buffer_type", "texture", "auto, shared, global, registers"),
        ("granularity", "thread", "warp, warp_group, cta"),
        ("clock_bits", 16, "32, 64"),
        ("target", "spirv", "nvptx, amdgpu"),
    ],
)
def test_option_values_are_checked_with_the_valid_ones_listed(field, value, valid):
    with pytest.raises(ValueError, match=f"valid: {valid}"):
        PipelineOptions(**{field: value})


def test_no_shared_memory_to_spare():
    with pytest.raises(InstrumentationError, match="no shared memory to spare.*buffer-type=global"):
        instrument_llvm_ir(KERNEL, PipelineOptions(buffer_type="shared", shared_offset=232440, arch="sm_90"))
    # The default (auto) keeps this kernel's records in registers instead.
    kernel = instrument_llvm_ir(KERNEL, PipelineOptions(shared_offset=232440, arch="sm_90"))
    assert kernel.metadata["layout"]["buffer_type"] == "registers"
    assert kernel.metadata["layout"]["shared_bytes"] == 0 and kernel.metadata["shared_memory_total"] == 0


def test_missing_profile_scratch_parameter():
    text = KERNEL.replace(", ptr addrspace(1) readnone captures(none) %scratch", ", i32 %n")
    with pytest.raises(InstrumentationError, match="last parameter must be Triton's profile_scratch pointer"):
        instrument_llvm_ir(text)


def test_schedule_stores_moves_the_start_store_after_the_end_read():
    plain = instrument_llvm_ir(KERNEL, PipelineOptions(clock_bits=32, buffer_type="shared")).llvm_ir
    scheduled = instrument_llvm_ir(
        KERNEL, PipelineOptions(clock_bits=32, buffer_type="shared", sched_stores=True)
    ).llvm_ir

    def order(text):
        return [
            ("read" if "%clock;" in line else "store")
            for line in text.splitlines()
            if "%clock;" in line or "st.shared.v2" in line
        ]

    # NVIDIA stores a record a record late: the first store is the entry's
    # placeholder, the last the return's.
    assert order(plain) == ["read", "store", "read", "store", "store"]
    assert order(scheduled) == ["read", "read", "store", "store", "store"]


def test_string_parameter_attributes_survive_the_round_trip():
    # MLIR's import drops "nvvm.grid_constant" (TMA descriptors); losing it
    # makes NVPTX copy the descriptor to local memory, where TMA faults.
    text = KERNEL.replace(
        "define ptx_kernel void @k(ptr addrspace(1) %out,",
        'define ptx_kernel void @k(ptr addrspace(1) byval([128 x i8]) align 64 "nvvm.grid_constant" %out,',
    )
    kernel = instrument_llvm_ir(text, PipelineOptions(arch="sm_90"))
    signature = kernel.llvm_ir.split("define")[1].split("{")[0]
    first_param, second_param = signature.split(",")[:2]
    assert '"nvvm.grid_constant"' in first_param and "byval" in first_param
    assert '"nvvm.grid_constant"' not in second_param


def test_intrinsic_declarations_keep_the_input_attributes():
    # LLVM 22 re-creates intrinsic declarations with attributes Triton's own
    # LLVM cannot parse (nocreateundeforpoison): the input's attributes stay.
    text = KERNEL.replace("store i32 1,", "%m = call i32 @llvm.smin.i32(i32 1, i32 2)\n  store i32 %m,") + (
        "declare i32 @llvm.smin.i32(i32, i32) #1\n"
        "attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }\n"
    )
    kernel = instrument_llvm_ir(text, PipelineOptions(arch="sm_90"))
    assert kernel.instrumented
    assert "nocreateundeforpoison" not in kernel.llvm_ir
    declaration = [line for line in kernel.llvm_ir.splitlines() if line.startswith("declare i32 @llvm.smin.i32")]
    group = declaration[0].split("#")[-1].strip()
    attributes = [line for line in kernel.llvm_ir.splitlines() if line.startswith(f"attributes #{group} ")][0]
    assert "memory(none)" in attributes and "speculatable" in attributes


@pytest.mark.parametrize(
    "options,reason",
    [
        ("buffer-size=1099511627776", "for the --buffer-size option: '1099511627776' value invalid for uint argument"),
        ("threads-per-warp=-3", "for the --threads-per-warp option: '-3' value invalid"),
        ("sched-stores=maybe", "'maybe' is invalid value for boolean argument"),
        ("bogus=1", "no such option bogus"),
    ],
)
def test_invalid_options_name_the_option_and_why(options, reason):
    with pytest.raises(_C.CompilerError) as error:
        _C.instrument(KERNEL, options)
    assert str(error.value).startswith("invalid pipeline options: ") and reason in str(error.value)


DEBUG_INFO = """
!llvm.module.flags = !{!0}
!llvm.dbg.cu = !{!1}
!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = distinct !DICompileUnit(language: DW_LANG_C, file: !2, producer: "triton", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
!2 = !DIFile(filename: "k.py", directory: "/tmp")
!3 = distinct !DISubprogram(name: "k", linkageName: "k", scope: !2, file: !2, line: 1, type: !4, scopeLine: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !1)
!4 = !DISubroutineType(cc: DW_CC_normal, types: !5)
!5 = !{}
!6 = !DILocation(line: 2, column: 3, scope: !3)
"""


def test_a_broken_module_with_debug_info_is_an_error_not_an_abort():
    # LLVM's usual parse verifies modules with debug info and aborts the
    # process ("Broken module found"); the binding reports it instead. Run in
    # a child process so that a regression shows as a crash, not a dead suite.
    broken = KERNEL.replace(
        "store i32 1, ptr addrspace(1) %out, align 4",
        "store i32 1, ptr addrspace(1) %out, align 4, !dbg !6\n  %bad = add i32 %bad, 1",
    )
    code = (
        f"from proton.compiling.compiler import instrument_llvm_ir, InstrumentationError\n"
        f"try:\n    instrument_llvm_ir({broken + DEBUG_INFO!r})\n"
        f"except InstrumentationError as e:\n    print('refused:', str(e).splitlines()[0])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: the LLVM IR does not verify: Only PHI nodes may reference their own value" in done.stdout


def test_errors_state_the_problem_without_ir_and_are_bounded():
    # One error per unclosed scope: thousands of scopes give a bounded
    # message whose first line is the problem, with no operation dumped.
    opens = "\n".join(
        f'  %a{i} = tail call i32 asm sideeffect "// @proton start s{i}", "=r,r"(i32 0)' for i in range(3000)
    )
    text = KERNEL.replace('  %a = tail call i32 asm sideeffect "// @proton start work", "=r,r"(i32 0)', opens)
    with pytest.raises(InstrumentationError) as error:
        instrument_llvm_ir(text, PipelineOptions(arch="sm_90"))
    message = str(error.value)
    assert "error:" in message.splitlines()[0] and len(message) < 20_000
    assert "more diagnostics" in message and "llvm.func" not in message and "see current operation" not in message


def test_target_must_match_the_modules_triple():
    ptx_module = 'target triple = "nvptx64-nvidia-cuda"\n' + KERNEL
    with pytest.raises(
        InstrumentationError, match="target=amdgpu does not match the module's triple 'nvptx64-nvidia-cuda'"
    ):
        instrument_llvm_ir(ptx_module, PipelineOptions(target="amdgpu", arch="gfx942"))
    assert instrument_llvm_ir(ptx_module, PipelineOptions(arch="sm_90")).instrumented


@pytest.mark.parametrize(
    "target,arch", [("nvptx", "sm_999"), ("nvptx", "sm_90 buffer-size=8"), ("amdgpu", "sm_90"), ("nvptx", "gfx942")]
)
def test_arch_must_be_one_of_the_targets(target, arch):
    with pytest.raises(ValueError, match=f"arch '{arch}' is not a {target} architecture"):
        PipelineOptions(target=target, arch=arch)


def test_num_warps_must_match_the_declared_threads():
    # KERNEL declares 256 threads: 8 warps. 2 would record a quarter of them silently.
    with pytest.raises(
        InstrumentationError,
        match="num_warps=2 does not match the kernel, which declares 256 threads per CTA .8 warps of 32.",
    ):
        instrument_llvm_ir(KERNEL, PipelineOptions(arch="sm_90", num_warps=2))
    assert instrument_llvm_ir(KERNEL, PipelineOptions(arch="sm_90", num_warps=8)).metadata["layout"]["num_warps"] == 8


@pytest.mark.parametrize("declared", ["256,", ",", "2,,128"])
def test_an_unreadable_thread_count_is_refused(declared):
    # A mutated kernel (the LLVM IR fuzz found one): a clear refusal, not a ValueError.
    kernel = KERNEL.replace('"nvvm.reqntid"="256"', f'"nvvm.reqntid"="{declared}"')
    assert kernel != KERNEL
    with pytest.raises(InstrumentationError, match="the kernel declares an unreadable thread count"):
        instrument_llvm_ir(kernel, PipelineOptions(arch="sm_90", num_warps=8))


def test_two_kernels_with_scopes_in_one_module_are_refused():
    second = KERNEL.replace("@k(", "@k2(").replace("attributes #0", "attributes #1").replace(") #0 {", ") #1 {")
    with pytest.raises(InstrumentationError, match="kernels @k and @k2 in one module both have scopes"):
        instrument_llvm_ir(KERNEL + second, PipelineOptions(arch="sm_90"))


@pytest.mark.parametrize(
    "name,shown,byte",
    [(r"a\00b", r"a\x00b", "0x00"), (r"caf\C3\A9", r"caf\xc3\xa9", "0xc3"), (r"bad\FFname", r"bad\xffname", "0xff")],
)
def test_control_and_non_ascii_scope_names_are_named_by_byte(name, shown, byte):
    # A NUL does not cut the message; UTF-8 is neither garbled nor a
    # UnicodeDecodeError.
    text = KERNEL.replace("start work", f"start {name}").replace("end work", f"end {name}")
    with pytest.raises(InstrumentationError) as error:
        instrument_llvm_ir(text, PipelineOptions(arch="sm_90"))
    first = str(error.value).splitlines()[0]
    assert f"scope name '{shown}' contains the byte {byte}" in first and first.endswith("_-.:/[]()<>,+=#@")


# A scope in a loop: with 64-bit clocks its layout has an overhang.
LOOP_KERNEL = """
define ptx_kernel void @k(ptr addrspace(1) %out, ptr addrspace(1) readnone captures(none) %scratch) #0 {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %n, %loop ]
  %a = tail call i32 asm sideeffect "// @proton start work", "=r,r"(i32 0)
  store i32 %i, ptr addrspace(1) %out, align 4
  %b = tail call i32 asm sideeffect "// @proton end work", "=r,r"(i32 0)
  %n = add i32 %i, 1
  %c = icmp slt i32 %n, 100
  br i1 %c, label %loop, label %exit
exit:
  ret void
}
attributes #0 = { "nvvm.reqntid"="256" }
"""


@pytest.mark.parametrize(
    "kernel,options,overhang",
    [
        (KERNEL, "buffer-type=shared clock-bits=32", 0),
        (KERNEL, "buffer-type=global buffer-size=8192", 0),
        (KERNEL, "buffer-type=registers clock-bits=32", 0),
        (LOOP_KERNEL, "buffer-type=shared", 1),
        (LOOP_KERNEL, "buffer-type=global buffer-size=65536", 1),
    ],
)
def test_decoder_block_bytes_is_the_compilers(kernel, options, overhang):
    """The decoder splits a buffer into blocks with the compiler's formula:
    the size every compiled layout states, with an overhang or without."""
    from proton.recording import buffer

    layout = json.loads(_C.instrument(kernel, f"arch=sm_90 {options}")[1])["layout"]
    assert layout["overhang"] == overhang
    assert buffer.block_bytes(layout["segment_bytes"], layout["overhang"]) == layout["block_bytes"]
