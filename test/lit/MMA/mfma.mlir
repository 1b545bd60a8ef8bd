// RUN: proton-opt %s -split-input-file --proton-mma-scopes | FileCheck %s

// AMD CDNA, as Triton 3.6 writes a K-loop body for gfx942: a run of MFMA
// intrinsic calls (hidden by the bridge) is one `mma` scope; loads before
// and a barrier after stay outside.
// CHECK-LABEL: llvm.func amdgpu_kernelcc @k_loop
// CHECK:         llvm.load
// CHECK-NEXT:    proton.record start "mma"
// CHECK-NEXT:    llvm.call @__proton_hidden.llvm.amdgcn.mfma.f32.32x32x8f16
// CHECK-NEXT:    llvm.call @__proton_hidden.llvm.amdgcn.mfma.f32.32x32x8f16
// CHECK-NEXT:    proton.record end "mma"
// CHECK-NEXT:    llvm.call @__proton_hidden.llvm.amdgcn.s.barrier()
// CHECK-NEXT:    llvm.br
llvm.func @__proton_hidden.llvm.amdgcn.mfma.f32.32x32x8f16(vector<4xf16>, vector<4xf16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
llvm.func @__proton_hidden.llvm.amdgcn.s.barrier()
llvm.func amdgpu_kernelcc @k_loop(%arg0: !llvm.ptr<1>, %acc: vector<16xf32>) attributes {passthrough = [["amdgpu-flat-work-group-size", "1,256"]]} {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  llvm.br ^loop
^loop:
  %a = llvm.load %arg0 : !llvm.ptr<1> -> vector<4xf16>
  %0 = llvm.call @__proton_hidden.llvm.amdgcn.mfma.f32.32x32x8f16(%a, %a, %acc, %c0, %c0, %c0) : (vector<4xf16>, vector<4xf16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
  %1 = llvm.call @__proton_hidden.llvm.amdgcn.mfma.f32.32x32x8f16(%a, %a, %0, %c0, %c0, %c0) : (vector<4xf16>, vector<4xf16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
  llvm.call @__proton_hidden.llvm.amdgcn.s.barrier() : () -> ()
  llvm.br ^loop
}

// -----

// Unhidden intrinsic calls (WMMA on RDNA, sparse MFMA) and ROCDL operations
// are MFMA-family runs too; the other AMDGPU intrinsics are not.
// CHECK-LABEL: llvm.func amdgpu_kernelcc @forms
// CHECK:         llvm.call_intrinsic "llvm.amdgcn.s.waitcnt"
// CHECK-NEXT:    proton.record start "mma"
// CHECK-NEXT:    llvm.call_intrinsic "llvm.amdgcn.wmma.f32.16x16x16.f16"
// CHECK-NEXT:    llvm.call_intrinsic "llvm.amdgcn.smfmac.f32.16x16x32.f16"
// CHECK-NEXT:    rocdl.mfma.f32.32x32x8f16
// CHECK-NEXT:    proton.record end "mma"
// CHECK-NEXT:    llvm.return
llvm.func amdgpu_kernelcc @forms(%a: vector<4xf16>, %b: vector<16xf16>, %acc: vector<16xf32>, %acc8: vector<8xf32>, %acc4: vector<4xf32>) {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  llvm.call_intrinsic "llvm.amdgcn.s.waitcnt"(%c0) : (i32) -> ()
  %0 = llvm.call_intrinsic "llvm.amdgcn.wmma.f32.16x16x16.f16"(%b, %b, %acc8) : (vector<16xf16>, vector<16xf16>, vector<8xf32>) -> vector<8xf32>
  %1 = llvm.call_intrinsic "llvm.amdgcn.smfmac.f32.16x16x32.f16"(%a, %b, %acc4, %c0, %c0, %c0) : (vector<4xf16>, vector<16xf16>, vector<4xf32>, i32, i32, i32) -> vector<4xf32>
  %2 = rocdl.mfma.f32.32x32x8f16 %a, %a, %acc, %c0, %c0, %c0 : (vector<4xf16>, vector<4xf16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
  llvm.return
}
