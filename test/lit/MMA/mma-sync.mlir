// RUN: proton-opt %s -split-input-file --proton-mma-scopes | FileCheck %s

// Ampere, as Triton 3.6 writes a K-loop body: ldmatrix calls, then the
// mma.sync inline assembly with extractvalues between. One `mma` scope
// around the run of multiplies; the ldmatrix calls and a store end runs.
// Sparse mma.sp is an `mma` run too.
// CHECK-LABEL: llvm.func ptx_kernelcc @k_loop
// CHECK-NEXT:    llvm.call @__proton_hidden.llvm.nvvm.ldmatrix
// CHECK-NEXT:    llvm.extractvalue
// CHECK-NEXT:    proton.record start "mma"
// CHECK-NEXT:    llvm.inline_asm has_side_effects "mma.sync.aligned
// CHECK-NEXT:    llvm.extractvalue
// CHECK-NEXT:    llvm.inline_asm has_side_effects "mma.sync.aligned
// CHECK-NEXT:    proton.record end "mma"
// CHECK-NEXT:    llvm.store
// CHECK-NEXT:    proton.record start "mma"
// CHECK-NEXT:    llvm.inline_asm has_side_effects "mma.sp::ordered_metadata.sync
// CHECK-NEXT:    proton.record end "mma"
// CHECK-NEXT:    llvm.return
llvm.func @__proton_hidden.llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3(!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
llvm.func ptx_kernelcc @k_loop(%arg0: !llvm.ptr<3>, %arg1: !llvm.ptr<1>) {
  %m = llvm.call @__proton_hidden.llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3(%arg0) : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
  %a = llvm.extractvalue %m[0] : !llvm.struct<(i32, i32, i32, i32)>
  %0 = llvm.inline_asm has_side_effects "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 { $0, $1 }, { $2 }, { $3 }, { $0, $1 };", "=f,=f,r,r" %a, %a : (i32, i32) -> !llvm.struct<(f32, f32)>
  %1 = llvm.extractvalue %0[0] : !llvm.struct<(f32, f32)>
  %2 = llvm.inline_asm has_side_effects "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 { $0, $1 }, { $2 }, { $3 }, { $0, $1 };", "=f,=f,r,r" %a, %a : (i32, i32) -> !llvm.struct<(f32, f32)>
  llvm.store %1, %arg1 : f32, !llvm.ptr<1>
  %3 = llvm.inline_asm has_side_effects "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 { $0, $1 }, { $2 }, { $3 }, { $0, $1 };", "=f,=f,r,r" %a, %a : (i32, i32) -> !llvm.struct<(f32, f32)>
  llvm.return
}

// -----

// Blackwell: tcgen05.mma runs (issued by one elected thread under a
// predicate) and the commit that follows them are one mma.issue scope; an
// unrelated tcgen05 instruction (a load of tensor memory) is not an MMA.
// CHECK-LABEL: llvm.func ptx_kernelcc @tcgen05
// CHECK-NEXT:    proton.record start "mma.issue"
// CHECK-NEXT:    llvm.inline_asm has_side_effects "@$2 tcgen05.mma
// CHECK-NEXT:    llvm.inline_asm has_side_effects "@$2 tcgen05.mma
// CHECK-NEXT:    llvm.inline_asm has_side_effects "@$0 tcgen05.commit
// CHECK-NEXT:    proton.record end "mma.issue"
// CHECK-NEXT:    llvm.inline_asm has_side_effects "tcgen05.ld
// CHECK-NEXT:    llvm.return
llvm.func ptx_kernelcc @tcgen05(%arg0: i32, %arg1: i64, %arg2: i1, %arg3: !llvm.ptr<3>) {
  llvm.inline_asm has_side_effects "@$2 tcgen05.mma.cta_group::1.kind::f16 [ $0 + 0 ], $1, $1, 0, 1;", "r,l,b" %arg0, %arg1, %arg2 : (i32, i64, i1) -> ()
  llvm.inline_asm has_side_effects "@$2 tcgen05.mma.cta_group::1.kind::f16 [ $0 + 0 ], $1, $1, 0, 1;", "r,l,b" %arg0, %arg1, %arg2 : (i32, i64, i1) -> ()
  llvm.inline_asm has_side_effects "@$0 tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [$1];", "b,r" %arg2, %arg3 : (i1, !llvm.ptr<3>) -> ()
  %0 = llvm.inline_asm has_side_effects "tcgen05.ld.sync.aligned.32x32b.x1.b32 {$0}, [$1 + 0];", "=r,r" %arg0 : (i32) -> i32
  llvm.return
}
