// RUN: proton-opt %s -split-input-file -verify-diagnostics --proton-mma-scopes

// The names of the scopes MMA mode adds are reserved.
llvm.func ptx_kernelcc @reserved() {
  // expected-error @below {{the name 'mma.issue' is reserved in MMA mode for the scopes it adds (mma, mma.*): rename this scope}}
  proton.record start "mma.issue"
  // expected-error @below {{the name 'mma.issue' is reserved}}
  proton.record end "mma.issue"
  llvm.return
}

// -----

llvm.func ptx_kernelcc @reserved_bare() {
  // expected-error @below {{the name 'mma' is reserved}}
  proton.record mark "mma"
  llvm.return
}
