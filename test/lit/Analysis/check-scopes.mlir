// RUN: proton-opt %s -split-input-file --proton-check-scopes="emit-remarks=true" -verify-diagnostics | FileCheck %s
// RUN: proton-opt %s -split-input-file --proton-check-scopes | FileCheck %s --check-prefix=QUIET

// Without emit-remarks, valid scopes pass silently and the IR is unchanged.
// QUIET-LABEL: llvm.func @nested
// QUIET-COUNT-3: proton.record start
// QUIET-COUNT-3: proton.record end
// QUIET-LABEL: llvm.func @loop

// Ids follow the textual order of the starts; each scope's parent is the
// innermost scope open at its start (-1 at the top level).
// CHECK-LABEL: llvm.func @nested
// CHECK-NEXT:    proton.record start "outer"
llvm.func @nested(%arg0: !llvm.ptr<1>) {
  // expected-remark @+1 {{scope 0 'outer' parent -1}}
  proton.record start "outer"
  // expected-remark @+1 {{scope 1 'middle' parent 0}}
  proton.record start "middle"
  // expected-remark @+1 {{scope 2 'inner' parent 1}}
  proton.record start "inner"
  proton.record end "inner"
  proton.record end "middle"
  proton.record end "outer"
  llvm.return
}

// -----

// Sibling scopes share their parent.
llvm.func @siblings(%arg0: !llvm.ptr<1>) {
  // expected-remark @+1 {{scope 0 'kernel' parent -1}}
  proton.record start "kernel"
  // expected-remark @+1 {{scope 1 'load' parent 0}}
  proton.record start "load"
  proton.record end "load"
  // expected-remark @+1 {{scope 2 'compute' parent 0}}
  proton.record start "compute"
  proton.record end "compute"
  // expected-remark @+1 {{scope 3 'store' parent 0}}
  proton.record start "store"
  proton.record end "store"
  proton.record end "kernel"
  llvm.return
}

// -----

// A scope inside a loop body is one scope, entered on every iteration; the
// loop itself sits inside another scope.
// CHECK-LABEL: llvm.func @loop
// CHECK:       ^bb1(%{{.*}}: i32):
// CHECK-NEXT:    proton.record start "body"
llvm.func @loop(%n: i32, %arg1: !llvm.ptr<1>) {
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  // expected-remark @+1 {{scope 0 'outer' parent -1}}
  proton.record start "outer"
  llvm.br ^loop(%c0 : i32)
^loop(%i: i32):
  // expected-remark @+1 {{scope 1 'body' parent 0}}
  proton.record start "body"
  // expected-remark @+1 {{scope 2 'inner' parent 1}}
  proton.record start "inner"
  proton.record end "inner"
  proton.record end "body"
  %next = llvm.add %i, %c1 : i32
  %done = llvm.icmp "eq" %next, %n : i32
  llvm.cond_br %done, ^exit, ^loop(%next : i32)
^exit:
  proton.record end "outer"
  llvm.return
}

// -----

// A name used again after its scope closed makes a new scope with a new id.
llvm.func @reuse(%arg0: !llvm.ptr<1>) {
  // expected-remark @+1 {{scope 0 'step' parent -1}}
  proton.record start "step"
  proton.record end "step"
  // expected-remark @+1 {{scope 1 'step' parent -1}}
  proton.record start "step"
  // expected-remark @+1 {{scope 2 'inner' parent 1}}
  proton.record start "inner"
  proton.record end "inner"
  proton.record end "step"
  // expected-remark @+1 {{scope 3 'inner' parent -1}}
  proton.record start "inner"
  proton.record end "inner"
  llvm.return
}

// -----

// A scope may end on several paths, as long as every path closes it.
llvm.func @two_exits(%c: i1, %arg0: !llvm.ptr<1>) {
  // expected-remark @+1 {{scope 0 'a' parent -1}}
  proton.record start "a"
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  proton.record end "a"
  llvm.return
^bb2:
  proton.record end "a"
  llvm.return
}

// -----

// A scope closed on both arms of a diamond and joined afterwards.
llvm.func @diamond(%c: i1, %arg0: !llvm.ptr<1>) {
  // expected-remark @+1 {{scope 0 'a' parent -1}}
  proton.record start "a"
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  proton.record end "a"
  llvm.br ^bb3
^bb2:
  proton.record end "a"
  llvm.br ^bb3
^bb3:
  // expected-remark @+1 {{scope 1 'b' parent -1}}
  proton.record start "b"
  proton.record end "b"
  llvm.return
}

// -----

// Ids follow the textual order of starts, not the order blocks execute in;
// the parent still follows the control flow.
llvm.func @block_order(%arg0: !llvm.ptr<1>) {
  // expected-remark @+1 {{scope 0 'first' parent -1}}
  proton.record start "first"
  llvm.br ^bb2
^bb1:
  // expected-remark @+1 {{scope 1 'later' parent 2}}
  proton.record start "later"
  proton.record end "later"
  proton.record end "second"
  proton.record end "first"
  llvm.return
^bb2:
  // expected-remark @+1 {{scope 2 'second' parent 0}}
  proton.record start "second"
  llvm.br ^bb1
}

// -----

// A path that ends in `unreachable` (a trap) may leave scopes open.
llvm.func @trap(%c: i1, %arg0: !llvm.ptr<1>) {
  // expected-remark @+1 {{scope 0 'guarded' parent -1}}
  proton.record start "guarded"
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  llvm.unreachable
^bb2:
  proton.record end "guarded"
  llvm.return
}

// -----

// Functions without records, declarations included, are fine.
llvm.func @external(!llvm.ptr<1>)
llvm.func @plain(%arg0: !llvm.ptr<1>) {
  llvm.return
}
