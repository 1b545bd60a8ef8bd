#ifndef PROTON_CONVERSION_LIFTMARKERS_PASSES_TD
#define PROTON_CONVERSION_LIFTMARKERS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ProtonLiftMarkers : Pass<"proton-lift-markers", "::mlir::ModuleOp"> {
  let summary = "Lift inline-asm marker carriers into proton.record";
  let description = [{
    A marker reaches the LLVM IR as a side-effecting inline assembly call
    whose text is `// @proton start <name>` or `// @proton end <name>`
    (`proton.language` emits them). Each becomes `proton.record`. A
    tensor-valued carrier yields one call per element a thread holds:
    identical markers that follow one another in a block with no other marker
    between them are such copies and become one record (the first copy of a
    start, the last copy of an end). A carrier's result, if used, is replaced
    by zero.
  }];
  let dependentDialects = ["::mlir::proton::ProtonDialect"];
  let statistics = [
    Statistic<"numLifted", "lifted", "carriers lifted into records">,
    Statistic<"numDuplicates", "duplicates", "per-thread copies merged">
  ];
}

#endif
