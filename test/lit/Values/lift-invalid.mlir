// RUN: proton-opt %s -split-input-file --proton-lift-markers -verify-diagnostics

llvm.func ptx_kernelcc @value_marker_without_operand() {
  // expected-error @+1 {{proton value marker '// @proton value x' has no operand: the value is lost}}
  %0 = llvm.inline_asm has_side_effects "// @proton value x", "=r" : () -> i32
  llvm.return
}

// -----

llvm.func ptx_kernelcc @i64_value_marker(%v: i64) {
  // expected-error @+1 {{proton value 'x' in kernel 'i64_value_marker' has type 'i64': a value record holds 32 bits (i32 or f32); cast the value}}
  %0 = llvm.inline_asm has_side_effects "// @proton value x", "=r,l" %v : (i64) -> i32
  llvm.return
}

// -----

llvm.func ptx_kernelcc @f64_value_marker(%v: f64) {
  // expected-error @+1 {{proton value 'loss' in kernel 'f64_value_marker' has type 'f64': a value record holds 32 bits (i32 or f32); cast the value}}
  %0 = llvm.inline_asm has_side_effects "// @proton value loss", "=r,d" %v : (f64) -> i32
  llvm.return
}
