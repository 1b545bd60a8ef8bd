#include "proton/Compiler/Registration.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMIRToLLVMTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/LLVMIRToNVVMTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "proton/Conversion/LiftMarkers/Passes.h"
#include "proton/Conversion/ProtonGPUToLLVM/Passes.h"
#include "proton/Conversion/ProtonToProtonGPU/Passes.h"
#include "proton/Dialect/ProtonGPU/IR/Dialect.h"
#include "proton/Transforms/Passes.h"
#include "proton/Transforms/Pipeline.h"

void mlir::proton::registerProtonDialects(DialectRegistry &registry) {
  registry.insert<DLTIDialect, LLVM::LLVMDialect, NVVM::NVVMDialect,
                  ROCDL::ROCDLDialect, ProtonDialect, gpu::ProtonGPUDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerLLVMDialectImport(registry);
  registerNVVMDialectTranslation(registry);
  registerNVVMDialectImport(registry);
  registerROCDLDialectTranslation(registry);
}

void mlir::proton::registerProtonPasses() {
  registerProtonLiftMarkers();
  registerConvertProtonToProtonGPU();
  registerConvertProtonGPUToLLVM();
  registerProtonCheckScopes();
  registerProtonMmaScopes();
  registerProtonScheduleStores();
  registerProtonAddSchedBarriers();
  registerProtonStripMetadata();
  registerProtonPipeline();
  registerMem2RegPass();
}
