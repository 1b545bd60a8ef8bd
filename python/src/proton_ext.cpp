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

/// Text from the compiler as a Python str: invalid UTF-8 (a mangled input
/// echoed in a message) becomes U+FFFD rather than a UnicodeDecodeError.
nb::str text(const std::string &bytes) {
  return nb::steal<nb::str>(
      PyUnicode_DecodeUTF8(bytes.data(), bytes.size(), "replace"));
}
} // namespace

NB_MODULE(_C, m) {
  m.doc() = "Proton's MLIR instrumentation pipeline";

  static nb::exception<CompilerError> compilerError(m, "CompilerError",
                                                    PyExc_RuntimeError);

  m.attr("HIDDEN_INTRINSIC_PREFIX") = proton::kHiddenIntrinsicPrefix;
  m.attr("LLVM_VERSION") = proton::llvmVersion();

  // The formats shared with the compiler, for proton's decoder and language.
  nb::module_ bufferFormat = m.def_submodule(
      "buffer_format", "The profile buffer's layout (docs/buffer-format.md)");
  for (const proton::NamedInt &constant : proton::bufferFormatConstants())
    bufferFormat.attr(constant.name.c_str()) = constant.value;
  nb::module_ markers =
      m.def_submodule("markers", "The text of the markers kernels carry");
  for (const proton::NamedText &text : proton::markerSyntax())
    markers.attr(text.name.c_str()) = text.value;
  nb::dict enums;
  for (const proton::EnumCases &e : proton::enums()) {
    nb::dict cases;
    for (const proton::NamedInt &c : e.cases)
      cases[c.name.c_str()] = c.value;
    enums[e.name.c_str()] = cases;
  }
  m.attr("ENUMS") = enums;
  // What each kind does (ProtonEnums.td's Proton_RecordKindCase fields), by
  // kind name; proton.compiler_exports reads them.
  auto names = [](const std::vector<std::string> &texts) {
    nb::list list;
    for (const std::string &t : texts)
      list.append(t);
    return nb::steal<nb::tuple>(PySequence_Tuple(list.ptr()));
  };
  nb::dict recordKindTraits;
  for (const proton::RecordKindInfo &k : proton::recordKindTraitTable()) {
    nb::dict traits;
    traits["id_kind"] = k.idKind;
    traits["pairing"] = k.pairing;
    traits["closes"] = k.closes;
    traits["value_types"] = names(k.valueTypes);
    traits["value_record"] =
        k.valueRecord.empty() ? nb::none() : nb::cast(k.valueRecord);
    traits["records"] = k.records;
    traits["end_bit"] = k.endBit;
    traits["recordable"] = k.recordable;
    recordKindTraits[k.name.c_str()] = traits;
  }
  m.attr("RECORD_KIND_TRAITS") = recordKindTraits;
  nb::dict idKindTraits;
  for (const proton::IdKindInfo &k : proton::idKindTraitTable()) {
    nb::dict traits;
    traits["pairing"] = k.pairing;
    traits["value_types"] = names(k.valueTypes);
    idKindTraits[k.name.c_str()] = traits;
  }
  m.attr("ID_KIND_TRAITS") = idKindTraits;
  m.def("block_bytes", &proton::blockBytes, nb::arg("segment_bytes"),
        nb::arg("overhang") = 0,
        "The bytes of one segment's block in profile_scratch: header, records "
        "and overhang, padded to whole sectors (docs/buffer-format.md).");

  m.def(
      "instrument",
      [](const std::string &llvmIR, const std::string &options) {
        proton::InstrumentResult result;
        {
          nb::gil_scoped_release release;
          result = proton::instrumentLLVMIR(llvmIR, options);
        }
        if (!result.ok) {
          PyErr_SetObject(compilerError.ptr(), text(result.diagnostics).ptr());
          throw nb::python_error();
        }
        return nb::make_tuple(text(result.llvmIR), text(result.metadataJson),
                              text(result.diagnostics));
      },
      nb::arg("llvm_ir"), nb::arg("options") = "",
      "Run --proton-pipeline{options} on LLVM IR text. Returns (llvm_ir, "
      "metadata_json, warnings). Raises CompilerError with the diagnostics.");
}
