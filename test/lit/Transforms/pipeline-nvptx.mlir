// RUN: proton-opt %s --proton-pipeline | FileCheck %s
// RUN: proton-opt %s --proton-pipeline="target=nvptx arch=sm_90" | FileCheck %s
// RUN: proton-opt %s --proton-pipeline="target=nvptx arch=sm_80 shared-offset=166000" | FileCheck %s --check-prefix=SM80
// RUN: proton-opt %s --proton-pipeline="target=nvptx arch=sm_80 shared-limit=232448 shared-offset=166000" | FileCheck %s --check-prefix=LIMIT
// RUN: proton-opt %s --proton-pipeline="target=nvptx arch=sm_86 shared-offset=100000" | FileCheck %s --check-prefix=SM86
// Blackwell: the datacenter parts' 227 KiB (LIMIT's layout), the consumer
// parts' 99 KiB (SM86's); "a" and "f" suffixes do not change the memory.
// RUN: proton-opt %s --proton-pipeline="target=nvptx arch=sm_100a shared-offset=166000" | FileCheck %s --check-prefix=LIMIT
// RUN: proton-opt %s --proton-pipeline="target=nvptx arch=sm_103f shared-offset=166000" | FileCheck %s --check-prefix=LIMIT
// RUN: proton-opt %s --proton-pipeline="target=nvptx arch=sm_110a shared-offset=166000" | FileCheck %s --check-prefix=LIMIT
// RUN: proton-opt %s --proton-pipeline="target=nvptx arch=sm_120 shared-offset=100000" | FileCheck %s --check-prefix=SM86
// RUN: proton-opt %s --proton-pipeline="target=nvptx arch=sm_120a shared-offset=100000" | FileCheck %s --check-prefix=SM86
// RUN: proton-opt %s --proton-pipeline="target=nvptx arch=sm_121f shared-offset=100000" | FileCheck %s --check-prefix=SM86
// RUN: not proton-opt %s --proton-pipeline="target=nvptx arch=sm_121a shared-offset=101000 buffer-type=shared" 2>&1 | FileCheck %s --check-prefix=SM121-FULL
// RUN: proton-opt %s --proton-pipeline="sched-stores=true clock-bits=32" | FileCheck %s --check-prefix=SCHED
// RUN: proton-opt %s --proton-pipeline="buffer-type=global granularity=warp_group" | FileCheck %s --check-prefix=GLOBAL
// RUN: proton-opt %s --proton-pipeline="sched-barriers=true" | FileCheck %s --check-prefix=NO-ROCDL

// From inline-asm markers to NVPTX code in one pass: the two per-thread
// copies of each marker become one scope, the 256-thread CTA has 8 warps.
// The records sit in a loop: inferred sizes take 2-4 KiB per warp (what
// keeps the CTAs per SM) or what the architecture's shared memory leaves.
// CHECK:       llvm.mlir.global external @global_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func ptx_kernelcc @k
// CHECK-SAME:    (%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>)
// CHECK-SAME:    proton.layout = #proton_gpu.layout<shared, warp, clock 64, num_warps 8, warps[0, 1, 2, 3, 4, 5, 6, 7], segment_bytes 2048, shared_offset 0, overhang 1>
// CHECK-SAME:    proton.scopes = {{\[}}#proton_gpu.scope_entry<id = 0, kind = scope, name = "load", parent = -1, loc = "kernel.py:5:9">]
// CHECK-NOT:     // @proton
// CHECK-NOT:     proton.record
// CHECK-NOT:     proton_gpu.
// Entry stamps in shared memory, then the two 8-byte records around the
// load.
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %globaltimer;"
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %clock64;"
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att "@$5 st.shared.v4.b32
// CHECK:         %[[START:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %clock64;", "=l"  : () -> i64
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.shared.v2.b32
// CHECK-NOT:     %clock
// CHECK:         %[[V:.+]] = llvm.load %arg0 : !llvm.ptr<1> -> i32
// CHECK-NEXT:    %[[END:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u64 $0, %clock64;", "=l"  : () -> i64
// CHECK:         llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.shared.v2.b32
// CHECK-NOT:     %clock64
// CHECK:         llvm.store %[[V]], %arg0 : i32, !llvm.ptr<1>
// CHECK:         "mov.u32 $0, %smid;"
// CHECK:         "bar.warp.sync 0xffffffff;"
// CHECK:         llvm.return
// The function without markers is left alone.
// CHECK-LABEL: llvm.func ptx_kernelcc @no_markers
// CHECK-SAME:    (%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone})
// CHECK-NOT:     proton
// CHECK-NEXT:    llvm.return

