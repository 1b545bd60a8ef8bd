// The Python extension: a thin nanobind layer over the compiler's plain C++
// interface. It is built with RTTI; the compiler library is not.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "proton/Compiler/Instrument.h"

namespace nb = nanobind;

namespace {
struct CompilerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
} // namespace

NB_MODULE(_C, m) {
  m.doc() = "Proton's MLIR instrumentation pipeline";

  nb::exception<CompilerError>(m, "CompilerError", PyExc_RuntimeError);

  m.attr("HIDDEN_INTRINSIC_PREFIX") = proton::kHiddenIntrinsicPrefix;
  m.attr("LLVM_VERSION") = proton::llvmVersion();

  m.def(
      "instrument",
      [](const std::string &llvmIR, const std::string &options) {
        proton::InstrumentResult result;
        {
          nb::gil_scoped_release release;
          result = proton::instrumentLLVMIR(llvmIR, options);
        }
        if (!result.ok)
          throw CompilerError(result.diagnostics);
        return std::make_tuple(result.llvmIR, result.metadataJson,
                               result.diagnostics);
      },
      nb::arg("llvm_ir"), nb::arg("options") = "",
      "Run --proton-pipeline{options} on LLVM IR text. Returns (llvm_ir, "
      "metadata_json, warnings). Raises CompilerError with the diagnostics.");
}
