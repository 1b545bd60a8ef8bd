// RUN: proton-opt %s | FileCheck %s
// RUN: proton-opt %s | proton-opt | FileCheck %s
// RUN: proton-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of proton.record: both kinds and every character a scope name
// may hold.

// CHECK-LABEL: llvm.func @records
// CHECK-NEXT:    proton.record start "load"
// CHECK-NEXT:    proton.record end "load"
// CHECK-NEXT:    llvm.return
// GENERIC-LABEL: sym_name = "records"
// GENERIC:       "proton.record"() <{kind = 0 : i32, name = "load"}> : () -> ()
// GENERIC-NEXT:  "proton.record"() <{kind = 1 : i32, name = "load"}> : () -> ()
llvm.func @records() {
  proton.record start "load"
  proton.record end "load"
  llvm.return
}

// CHECK-LABEL: llvm.func @names
// CHECK-NEXT:    proton.record start "Tile_0-1.a:b/c[2](3)<4>,5 +6=7#8@9"
// CHECK-NEXT:    proton.record start "x"
// CHECK-NEXT:    proton.record end "x"
// CHECK-NEXT:    proton.record end "Tile_0-1.a:b/c[2](3)<4>,5 +6=7#8@9"
llvm.func @names() {
  proton.record start "Tile_0-1.a:b/c[2](3)<4>,5 +6=7#8@9"
  proton.record start "x"
  proton.record end "x"
  proton.record end "Tile_0-1.a:b/c[2](3)<4>,5 +6=7#8@9"
  llvm.return
}

// The generic form parses too, with the kind as its integer value.
// CHECK-LABEL: llvm.func @generic
// CHECK-NEXT:    proton.record start "g"
// CHECK-NEXT:    proton.record end "g"
llvm.func @generic() {
  "proton.record"() <{kind = 0 : i32, name = "g"}> : () -> ()
  "proton.record"() <{kind = 1 : i32, name = "g"}> : () -> ()
  llvm.return
}