// sm_80 leaves 166912 - 166000 = 912 bytes: 114 per warp. A 64-byte
// segment's block (48-byte header, padded to whole 32-byte sectors) is 128:
// too large; a 32-byte segment's is 96.
// SM80:        proton.layout = #proton_gpu.layout<shared, warp, clock 64, num_warps 8, warps[0, 1, 2, 3, 4, 5, 6, 7], segment_bytes 32, shared_offset 166000, overhang 1>
// An explicit shared-limit wins over the arch's.
// LIMIT:       proton.layout = #proton_gpu.layout<shared, warp, clock 64, num_warps 8, warps[0, 1, 2, 3, 4, 5, 6, 7], segment_bytes 4096, shared_offset 166000, overhang 1>
// sm_86 leaves 101376 - 100000 = 1376 bytes: 172 per warp: a 64-byte
// segment's 128-byte block fits.
// SM86:        proton.layout = #proton_gpu.layout<shared, warp, clock 64, num_warps 8, warps[0, 1, 2, 3, 4, 5, 6, 7], segment_bytes 64, shared_offset 100000, overhang 1>
// sm_121 leaves 101376 - 101008 (the offset aligned to 16) = 368 bytes: not
// the 8 x 64 (16-byte segments after 48-byte headers) that 8 warps need at
// the least.
// SM121-FULL:  error: no shared memory to spare for a profile buffer: kernel @k uses 101000 of 101376 bytes and 8 recording warps need at least 512; use buffer-type=global

// With sched-stores, both 32-bit reads come before both stores: the
// measured window holds the kernel's load only.
// SCHED-LABEL: llvm.func ptx_kernelcc @k
// SCHED-SAME:    clock 32
// SCHED:         %[[START:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %clock;", "=r"  : () -> i32
// SCHED-NEXT:    %[[V:.+]] = llvm.load %arg0 : !llvm.ptr<1> -> i32
// SCHED-NEXT:    %[[END:.+]] = llvm.inline_asm has_side_effects asm_dialect = att "mov.u32 $0, %clock;", "=r"  : () -> i32
// A record is stored a record late: after both reads, the store pending
// from before them, then START's; END's at the return.
// SCHED-NOT:     llvm.inline_asm
// SCHED:         llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.shared.v2.b32 [$0], {$1, $2};"
// SCHED-NOT:     llvm.inline_asm
// SCHED:         llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.shared.v2.b32 [$0], {$1, $2};", "r,r,r,b" %{{.+}}, %[[START]], %{{.+}}, %{{.+}}
// SCHED:         llvm.store %[[V]], %arg0
// SCHED:         llvm.inline_asm has_side_effects asm_dialect = att "@$3 st.shared.v2.b32 [$0], {$1, $2};", "r,r,r,b" %{{.+}}, %[[END]], %{{.+}}, %{{.+}}

// GLOBAL-NOT:  @global_smem
// GLOBAL:      proton.layout = #proton_gpu.layout<global, warp_group, clock 64, num_warps 8, warps[0, 4], segment_bytes 4096, shared_offset 0, overhang 1>
// GLOBAL-NOT:  st.shared
// GLOBAL-NOT:  bar.warp.sync
// GLOBAL:      llvm.func ptx_kernelcc @no_markers

// Scheduling barriers are for AMDGPU only, whatever sched-barriers says.
// NO-ROCDL:     llvm.func ptx_kernelcc @k
// NO-ROCDL-NOT: rocdl.
// NO-ROCDL:     llvm.func ptx_kernelcc @no_markers
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) attributes {passthrough = [["nvvm.reqntid", "256"]]} {
  llvm.br ^loop
^loop:
  %0 = llvm.inline_asm has_side_effects "// @proton start load", "=r" : () -> i32 loc("kernel.py":5:9)
  %1 = llvm.inline_asm has_side_effects "// @proton start load", "=r" : () -> i32 loc("kernel.py":5:9)
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  %2 = llvm.inline_asm has_side_effects "// @proton end load", "=r" : () -> i32
  %3 = llvm.inline_asm has_side_effects "// @proton end load", "=r" : () -> i32
  llvm.store %v, %arg0 : i32, !llvm.ptr<1>
  %zero = llvm.mlir.constant(0 : i32) : i32
  %again = llvm.icmp "ne" %v, %zero : i32
  llvm.cond_br %again, ^loop, ^exit
^exit:
  llvm.return
}
llvm.func ptx_kernelcc @no_markers(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) attributes {passthrough = [["nvvm.reqntid", "256"]]} {
  llvm.return
}
