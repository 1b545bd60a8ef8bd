// RUN: proton-opt %s --convert-proton-to-protongpu="buffer-size=32" -verify-diagnostics
// expected-error @+1 {{buffer-size=32 gives less than 16 bytes to each of 4 recording warps}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}
