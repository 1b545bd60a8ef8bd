// RUN: proton-opt %s -split-input-file --proton-check-scopes -verify-diagnostics | FileCheck %s

// An event starts before a loop, ends and starts again in every iteration
// and ends after it: its records need not nest or pair on a path, which
// would be an error for a scope. The scope around it still must.
// CHECK-LABEL: llvm.func @crosses_iterations
llvm.func @crosses_iterations(%n: i32) {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  proton.record start "loop"
  proton.record event_start "copy"
  llvm.br ^head(%c0 : i32)
^head(%i: i32):
  %more = llvm.icmp "slt" %i, %n : i32
  llvm.cond_br %more, ^body, ^exit
^body:
  proton.record event_end "copy"
  proton.record mark "tick"
  proton.record event_start "copy"
  %next = llvm.add %i, %c1 : i32
  llvm.br ^head(%next : i32)
^exit:
  proton.record event_end "copy"
  proton.record end "loop"
  llvm.return
}

// -----

// An event ended on one branch only, or never ended, is the decoder's to
// count as unpaired, not an error.
// CHECK-LABEL: llvm.func @one_branch
llvm.func @one_branch(%c: i1) {
  proton.record event_start "a"
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  proton.record event_end "a"
  llvm.br ^bb2
^bb2:
  proton.record event_start "b"
  llvm.return
}
