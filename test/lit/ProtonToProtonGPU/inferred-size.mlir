// Inferred buffer sizes shrink to the records a warp can write when no
// record sits on a CFG cycle: the next power of two of records x record
// bytes, at least 32 bytes (one memory sector).
// RUN: proton-opt %s --split-input-file --convert-proton-to-protongpu | FileCheck %s
// RUN: proton-opt %s --split-input-file --convert-proton-to-protongpu="clock-bits=32" | FileCheck %s --check-prefix=CLK32
// RUN: proton-opt %s --split-input-file --convert-proton-to-protongpu="buffer-type=global" | FileCheck %s --check-prefix=GLOBAL
// RUN: proton-opt %s --split-input-file --convert-proton-to-protongpu="buffer-type=registers" -verify-diagnostics | FileCheck %s --check-prefix=REGISTERS

// Three scopes, six 8-byte records: 48 bytes -> 64, whatever the clock.
// CHECK-LABEL: llvm.func ptx_kernelcc @straight
// CHECK:       segment_bytes 64,
// CLK32-LABEL: llvm.func ptx_kernelcc @straight
// CLK32:       segment_bytes 64,
// GLOBAL-LABEL: llvm.func ptx_kernelcc @straight
// GLOBAL:      <global, {{.*}} segment_bytes 64,
// REGISTERS-LABEL: llvm.func ptx_kernelcc @straight
// REGISTERS:   <registers, {{.*}} segment_bytes 64,
llvm.func ptx_kernelcc @straight(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "kernel"
  proton.record start "load"
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  proton.record end "load"
  proton.record start "store"
  llvm.store %v, %arg0 : i32, !llvm.ptr<1>
  proton.record end "store"
  proton.record end "kernel"
  llvm.return
}

// -----

// Records in both arms of a branch count once each (an upper bound):
// 4 records -> 32 bytes.
// CHECK-LABEL: llvm.func ptx_kernelcc @branches
// CHECK:       segment_bytes 32,
// CLK32-LABEL: llvm.func ptx_kernelcc @branches
// CLK32:       segment_bytes 32,
// REGISTERS-LABEL: llvm.func ptx_kernelcc @branches
// REGISTERS:   <registers, {{.*}} segment_bytes 32,
llvm.func ptx_kernelcc @branches(%arg0: !llvm.ptr<1>, %c: i1, %arg1: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  llvm.cond_br %c, ^a, ^b
^a:
  proton.record start "a"
  proton.record end "a"
  llvm.br ^done
^b:
  proton.record start "b"
  proton.record end "b"
  llvm.br ^done
^done:
  llvm.return
}

// -----

// One record before a loop and one inside it: unbounded. In shared memory
// the ring takes what leaves the CTAs per SM unchanged (4 warps, no shared
// memory: 16 CTAs by threads, 13.25 KiB each -> 2 KiB per warp), 2 to 4 KiB
// per warp; 4 KiB in global memory.
// CHECK-LABEL: llvm.func ptx_kernelcc @loop
// CHECK:       segment_bytes 2048,
// CLK32-LABEL: llvm.func ptx_kernelcc @loop
// CLK32:       segment_bytes 2048,
// GLOBAL-LABEL: llvm.func ptx_kernelcc @loop
// GLOBAL:      <global, {{.*}} segment_bytes 4096,
// With buffer-type=registers the loop is an error (registers hold no ring).
// expected-error @+1 {{buffer-type=registers needs every record outside loops}}
llvm.func ptx_kernelcc @loop(%arg0: !llvm.ptr<1>, %c: i1, %arg1: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "outer"
  llvm.br ^body
^body:
  proton.record start "inner"
  proton.record end "inner"
  llvm.cond_br %c, ^body, ^exit
^exit:
  proton.record end "outer"
  llvm.return
}
