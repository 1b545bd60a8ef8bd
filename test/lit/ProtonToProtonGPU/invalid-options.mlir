// Option errors, one option set per part (split-file keeps line numbers).
// RUN: split-file %s %t
// RUN: proton-opt %t/warp-group.mlir --convert-proton-to-protongpu="granularity=warp_group num-warps=6" -verify-diagnostics
// RUN: proton-opt %t/warp-group-attr.mlir --convert-proton-to-protongpu="granularity=warp_group" -verify-diagnostics
// RUN: proton-opt %t/sample-range.mlir --convert-proton-to-protongpu="sampling-strategy=selective sampling-options=1,4" -verify-diagnostics
// RUN: proton-opt %t/sample-group-range.mlir --convert-proton-to-protongpu="granularity=warp_group num-warps=8 sampling-strategy=selective sampling-options=2" -verify-diagnostics
// RUN: proton-opt %t/sample-negative.mlir --convert-proton-to-protongpu="sampling-strategy=selective sampling-options=-1" -verify-diagnostics
// RUN: proton-opt %t/sample-twice.mlir --convert-proton-to-protongpu="sampling-strategy=selective sampling-options=2,0,2" -verify-diagnostics
// RUN: proton-opt %t/sample-missing.mlir --convert-proton-to-protongpu="sampling-strategy=selective" -verify-diagnostics
// RUN: proton-opt %t/sample-cta.mlir --convert-proton-to-protongpu="granularity=cta sampling-strategy=selective sampling-options=0" -verify-diagnostics
// RUN: proton-opt %t/sample-none.mlir --convert-proton-to-protongpu="sampling-options=1" -verify-diagnostics
// RUN: proton-opt %t/sample-unknown.mlir --convert-proton-to-protongpu="sampling-strategy=random" -verify-diagnostics
// RUN: proton-opt %t/clock-bits.mlir --convert-proton-to-protongpu="clock-bits=16" -verify-diagnostics
// RUN: proton-opt %t/threads-per-warp.mlir --convert-proton-to-protongpu="threads-per-warp=48" -verify-diagnostics
// RUN: proton-opt %t/too-large.mlir --convert-proton-to-protongpu="buffer-size=1048576" -verify-diagnostics
// RUN: proton-opt %t/too-large-offset.mlir --convert-proton-to-protongpu="buffer-size=4096 shared-offset=229000" -verify-diagnostics
// RUN: proton-opt %t/no-spare.mlir --convert-proton-to-protongpu="buffer-type=shared shared-offset=232440" -verify-diagnostics
// With buffer-type=auto the same kernel keeps its records in registers.
// RUN: proton-opt %t/no-spare.mlir --convert-proton-to-protongpu="shared-offset=232440" | FileCheck %s --check-prefix=AUTO
// AUTO: proton_gpu.init_segment %arg0 <registers, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 32, shared_offset 232448>
// RUN: proton-opt %t/small-limit.mlir --convert-proton-to-protongpu="buffer-type=shared shared-limit=63" -verify-diagnostics
// RUN: proton-opt %t/global-too-small.mlir --convert-proton-to-protongpu="buffer-type=global buffer-size=32" -verify-diagnostics
// RUN: proton-opt %t/registers-loop.mlir --convert-proton-to-protongpu="buffer-type=registers" -verify-diagnostics
// RUN: proton-opt %t/registers-size.mlir --convert-proton-to-protongpu="buffer-type=registers buffer-size=256" -verify-diagnostics
// RUN: proton-opt %t/registers-full.mlir --convert-proton-to-protongpu="buffer-type=registers" -verify-diagnostics
// RUN: proton-opt %t/registers-full.mlir --convert-proton-to-protongpu="buffer-type=registers clock-bits=32" -verify-diagnostics
// RUN: not proton-opt %t/bad-enum.mlir --convert-proton-to-protongpu="granularity=thread" 2>&1 | FileCheck %s --check-prefix=ENUM
// ENUM: Cannot find option named 'thread'!

