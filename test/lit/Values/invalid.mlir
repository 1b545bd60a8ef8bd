// RUN: proton-opt %s -split-input-file --proton-check-scopes -verify-diagnostics

llvm.func @value_without_operand() {
  // expected-error @+1 {{'proton.record' op a 'value' record needs a value operand}}
  proton.record value "x"
  llvm.return
}

// -----

llvm.func @operand_on_a_mark(%v: i32) {
  // expected-error @+1 {{'proton.record' op only a 'value' record takes a value operand, not 'mark'}}
  proton.record mark "x"(%v : i32)
  llvm.return
}

// -----

llvm.func @value_end_is_internal(%v: i32) {
  // expected-error @+1 {{'proton.record' op kind 'value_end' is internal to proton_gpu; record a value with kind 'value'}}
  proton.record value_end "x"(%v : i32)
  llvm.return
}

// -----

// A record holds 32 bits of value: 64-bit values are refused.
llvm.func @i64_value(%v: i64) {
  // expected-error @+1 {{'proton.record' op operand #0 must be 32-bit signless integer or 32-bit float, but got 'i64'}}
  proton.record value "x"(%v : i64)
  llvm.return
}
