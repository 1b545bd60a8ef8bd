// RUN: proton-opt %s --proton-lift-markers | FileCheck %s

// A value marker lifts into a value record whose operand is the carrier's
// operand; per-thread copies of the same value merge, a different value of
// the same name does not.
// CHECK-LABEL: llvm.func ptx_kernelcc @values
// CHECK-NOT:     llvm.inline_asm
// CHECK:         %[[I:.+]] = llvm.load %arg0 : !llvm.ptr<1> -> i32
// CHECK-NEXT:    %[[F:.+]] = llvm.bitcast %[[I]] : i32 to f32
// CHECK-NEXT:    proton.record value "iter"(%[[I]] : i32)
// CHECK-NEXT:    proton.record value "iter"(%[[F]] : f32)
// CHECK-NEXT:    llvm.return
llvm.func ptx_kernelcc @values(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  %i = llvm.load %arg0 : !llvm.ptr<1> -> i32
  %f = llvm.bitcast %i : i32 to f32
  %0 = llvm.inline_asm has_side_effects "// @proton value iter", "=r,r" %i : (i32) -> i32
  %1 = llvm.inline_asm has_side_effects "// @proton value iter", "=r,r" %i : (i32) -> i32
  %2 = llvm.inline_asm has_side_effects "// @proton value iter", "=r,f" %f : (f32) -> i32
  llvm.return
}
