// RUN: proton-opt %s -split-input-file --proton-check-scopes -verify-diagnostics --allow-unregistered-dialect

llvm.func @end_without_start(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{end of scope 'a' has no matching start on this path}}
  proton.record end "a"
  llvm.return
}

// -----

// An end must name the innermost open scope.
llvm.func @wrong_name(%arg0: !llvm.ptr<1>) {
  proton.record start "a"
  // expected-error @+1 {{end of scope 'b' has no matching start on this path}}
  proton.record end "b"
  proton.record end "a"
  llvm.return
}

// -----

llvm.func @never_closed(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{scope 'a' is never closed: the function returns with it open}}
  proton.record start "a"
  proton.record start "b"
  proton.record end "b"
  llvm.return
}

// -----

// Both open scopes are reported.
llvm.func @two_never_closed(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{scope 'outer' is never closed: the function returns with it open}}
  proton.record start "outer"
  // expected-error @+1 {{scope 'inner' is never closed: the function returns with it open}}
  proton.record start "inner"
  llvm.return
}

// -----

// Closed on one return path only.
llvm.func @closed_on_one_return(%c: i1, %arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{scope 'a' is never closed: the function returns with it open}}
  proton.record start "a"
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  proton.record end "a"
  llvm.return
^bb2:
  llvm.return
}

// -----

// 'mid' ends while 'in', opened inside it, is still open; the later ends
// of 'in' and 'out' still match, so the mistake is reported once.
llvm.func @crossing(%arg0: !llvm.ptr<1>) {
  proton.record start "out"
  proton.record start "mid"
  // expected-note @+1 {{scope 'in' starts here}}
  proton.record start "in"
  // expected-error @+1 {{scope 'mid' ends while scope 'in' opened inside it is still open; scopes must nest}}
  proton.record end "mid"
  proton.record end "in"
  proton.record end "out"
  llvm.return
}

// -----

// A scope opened on only one branch: its start does not dominate the end,
// and the end does not post-dominate the start.
llvm.func @one_branch(%c: i1, %arg0: !llvm.ptr<1>) {
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  // expected-error @+1 {{scope 'a' is open on one path into a block and closed on another: its end does not post-dominate its start (a scope that crosses a loop iteration or a branch, e.g. after software pipelining, cannot be measured)}}
  proton.record start "a"
  llvm.br ^bb2
^bb2:
  // expected-error @+2 {{end of scope 'a' has no matching start on this path}}
  // expected-note @+1 {{paths meet here}}
  proton.record end "a"
  llvm.return
}

// -----

// A scope closed on only one branch before the paths meet again; it also
// reaches the return open.
llvm.func @closed_on_one_branch(%c: i1, %arg0: !llvm.ptr<1>) {
  // expected-error @+2 {{scope 'a' is open on one path into a block and closed on another}}
  // expected-error @+1 {{scope 'a' is never closed: the function returns with it open}}
  proton.record start "a"
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  proton.record end "a"
  llvm.br ^bb2
^bb2:
  // expected-note @+1 {{paths meet here}}
  %0 = llvm.mlir.constant(0 : i32) : i32
  llvm.return
}

// -----

// A scope started in a loop header and closed after the loop: the back edge
// brings a second open copy into the header.
llvm.func @start_crosses_back_edge(%c: i1, %arg0: !llvm.ptr<1>) {
  llvm.br ^bb1
^bb1:
  // expected-error @+2 {{scope 'iter' is open on one path into a block and closed on another}}
  // expected-note @+1 {{paths meet here}}
  proton.record start "iter"
  llvm.cond_br %c, ^bb1, ^bb2
^bb2:
  proton.record end "iter"
  llvm.return
}

// -----

// Software pipelining: each iteration ends the scope the previous one
// started. The scope crosses the loop's back edge.
llvm.func @pipelined(%c: i1, %arg0: !llvm.ptr<1>) {
  proton.record start "stage"
  llvm.br ^bb1
^bb1:
  // expected-note @+1 {{paths meet here}}
  proton.record end "stage"
  // expected-error @+1 {{scope 'stage' is open on one path into a block and closed on another}}
  proton.record start "stage"
  llvm.cond_br %c, ^bb1, ^bb2
^bb2:
  proton.record end "stage"
  llvm.return
}

// -----

// Records must be in the function body's blocks.
llvm.func @nested_region(%arg0: !llvm.ptr<1>) {
  "test.region"() ({
    // expected-error @+1 {{proton.record must be in the function body's blocks, not in a nested region}}
    proton.record start "a"
    // expected-error @+1 {{proton.record must be in the function body's blocks, not in a nested region}}
    proton.record end "a"
    "test.done"() : () -> ()
  }) : () -> ()
  llvm.return
}
