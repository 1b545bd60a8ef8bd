// RUN: proton-opt %s -split-input-file --convert-protongpu-to-llvm -verify-diagnostics

// A segment that does not come from an init_segment of the same kernel
// cannot be lowered.
llvm.func ptx_kernelcc @foreign_segment(%arg0: !llvm.ptr<1>, %x: i32) {
  %s = builtin.unrealized_conversion_cast %x : i32 to !proton_gpu.segment
  %c = proton_gpu.read_counter : i64
  // expected-error @+1 {{'proton_gpu.circular_store' op cannot be lowered: its segment must come from proton_gpu.init_segment in the same kernel}}
  proton_gpu.circular_store start %s, %c scope 0 : i64
  llvm.return
}

// -----

// A store into a segment of other origin is refused even when the kernel
// has a segment of its own.
llvm.func ptx_kernelcc @mixed(%arg0: !llvm.ptr<1>, %x: i32) {
  %s = proton_gpu.init_segment %arg0 <global, warp, clock 64, num_warps 1, warps[0], segment_bytes 64, shared_offset 0>
  %f = builtin.unrealized_conversion_cast %x : i32 to !proton_gpu.segment
  %c = proton_gpu.read_counter : i64
  proton_gpu.circular_store start %s, %c scope 0 : i64
  // expected-error @+1 {{'proton_gpu.circular_store' op cannot be lowered: its segment must come from proton_gpu.init_segment in the same kernel}}
  proton_gpu.circular_store end %f, %c scope 0 : i64
  proton_gpu.finalize %s, %arg0
  llvm.return
}

// -----

// No pattern lowers an init_segment outside a function: the conversion
// reports the op it could not lower.
%p = llvm.mlir.zero : !llvm.ptr<1>
// expected-error @+1 {{failed to legalize operation 'proton_gpu.init_segment' that was explicitly marked illegal}}
%s = proton_gpu.init_segment %p <global, warp, clock 64, num_warps 1, warps[0], segment_bytes 64, shared_offset 0>
