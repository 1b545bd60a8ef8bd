#ifndef PROTON_DIALECT_TD
#define PROTON_DIALECT_TD

include "mlir/IR/OpBase.td"

def Proton_Dialect : Dialect {
  let name = "proton";
  let cppNamespace = "::mlir::proton";
  let summary = "Source-level intra-kernel profiling markers";
  let description = [{
    The `proton` dialect holds the profiling markers a user places in a kernel:
    `proton.record start "name"` and `proton.record end "name"`. They carry no
    values; the lowering to `proton_gpu` decides how a record is measured and
    stored.
  }];
}

#endif