//--- warp-group.mlir
// expected-error @+1 {{granularity=warp_group needs a multiple of 4 warps; kernel @k has 6}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- warp-group-attr.mlir
// 96 threads: 3 warps.
// expected-error @+1 {{granularity=warp_group needs a multiple of 4 warps; kernel @k has 3}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "96"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-range.mlir
// expected-error @+1 {{sampling-options id 4 is out of range: kernel @k has 4 warps}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-group-range.mlir
// expected-error @+1 {{sampling-options id 2 is out of range: kernel @k has 2 warp groups}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-negative.mlir
// expected-error @+1 {{sampling-options id -1 is out of range: kernel @k has 4 warps}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-twice.mlir
// expected-error @+1 {{sampling-options id 2 is listed twice}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-missing.mlir
// expected-error @+1 {{sampling-strategy=selective needs the ids to record in sampling-options}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-cta.mlir
// expected-error @+1 {{sampling-strategy=selective needs granularity warp or warp_group; granularity=cta records warp 0 only}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-none.mlir
// expected-error @+1 {{sampling-options given without sampling-strategy=selective}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-unknown.mlir
// expected-error @+1 {{unknown sampling-strategy 'random'; valid: none, selective}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- clock-bits.mlir
// expected-error @+1 {{clock-bits must be 32 or 64, got 16}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- threads-per-warp.mlir
// expected-error @+1 {{threads-per-warp must be a power of two, got 48}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- too-large.mlir
// 4 segments of 256 KiB.
// expected-error @+1 {{buffer-size=1048576 does not fit: kernel @k uses 0 of 232448 bytes of shared memory; use a smaller buffer-size or buffer-type=global}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- too-large-offset.mlir
// 232448 - 229008 = 3440 bytes are left after the kernel's own shared memory.
// expected-error @+1 {{buffer-size=4096 does not fit: kernel @k uses 229000 of 232448 bytes of shared memory; use a smaller buffer-size or buffer-type=global}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- no-spare.mlir
// The offset rounds up to the limit: nothing is left.
// expected-error @+1 {{no shared memory to spare for a profile buffer: kernel @k uses 232440 of 232448 bytes and 4 recording warps need at least 256; use buffer-type=global}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- small-limit.mlir
// expected-error @+1 {{no shared memory to spare for a profile buffer: kernel @k uses 0 of 63 bytes and 4 recording warps need at least 256; use buffer-type=global}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- global-too-small.mlir
// expected-error @+1 {{buffer-size=32 gives less than 16 bytes to each of 4 recording warps}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- bad-enum.mlir
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  llvm.return
}

//--- registers-loop.mlir
// expected-error @+1 {{buffer-type=registers needs every record outside loops; kernel @k records inside a loop: use buffer-type=shared}}
llvm.func ptx_kernelcc @k(%c: i1, %arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  llvm.br ^body
^body:
  proton.record start "a"
  proton.record end "a"
  llvm.cond_br %c, ^body, ^exit
^exit:
  llvm.return
}

//--- registers-size.mlir
// expected-error @+1 {{buffer-size does not apply to buffer-type=registers: the block is sized by the kernel's record sites}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- registers-full.mlir
// 34 records of 8 bytes round up to 512 bytes: with the 48-byte header more
// than a warp's 32 lanes x 16 bytes (32 records fit), whatever the clock.
// expected-error @+1 {{buffer-type=registers holds at most 32 records per warp; kernel @k has 34 record sites: use buffer-type=shared}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "s0"
  proton.record end "s0"
  proton.record start "s1"
  proton.record end "s1"
  proton.record start "s2"
  proton.record end "s2"
  proton.record start "s3"
  proton.record end "s3"
  proton.record start "s4"
  proton.record end "s4"
  proton.record start "s5"
  proton.record end "s5"
  proton.record start "s6"
  proton.record end "s6"
  proton.record start "s7"
  proton.record end "s7"
  proton.record start "s8"
  proton.record end "s8"
  proton.record start "s9"
  proton.record end "s9"
  proton.record start "s10"
  proton.record end "s10"
  proton.record start "s11"
  proton.record end "s11"
  proton.record start "s12"
  proton.record end "s12"
  proton.record start "s13"
  proton.record end "s13"
  proton.record start "s14"
  proton.record end "s14"
  proton.record start "s15"
  proton.record end "s15"
  proton.record start "s16"
  proton.record end "s16"
  llvm.return
}
