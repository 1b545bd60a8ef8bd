// Option errors, one option set per part (split-file keeps line numbers).
// RUN: split-file %s %t
// RUN: proton-opt %t/warp-group.mlir --convert-proton-to-protongpu="granularity=warp_group num-warps=6" -verify-diagnostics
// RUN: proton-opt %t/warp-group-attr.mlir --convert-proton-to-protongpu="granularity=warp_group" -verify-diagnostics
// RUN: proton-opt %t/sample-range.mlir --convert-proton-to-protongpu="sampling-strategy=selective sampling-options=1,4" -verify-diagnostics
// RUN: proton-opt %t/sample-group-range.mlir --convert-proton-to-protongpu="granularity=warp_group num-warps=8 sampling-strategy=selective sampling-options=2" -verify-diagnostics
// RUN: proton-opt %t/sample-negative.mlir --convert-proton-to-protongpu="sampling-strategy=selective sampling-options=-1" -verify-diagnostics
// RUN: proton-opt %t/sample-twice.mlir --convert-proton-to-protongpu="sampling-strategy=selective sampling-options=2,0,2" -verify-diagnostics
// RUN: proton-opt %t/sample-missing.mlir --convert-proton-to-protongpu="sampling-strategy=selective" -verify-diagnostics
// RUN: proton-opt %t/sample-cta.mlir --convert-proton-to-protongpu="granularity=cta sampling-strategy=selective sampling-options=0" -verify-diagnostics
// RUN: proton-opt %t/sample-none.mlir --convert-proton-to-protongpu="sampling-options=1" -verify-diagnostics
// RUN: proton-opt %t/sample-unknown.mlir --convert-proton-to-protongpu="sampling-strategy=random" -verify-diagnostics
// RUN: not proton-opt %t/bad-enum.mlir --convert-proton-to-protongpu="granularity=thread" 2>&1 | FileCheck %s --check-prefix=ENUM
// ENUM: Cannot find option named 'thread'!

//--- warp-group.mlir
// expected-error @+1 {{granularity=warp_group needs a multiple of 4 warps; kernel @k has 6}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- warp-group-attr.mlir
// 96 threads: 3 warps.
// expected-error @+1 {{granularity=warp_group needs a multiple of 4 warps; kernel @k has 3}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "96"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-range.mlir
// expected-error @+1 {{sampling-options id 4 is out of range: kernel @k has 4 warps}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-group-range.mlir
// expected-error @+1 {{sampling-options id 2 is out of range: kernel @k has 2 warp groups}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-negative.mlir
// expected-error @+1 {{sampling-options id -1 is out of range: kernel @k has 4 warps}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-twice.mlir
// expected-error @+1 {{sampling-options id 2 is listed twice}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-missing.mlir
// expected-error @+1 {{sampling-strategy=selective needs the ids to record in sampling-options}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-cta.mlir
// expected-error @+1 {{sampling-strategy=selective needs granularity warp or warp_group; granularity=cta records warp 0 only}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-none.mlir
// expected-error @+1 {{sampling-options given without sampling-strategy=selective}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- sample-unknown.mlir
// expected-error @+1 {{unknown sampling-strategy 'random'; valid: none, selective}}
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

//--- bad-enum.mlir
llvm.func ptx_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  llvm.return
}
