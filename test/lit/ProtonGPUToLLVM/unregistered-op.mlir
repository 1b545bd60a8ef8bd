// RUN: proton-opt %s --convert-protongpu-to-llvm --allow-unregistered-dialect | FileCheck %s
// Ops of other (even unregistered) dialects are left alone.
// CHECK: "foo.bar"() : () -> ()
llvm.func @f() {
  "foo.bar"() : () -> ()
  llvm.return
}
