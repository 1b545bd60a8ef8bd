// RUN: proton-opt %s --proton-lift-markers --proton-mma-scopes | FileCheck %s
// RUN: proton-opt %s --proton-lift-markers --proton-mma-scopes --proton-check-scopes=emit-remarks 2>&1 >/dev/null | FileCheck %s --check-prefix=TREE

// User markers keep working: a user record ends a run, so the MMA scopes
// nest inside the user's scopes and never cross them.
// CHECK-LABEL: llvm.func ptx_kernelcc @k
// CHECK-NEXT:    proton.record start "iteration"
// CHECK-NEXT:    proton.record start "mma"
// CHECK-NEXT:    llvm.inline_asm has_side_effects "mma.sync.aligned
// CHECK-NEXT:    proton.record end "mma"
// CHECK-NEXT:    proton.record start "tail"
// CHECK-NEXT:    proton.record start "mma"
// CHECK-NEXT:    llvm.inline_asm has_side_effects "mma.sync.aligned
// CHECK-NEXT:    proton.record end "mma"
// CHECK-NEXT:    proton.record end "tail"
// CHECK-NEXT:    proton.record end "iteration"
// Ids in order of the starts; each run is a scope of its own.
// TREE-DAG: remark: scope 0 'iteration' parent -1
// TREE-DAG: remark: scope 1 'mma' parent 0
// TREE-DAG: remark: scope 2 'tail' parent 0
// TREE-DAG: remark: scope 3 'mma' parent 2
llvm.func ptx_kernelcc @k(%a: i32) {
  %0 = llvm.inline_asm has_side_effects "// @proton start iteration", "=r" : () -> i32
  %1 = llvm.inline_asm has_side_effects "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 { $0 }, { $1 }, { $2 }, { $0 };", "=f,r,r" %a, %a : (i32, i32) -> f32
  %2 = llvm.inline_asm has_side_effects "// @proton start tail", "=r" : () -> i32
  %3 = llvm.inline_asm has_side_effects "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 { $0 }, { $1 }, { $2 }, { $0 };", "=f,r,r" %a, %a : (i32, i32) -> f32
  %4 = llvm.inline_asm has_side_effects "// @proton end tail", "=r" : () -> i32
  %5 = llvm.inline_asm has_side_effects "// @proton end iteration", "=r" : () -> i32
  llvm.return
}
