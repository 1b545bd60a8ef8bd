// RUN: proton-opt %s --proton-lift-markers | FileCheck %s

// Event and mark markers lift into records of their kinds; per-thread copies
// merge as starts (first copy of an event start or a mark) and ends (last
// copy of an event end) do.
// CHECK-LABEL: llvm.func ptx_kernelcc @events
// CHECK-NOT:     llvm.inline_asm
// CHECK:         proton.record event_start "copy"
// CHECK-NEXT:    proton.record mark "tick"
// CHECK-NEXT:    %[[V:.+]] = llvm.load %arg0
// CHECK-NEXT:    proton.record event_end "copy"
// CHECK-NEXT:    llvm.store %[[V]], %arg0
llvm.func ptx_kernelcc @events(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  %0 = llvm.inline_asm has_side_effects "// @proton event_start copy", "=r" : () -> i32
  %1 = llvm.inline_asm has_side_effects "// @proton event_start copy", "=r" : () -> i32
  %2 = llvm.inline_asm has_side_effects "// @proton mark tick", "=r" : () -> i32
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  %3 = llvm.inline_asm has_side_effects "// @proton event_end copy", "=r" : () -> i32
  llvm.store %v, %arg0 : i32, !llvm.ptr<1>
  llvm.return
}
