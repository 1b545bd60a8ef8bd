// RUN: proton-opt %s -split-input-file --proton-lift-markers | FileCheck %s
// RUN: proton-opt %s -split-input-file --proton-lift-markers -mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// RUN: proton-opt %s -split-input-file --proton-lift-markers -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS

// One statistics report per split: @simple, then @copies.
// STATS:      ProtonLiftMarkers
// STATS-NEXT:   (S) 0 duplicates - per-thread copies merged
// STATS-NEXT:   (S) 2 lifted     - carriers lifted into records
// STATS:      ProtonLiftMarkers
// STATS-NEXT:   (S) 3 duplicates - per-thread copies merged
// STATS-NEXT:   (S) 5 lifted     - carriers lifted into records

// One carrier per marker: each becomes a record in place, and the unused
// carrier results disappear with them.
// CHECK-LABEL: llvm.func ptx_kernelcc @simple
// CHECK-NOT:     llvm.inline_asm
// CHECK:         proton.record start "load"
// CHECK-NEXT:    %[[V:.+]] = llvm.load %arg0
// CHECK-NEXT:    proton.record end "load"
// CHECK-NEXT:    llvm.store %[[V]], %arg0
// CHECK-NEXT:    llvm.return
llvm.func ptx_kernelcc @simple(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  %0 = llvm.inline_asm has_side_effects "// @proton start load", "=r" : () -> i32
  %v = llvm.load %arg0 : !llvm.ptr<1> -> i32
  %1 = llvm.inline_asm has_side_effects "// @proton end load", "=r" : () -> i32
  llvm.store %v, %arg0 : i32, !llvm.ptr<1>
  llvm.return
}

// -----

// A tensor-valued marker gives one carrier per element a thread holds. The
// first copy of a start and the last copy of an end are kept, so the scope
// covers all the copies; the used result of a carrier becomes zero.
// CHECK-LABEL: llvm.func ptx_kernelcc @copies
// CHECK-NEXT:    proton.record start "tile"
// CHECK-NEXT:    %[[A:.+]] = llvm.load %arg0 {alignment = 4 : i64}
// CHECK-NEXT:    %[[B:.+]] = llvm.load %arg0 {alignment = 8 : i64}
// CHECK-NEXT:    %[[C:.+]] = llvm.load %arg0 {alignment = 16 : i64}
// CHECK-NEXT:    %[[ZERO:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:    %[[D:.+]] = llvm.load %arg0 {alignment = 32 : i64}
// CHECK-NEXT:    proton.record end "tile"
// CHECK-NEXT:    %[[S:.+]] = llvm.add %[[D]], %[[ZERO]] : i32
// CHECK-NEXT:    llvm.store %[[S]], %arg0
// CHECK-NOT:     proton.record
// CHECK:         llvm.return
llvm.func ptx_kernelcc @copies(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) {
  %0 = llvm.inline_asm has_side_effects "// @proton start tile", "=r" : () -> i32
  %a = llvm.load %arg0 {alignment = 4 : i64} : !llvm.ptr<1> -> i32
  %1 = llvm.inline_asm has_side_effects "// @proton start tile", "=r" : () -> i32
  %b = llvm.load %arg0 {alignment = 8 : i64} : !llvm.ptr<1> -> i32
  %2 = llvm.inline_asm has_side_effects "// @proton end tile", "=r" : () -> i32
  %c = llvm.load %arg0 {alignment = 16 : i64} : !llvm.ptr<1> -> i32
  %3 = llvm.inline_asm has_side_effects "// @proton end tile", "=r" : () -> i32
  %d = llvm.load %arg0 {alignment = 32 : i64} : !llvm.ptr<1> -> i32
  %4 = llvm.inline_asm has_side_effects "// @proton end tile", "=r" : () -> i32
  %s = llvm.add %d, %3 : i32
  llvm.store %s, %arg0 : i32, !llvm.ptr<1>
  llvm.return
}

// -----

// Copies are merged only when no other marker lies between them: a scope
// that ends and starts again under the same name stays two scopes, and a
// nested scope keeps the copies of the outer start apart.
// CHECK-LABEL: llvm.func @not_copies
// CHECK-NEXT:    proton.record start "a"
// CHECK-NEXT:    proton.record end "a"
// CHECK-NEXT:    proton.record start "a"
// CHECK-NEXT:    proton.record start "b"
// CHECK-NEXT:    proton.record start "a"
// CHECK-NEXT:    proton.record end "a"
// CHECK-NEXT:    proton.record end "b"
// CHECK-NEXT:    proton.record end "a"
// CHECK-NEXT:    llvm.return
llvm.func @not_copies(%arg0: !llvm.ptr<1>) {
  llvm.inline_asm has_side_effects "// @proton start a", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton end a", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton start a", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton start b", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton start a", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton end a", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton end b", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton end a", "" : () -> ()
  llvm.return
}

