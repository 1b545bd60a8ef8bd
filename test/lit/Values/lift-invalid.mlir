// RUN: proton-opt %s -split-input-file --proton-lift-markers -verify-diagnostics

llvm.func ptx_kernelcc @value_marker_without_operand() {
  // expected-error @+1 {{proton value marker '// @proton value x' has no operand: the value is lost}}
  %0 = llvm.inline_asm has_side_effects "// @proton value x", "=r" : () -> i32
  llvm.return
}

// -----

llvm.func ptx_kernelcc @i64_value_marker(%v: i64) {
  // expected-error @+1 {{'proton.record' op operand #0 must be 32-bit signless integer or 32-bit float, but got 'i64'}}
  %0 = llvm.inline_asm has_side_effects "// @proton value x", "=r,l" %v : (i64) -> i32
  llvm.return
}
