// RUN: proton-opt %s --convert-protongpu-to-llvm -verify-diagnostics
llvm.func ptx_kernelcc @two_inits(%arg0: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg0 <global, warp, clock 64, num_warps 1, warps[0], segment_bytes 64, shared_offset 0>
  // expected-error @+1 {{a kernel has one proton_gpu.init_segment}}
  %t = proton_gpu.init_segment %arg0 <global, warp, clock 64, num_warps 1, warps[0], segment_bytes 64, shared_offset 0>
  proton_gpu.finalize %s, %arg0
  llvm.return
}
