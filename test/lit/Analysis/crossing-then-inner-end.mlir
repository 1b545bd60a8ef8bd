// RUN: proton-opt %s --proton-check-scopes -verify-diagnostics
// A crossing is reported once: the inner scope's own end still matches.
llvm.func @crossing(%arg0: !llvm.ptr<1>) {
  proton.record start "a"
  // expected-note @+1 {{scope 'b' starts here}}
  proton.record start "b"
  // expected-error @+1 {{scope 'a' ends while scope 'b' opened inside it is still open; scopes must nest}}
  proton.record end "a"
  proton.record end "b"
  llvm.return
}
