// RUN: proton-opt %s --convert-proton-to-protongpu | FileCheck %s
// RUN: proton-opt %s --convert-proton-to-protongpu --convert-protongpu-to-llvm | FileCheck %s --check-prefix=LLVM

// Scopes keep the first ids; then one id per event name (all its starts and
// ends) and one per mark, whose parent is the scope open where it is. The
// table says each id's kind.
// CHECK-LABEL: llvm.func ptx_kernelcc @events
// CHECK-SAME:    proton.scopes = {{\[}}#proton_gpu.scope_entry<id = 0, kind = scope, name = "loop", parent = -1, loc = "k.py:1:1">, #proton_gpu.scope_entry<id = 1, kind = event, name = "copy", parent = -1, loc = "k.py:2:1">, #proton_gpu.scope_entry<id = 2, kind = mark, name = "tick", parent = 0, loc = "k.py:3:1">]
// CHECK:         proton_gpu.circular_store start %{{.+}}, %{{.+}} scope 0 : i64
// CHECK:         proton_gpu.circular_store event_start %{{.+}}, %{{.+}} scope 1 : i64
// CHECK:         proton_gpu.circular_store mark %{{.+}}, %{{.+}} scope 2 : i64
// CHECK:         proton_gpu.circular_store event_end %{{.+}}, %{{.+}} scope 1 : i64
// CHECK:         proton_gpu.circular_store event_start %{{.+}}, %{{.+}} scope 1 : i64
// CHECK:         proton_gpu.circular_store end %{{.+}}, %{{.+}} scope 0 : i64
// An event end sets the end bit above its id, a mark and an event start do
// not: tags (id | end << 15) << 16.
// LLVM-LABEL: llvm.func ptx_kernelcc @events
// LLVM:         llvm.mlir.constant(0 : i32) : i32
// LLVM:         llvm.mlir.constant(65536 : i32) : i32
// LLVM:         llvm.mlir.constant(131072 : i32) : i32
// LLVM:         llvm.mlir.constant(-2147418112 : i32) : i32
// LLVM:         llvm.mlir.constant(65536 : i32) : i32
// LLVM:         llvm.mlir.constant(-2147483648 : i32) : i32
llvm.func ptx_kernelcc @events(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1> {llvm.nocapture, llvm.readnone}) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  proton.record start "loop" loc("k.py":1:1)
  proton.record event_start "copy" loc("k.py":2:1)
  proton.record mark "tick" loc("k.py":3:1)
  proton.record event_end "copy" loc("k.py":4:1)
  proton.record event_start "copy" loc("k.py":5:1)
  proton.record end "loop"
  llvm.return
}
