// RUN: proton-opt %s -split-input-file --convert-proton-to-protongpu -verify-diagnostics

// expected-error @+1 {{kernel @noparam has no profile_scratch parameter}}
llvm.func ptx_kernelcc @noparam() attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

// -----

// expected-error @+1 {{kernel @shared_ptr: the last parameter must be Triton's profile_scratch pointer (!llvm.ptr<1>), got '!llvm.ptr<3>'}}
llvm.func ptx_kernelcc @shared_ptr(%arg0: !llvm.ptr<3>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

// -----

// The scratch pointer must be the last parameter.
// expected-error @+1 {{kernel @not_last: the last parameter must be Triton's profile_scratch pointer (!llvm.ptr<1>), got 'i32'}}
llvm.func ptx_kernelcc @not_last(%arg0: !llvm.ptr<1>, %n: i32) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

// -----

// expected-error @+1 {{kernel @no_threads declares no threads per CTA (nvvm.reqntid or amdgpu-flat-work-group-size); pass num-warps}}
llvm.func ptx_kernelcc @no_threads(%arg0: !llvm.ptr<1>) {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

// -----

// A malformed launch bound counts as none.
// expected-error @+1 {{kernel @bad_bound declares no threads per CTA (nvvm.reqntid or amdgpu-flat-work-group-size); pass num-warps}}
llvm.func ptx_kernelcc @bad_bound(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128,x"]]} {
  proton.record start "a"
  proton.record end "a"
  llvm.return
}

// -----

// The scopes are checked before anything is lowered.
llvm.func ptx_kernelcc @unpaired(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  // expected-error @+1 {{scope 'a' is never closed: the function returns with it open}}
  proton.record start "a"
  llvm.return
}

// -----

llvm.func ptx_kernelcc @closed_on_one_path(%c: i1, %arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "a"
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  // expected-error @+1 {{scope 'b' is open on one path into a block and closed on another}}
  proton.record start "b"
  llvm.br ^bb2
^bb2:
  // expected-note @+1 {{paths meet here}}
  proton.record end "a"
  llvm.return
}

// -----

// A function Triton did not inline (noinline=True) has no profile_scratch
// and no buffer of its own: scopes belong around its call in the kernel.
llvm.func @helper(%x: i32) -> i32 {
  // expected-error @+1 {{scope 'inner' is inside @helper, a function Triton did not inline (noinline=True); Proton records in the kernel itself only: put the scope around the call in the kernel}}
  proton.record start "inner"
  proton.record end "inner"
  llvm.return %x : i32
}
llvm.func ptx_kernelcc @calls_helper(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  %c = llvm.mlir.constant(1 : i32) : i32
  %r = llvm.call @helper(%c) : (i32) -> i32
  llvm.return
}
