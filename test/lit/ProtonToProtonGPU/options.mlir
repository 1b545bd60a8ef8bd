// Each RUN line sets one group of options on the same 4-warp kernel. Its
// records sit in a loop, so inferred sizes take the default cap (see
// inferred-size.mlir for kernels whose record count is bounded).
// RUN: proton-opt %s --convert-proton-to-protongpu | FileCheck %s --check-prefix=DEFAULT
// RUN: proton-opt %s --convert-proton-to-protongpu="buffer-type=global" | FileCheck %s --check-prefix=GLOBAL
// RUN: proton-opt %s --convert-proton-to-protongpu="buffer-type=global buffer-size=1024" | FileCheck %s --check-prefix=GLOBAL-SIZE
// RUN: proton-opt %s --convert-proton-to-protongpu="buffer-type=shared buffer-size=2048" | FileCheck %s --check-prefix=SHARED-SIZE
// RUN: proton-opt %s --convert-proton-to-protongpu="buffer-size=3000" | FileCheck %s --check-prefix=ROUNDED
// RUN: proton-opt %s --convert-proton-to-protongpu="buffer-size=8192" | FileCheck %s --check-prefix=LARGE
// RUN: proton-opt %s --convert-proton-to-protongpu="granularity=warp_group num-warps=8" | FileCheck %s --check-prefix=GROUP
// RUN: proton-opt %s --convert-proton-to-protongpu="granularity=cta" | FileCheck %s --check-prefix=CTA
// RUN: proton-opt %s --convert-proton-to-protongpu="granularity=cta num-warps=8" | FileCheck %s --check-prefix=CTA8
// RUN: proton-opt %s --convert-proton-to-protongpu="sampling-strategy=selective sampling-options=3,1" | FileCheck %s --check-prefix=SELECT
// RUN: proton-opt %s --convert-proton-to-protongpu="granularity=warp_group num-warps=16 sampling-strategy=selective sampling-options=2,0" | FileCheck %s --check-prefix=SELECT-GROUP
// RUN: proton-opt %s --convert-proton-to-protongpu="clock-bits=32" | FileCheck %s --check-prefix=CLK32
// RUN: proton-opt %s --convert-proton-to-protongpu="clock-bits=64" | FileCheck %s --check-prefix=DEFAULT
// RUN: proton-opt %s --convert-proton-to-protongpu="num-warps=2" | FileCheck %s --check-prefix=WARPS
// RUN: proton-opt %s --convert-proton-to-protongpu="threads-per-warp=64" | FileCheck %s --check-prefix=WAVE64
// RUN: proton-opt %s --convert-proton-to-protongpu="shared-offset=100" | FileCheck %s --check-prefix=OFFSET
// RUN: proton-opt %s --convert-proton-to-protongpu="shared-offset=231000" | FileCheck %s --check-prefix=TIGHT
// RUN: proton-opt %s --convert-proton-to-protongpu="shared-limit=2048" | FileCheck %s --check-prefix=LIMIT
// RUN: proton-opt %s --convert-proton-to-protongpu="buffer-type=global shared-offset=232448 buffer-size=64" | FileCheck %s --check-prefix=GLOBAL-NO-SMEM
// With buffer-type=auto, a kernel that leaves no shared memory records to global memory.
// RUN: proton-opt %s --convert-proton-to-protongpu="shared-offset=232440" | FileCheck %s --check-prefix=AUTO-NO-SMEM
// AUTO-NO-SMEM:   proton_gpu.init_segment %arg1 <global, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 4096, shared_offset 232448, overhang 1>

// DEFAULT:        proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 2048, shared_offset 0, overhang 1>
// DEFAULT-COUNT-2: proton_gpu.read_counter : i64
// GLOBAL:         proton_gpu.init_segment %arg1 <global, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 4096, shared_offset 0, overhang 1>
// GLOBAL-SIZE:    proton_gpu.init_segment %arg1 <global, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 256, shared_offset 0, overhang 1>
// SHARED-SIZE:    proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 512, shared_offset 0, overhang 1>
// 3000 bytes over 4 segments: 750 each, rounded down to a power of two.
// ROUNDED:        proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 512, shared_offset 0, overhang 1>
// An explicit size may exceed the 1 KiB per segment of the inferred one.
// LARGE:          proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 2048, shared_offset 0, overhang 1>
// GROUP:          proton_gpu.init_segment %arg1 <shared, warp_group, clock 64, num_warps 8, warps[0, 4], segment_bytes 4096, shared_offset 0, overhang 1>
// CTA:            proton_gpu.init_segment %arg1 <shared, cta, clock 64, num_warps 4, warps[0], segment_bytes 4096, shared_offset 0, overhang 1>
// CTA8:           proton_gpu.init_segment %arg1 <shared, cta, clock 64, num_warps 8, warps[0], segment_bytes 4096, shared_offset 0, overhang 1>
// The ids are sorted into segment order.
// SELECT:         proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[1, 3], segment_bytes 4096, shared_offset 0, overhang 1>
// Warp-group ids select the first warp of each group.
// SELECT-GROUP:   proton_gpu.init_segment %arg1 <shared, warp_group, clock 64, num_warps 16, warps[0, 8], segment_bytes 4096, shared_offset 0, overhang 1>
// CLK32:          %[[SEG:.+]] = proton_gpu.init_segment %arg1 <shared, warp, clock 32, num_warps 4, warps[0, 1, 2, 3], segment_bytes 2048, shared_offset 0>
// CLK32:          llvm.br ^[[LOOP:.+]]
// CLK32-NEXT:   ^[[LOOP]]:
// CLK32-NEXT:     %[[C0:.+]] = proton_gpu.read_counter : i32
// CLK32-NEXT:     proton_gpu.circular_store start %[[SEG]], %[[C0]] scope 0 : i32
// CLK32-NEXT:     llvm.load
// CLK32-NEXT:     %[[C1:.+]] = proton_gpu.read_counter : i32
// CLK32-NEXT:     proton_gpu.circular_store end %[[SEG]], %[[C1]] scope 0 : i32
// An explicit num-warps wins over the kernel's attribute.
// WARPS:          proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 2, warps[0, 1], segment_bytes 2048, shared_offset 0, overhang 1>
// WAVE64:         proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 2, warps[0, 1], segment_bytes 4096, shared_offset 0, overhang 1>
// The buffer goes after the kernel's own shared memory, 16-byte aligned.
// OFFSET:         proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 2048, shared_offset 112, overhang 1>
// 232448 - 231008 = 1440 bytes left: 360 per segment, less its 64-byte
// header, rounded down to 256.
// TIGHT:          proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 256, shared_offset 231008, overhang 1>
// 2048 bytes: 512 per warp, less its 64-byte header, rounded down to 256.
// LIMIT:          proton_gpu.init_segment %arg1 <shared, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 256, shared_offset 0, overhang 1>
// A global buffer needs no shared memory.
// GLOBAL-NO-SMEM: proton_gpu.init_segment %arg1 <global, warp, clock 64, num_warps 4, warps[0, 1, 2, 3], segment_bytes 16, shared_offset 232448, overhang 1>
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  llvm.br ^loop
^loop:
  proton.record start "load"
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  proton.record end "load"
  llvm.store %v, %arg0 : i32, !llvm.ptr<1>
  %zero = llvm.mlir.constant(0 : i32) : i32
  %again = llvm.icmp "ne" %v, %zero : i32
  llvm.cond_br %again, ^loop, ^exit
^exit:
  llvm.return
}