// -----

// Copies in different blocks are not merged.
// CHECK-LABEL: llvm.func @per_block
// CHECK-NEXT:    proton.record start "x"
// CHECK-NEXT:    llvm.br ^bb1
// CHECK-NEXT:  ^bb1:
// CHECK-NEXT:    proton.record start "x"
// CHECK-NEXT:    proton.record end "x"
// CHECK-NEXT:    llvm.br ^bb2
// CHECK-NEXT:  ^bb2:
// CHECK-NEXT:    proton.record end "x"
llvm.func @per_block(%arg0: !llvm.ptr<1>) {
  llvm.inline_asm has_side_effects "// @proton start x", "" : () -> ()
  llvm.br ^bb1
^bb1:
  llvm.inline_asm has_side_effects "// @proton start x", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton end x", "" : () -> ()
  llvm.br ^bb2
^bb2:
  llvm.inline_asm has_side_effects "// @proton end x", "" : () -> ()
  llvm.return
}

// -----

// Other inline assembly is left alone, including text that merely mentions
// proton, and whitespace around a marker and its name is ignored. Used
// results of other integer widths become zero of that width.
// CHECK-LABEL: llvm.func @other_asm
// CHECK-NEXT:    %[[CLK:.+]] = llvm.inline_asm has_side_effects "mov.u32 $0, %clock;", "=r"  : () -> i32
// CHECK-NEXT:    %[[NOTE:.+]] = llvm.inline_asm "// proton start not_a_marker", "=r"  : () -> i32
// CHECK-NEXT:    llvm.inline_asm has_side_effects "//@proton start glued", ""  : () -> ()
// CHECK-NEXT:    %[[Z64:.+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT:    proton.record start "spaced name"
// CHECK-NEXT:    llvm.store %[[Z64]], %arg0 : i64, !llvm.ptr<1>
// CHECK-NEXT:    llvm.store %[[CLK]], %arg0 : i32, !llvm.ptr<1>
// CHECK-NEXT:    llvm.store %[[NOTE]], %arg0 : i32, !llvm.ptr<1>
// CHECK-NEXT:    proton.record end "spaced name"
// CHECK-NEXT:    llvm.return
llvm.func @other_asm(%arg0: !llvm.ptr<1>) {
  %clk = llvm.inline_asm has_side_effects "mov.u32 $0, %clock;", "=r" : () -> i32
  %note = llvm.inline_asm "// proton start not_a_marker", "=r" : () -> i32
  llvm.inline_asm has_side_effects "//@proton start glued", "" : () -> ()
  %m = llvm.inline_asm has_side_effects "  // @proton start   spaced name  ", "=l" : () -> i64
  llvm.store %m, %arg0 : i64, !llvm.ptr<1>
  llvm.store %clk, %arg0 : i32, !llvm.ptr<1>
  llvm.store %note, %arg0 : i32, !llvm.ptr<1>
  llvm.inline_asm has_side_effects "// @proton end spaced name", "" : () -> ()
  llvm.return
}

// -----

// Records already in the IR are kept and take part in no merging with
// markers of a different name.
// CHECK-LABEL: llvm.func @mixed
// CHECK-NEXT:    proton.record start "outer"
// CHECK-NEXT:    proton.record start "inner"
// CHECK-NEXT:    proton.record end "inner"
// CHECK-NEXT:    proton.record end "outer"
llvm.func @mixed(%arg0: !llvm.ptr<1>) {
  proton.record start "outer"
  llvm.inline_asm has_side_effects "// @proton start inner", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton end inner", "" : () -> ()
  proton.record end "outer"
  llvm.return
}

// -----

// A ';loc=' suffix (TTGIR override files) gives the record its location,
// whatever the carrier's debug location says.
// CHECK-LABEL: llvm.func @located
// CHECK-NEXT:    proton.record start "load x"{{$}}
// LOC-LABEL:     llvm.func @located
// LOC-NEXT:        proton.record start "load x" loc(#[[LOC:.+]])
// LOC:           #[[LOC]] = loc("/d/HASH/k.ttgir":9:5)
llvm.func @located(%arg0: !llvm.ptr<1>) {
  llvm.inline_asm has_side_effects "// @proton start load x ;loc=/d/HASH/k.ttgir:9:5", "" : () -> ()
  llvm.return
} loc("kernel.py":1:1)
