#include "proton/Compiler/Instrument.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Target/LLVMIR/Import.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "proton/Analysis/SourceLocation.h"
#include "proton/Compiler/Registration.h"
#include "proton/Dialect/ProtonGPU/IR/Dialect.h"
#include "proton/Transforms/Passes.h"
#include "llvm/AsmParser/LLParser.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unistd.h>

using namespace mlir;
namespace pgpu = mlir::proton::gpu;
using mlir::proton::describeLocation;

namespace {

std::string formatDiagnostic(Diagnostic &diag) {
  std::string out;
  llvm::raw_string_ostream os(out);
  std::string where = describeLocation(diag.getLocation());
  if (!where.empty())
    os << where << ": ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  case DiagnosticSeverity::Note:
    os << "note: ";
    break;
  }
  os << diag.str() << "\n";
  for (Diagnostic &note : diag.getNotes())
    os << formatDiagnostic(note);
  return out;
}

llvm::json::Object layoutJson(pgpu::LayoutAttr layout) {
  llvm::json::Array warps;
  for (int32_t w : layout.getWarps())
    warps.push_back(w);
  return llvm::json::Object{
      {"buffer_type", pgpu::stringifyBufferType(layout.getBufferType()).str()},
      {"granularity",
       pgpu::stringifyGranularity(layout.getGranularity()).str()},
      {"clock_bits", layout.getClockBits()},
      {"num_warps", layout.getNumWarps()},
      {"warps", std::move(warps)},
      {"segment_bytes", layout.getSegmentBytes()},
      {"record_bytes", layout.getRecordBytes()},
      {"capacity", layout.getCapacity()},
      {"segment_header_bytes", pgpu::LayoutAttr::kSegmentHeaderBytes},
      {"overhang", layout.getOverhang()},
      {"block_bytes", layout.getBlockBytes()},
      {"bytes_per_cta", layout.getBytesPerCta()},
      {"shared_offset", layout.getSharedOffset()},
      {"shared_bytes", layout.getSharedBytes()},
  };
}

/// Reads the scope table and layout the passes left on the kernels into
/// `meta`, and removes them so that they do not reach the LLVM IR. Returns
/// why the module cannot be instrumented (empty if it can).
std::string collectMetadata(ModuleOp module, llvm::json::Object &meta) {
  std::vector<std::string> others;
  std::string first;
  meta = llvm::json::Object{{"instrumented", false}};
  module.walk([&](LLVM::LLVMFuncOp kernel) {
    auto layout =
        kernel->getAttrOfType<pgpu::LayoutAttr>(pgpu::kLayoutAttrName);
    auto scopes = kernel->getAttrOfType<ArrayAttr>(pgpu::kScopeTableAttrName);
    kernel->removeAttr(pgpu::kLayoutAttrName);
    kernel->removeAttr(pgpu::kScopeTableAttrName);
    if (!layout || !scopes)
      return;
    llvm::json::Array table;
    for (auto entry : scopes.getAsRange<pgpu::ScopeEntryAttr>()) {
      llvm::json::Object row{
          {"id", entry.getId()},
          {"name", entry.getName()},
          {"parent", entry.getParent()},
          {"loc", entry.getLoc()},
          {"kind", mlir::proton::stringifyIdKind(entry.getKind())}};
      // A value's type ("i32" or "f32"), for decoding its 32 bits.
      if (!entry.getDtype().empty())
        row["dtype"] = entry.getDtype();
      table.push_back(std::move(row));
    }
    if (meta["instrumented"] == llvm::json::Value(true))
      others.push_back(kernel.getName().str());
    else
      first = kernel.getName().str();
    meta["instrumented"] = true;
    meta["kernel"] = kernel.getName();
    meta["scopes"] = std::move(table);
    meta["profile_scratch_size"] = layout.getBytesPerCta();
    meta["profile_scratch_align"] = 16;
    meta["shared_memory_total"] =
        layout.getBufferType() == pgpu::BufferType::shared
            ? layout.getSharedOffset() + layout.getSharedBytes()
            : 0u;
    meta["layout"] = layoutJson(layout);
  });
  // One profile_scratch layout per launch: a module is one kernel.
  if (!others.empty())
    return "kernels @" + first + " and @" + others.front() +
           " in one module both have scopes; Proton instruments one kernel "
           "per module (Triton's)\n";
  return "";
}

/// A string attribute on a kernel parameter, such as "nvvm.grid_constant"
/// on TMA descriptors. MLIR's LLVM IR import drops the ones it does not
/// model; losing grid_constant makes the backend copy the descriptor to
/// local memory, and TMA on that copy faults.
struct StringParamAttr {
  std::string function;
  unsigned index;
  std::string kind, value;
};

std::vector<StringParamAttr> collectStringParamAttrs(const llvm::Module &m) {
  std::vector<StringParamAttr> found;
  for (const llvm::Function &f : m)
    for (unsigned i = 0; i < f.arg_size(); ++i)
      for (const llvm::Attribute &a : f.getAttributes().getParamAttrs(i))
        if (a.isStringAttribute())
          found.push_back({f.getName().str(), i, a.getKindAsString().str(),
                           a.getValueAsString().str()});
  return found;
}

void restoreStringParamAttrs(llvm::Module &m,
                             const std::vector<StringParamAttr> &attrs) {
  for (const StringParamAttr &a : attrs) {
    llvm::Function *f = m.getFunction(a.function);
    if (f && a.index < f->arg_size() &&
        !f->getAttributes().hasParamAttr(a.index, a.kind))
      f->addParamAttr(a.index,
                      llvm::Attribute::get(f->getContext(), a.kind, a.value));
  }
}

/// Triton's intrinsic declarations reach our LLVM renamed with
/// kHiddenIntrinsicPrefix (by the Python bridge's hide_intrinsics), so that
/// it cannot upgrade or rename them. Gives them their names back; where our
/// lowering declared the same intrinsic, its calls go to Triton's declaration.
/// Returns an error message, empty on success.
std::string unhideIntrinsics(llvm::Module &m) {
  llvm::StringRef prefix = ::proton::kHiddenIntrinsicPrefix;
  std::vector<llvm::Function *> hidden;
  for (llvm::Function &f : m)
    if (f.getName().starts_with(prefix))
      hidden.push_back(&f);
  for (llvm::Function *f : hidden) {
    std::string name = f->getName().drop_front(prefix.size()).str();
    if (llvm::Function *ours = m.getFunction(name)) {
      if (ours->getFunctionType() != f->getFunctionType())
        return "the instrumentation declares @" + name +
               " with another type than Triton's module";
      ours->replaceAllUsesWith(f);
      ours->eraseFromParent();
    }
    f->setName(name);
    if (f->getName() != name)
      return "could not give @" + name + " its name back";
  }
  return "";
}

/// Attribute kinds LLVM 22 puts on intrinsic declarations (when parsing
/// and exporting) that the LLVM inside Triton 3.6 cannot parse. They are
/// optimization hints only; Triton's LLVM derives its own for intrinsics.
void dropAttributesTritonCannotParse(llvm::Module &m) {
  for (llvm::Function &f : m)
    if (f.isDeclaration())
      f.removeFnAttr(llvm::Attribute::NoCreateUndefOrPoison);
}

/// Parses LLVM IR and verifies it without LLVM's fatal errors: the usual
/// parse upgrades debug info and aborts the process ("Broken module found")
/// on a module that does not verify. Returns null with `error` set instead.
std::unique_ptr<llvm::Module> parseWithoutAborting(const std::string &text,
                                                   llvm::LLVMContext &context,
                                                   std::string &error) {
  auto module = std::make_unique<llvm::Module>("triton", context);
  llvm::SMDiagnostic parseError;
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, "llvm-ir", false), llvm::SMLoc());
  llvm::LLParser parser(text, sources, parseError, module.get(), nullptr,
                        context);
  if (parser.Run(/*UpgradeDebugInfo=*/false)) {
    error = "LLVM IR parse error at line " +
            std::to_string(parseError.getLineNo()) + ":" +
            std::to_string(parseError.getColumnNo()) + ": " +
            parseError.getMessage().str() + "\n";
    return nullptr;
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  bool brokenDebugInfo = false;
  if (llvm::verifyModule(*module, &os, &brokenDebugInfo)) {
    llvm::StringRef first = llvm::StringRef(problems).split('\n').first;
    error = "the LLVM IR does not verify: " + first.str() + "\n";
    return nullptr;
  }
  // What the usual parse does with debug info it cannot use: drop it. The
  // bridge check then reports the module's named metadata as changed.
  if (brokenDebugInfo || llvm::getDebugMetadataVersionFromModule(*module) !=
                             llvm::DEBUG_METADATA_VERSION)
    llvm::StripDebugInfo(*module);
  return module;
}

/// Runs `body` with the process's stderr going to `captured`: LLVM's
/// command-line option parser writes why a value is invalid to stderr only.
template <typename Body>
bool withStderrCaptured(std::string &captured, Body body) {
  static std::mutex stderrMutex;
  std::lock_guard<std::mutex> lock(stderrMutex);
  llvm::errs().flush();
  std::fflush(stderr);
  FILE *sink = std::tmpfile();
  int saved = sink ? dup(STDERR_FILENO) : -1;
  if (saved < 0 || dup2(fileno(sink), STDERR_FILENO) < 0) {
    if (saved >= 0)
      close(saved);
    if (sink)
      std::fclose(sink);
    return body();
  }
  bool ok = body();
  llvm::errs().flush();
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::rewind(sink);
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), sink)) > 0)
    captured.append(buffer, n);
  std::fclose(sink);
  return ok;
}

/// The reasons an option string was refused, one clause each ("for the
/// --buffer-size option: '1099511627776' value invalid for uint argument!").
std::string optionReasons(const std::string &captured,
                          const std::string &pipelineError) {
  llvm::SmallVector<llvm::StringRef> lines;
  std::string joined;
  for (const std::string *text : {&captured, &pipelineError}) {
    lines.clear();
    llvm::StringRef(*text).split(lines, '\n', -1, false);
    for (llvm::StringRef line : lines) {
      line = line.trim().ltrim(": ").trim();
      if (line.empty() || line.starts_with("failed to add"))
        continue;
      if (line.consume_front("<Pass-Options-Parser>:"))
        line = line.trim();
      joined += (joined.empty() ? "" : "; ") + line.str();
    }
  }
  return joined.empty() ? "unknown option or value" : joined;
}

/// Diagnostics beyond this size are counted, not kept: a kernel with
/// thousands of bad scopes gets a readable message.
constexpr size_t kMaxDiagnosticBytes = 16 * 1024;

/// Collects the diagnostics of an instrumentation: all of them as text, one
/// per line with its source location (bounded), and the warnings one by one
/// for the metadata.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) { return collect(diag); }) {}

  const std::string &text() const { return diagnostics; }
  /// The text, with the count of diagnostics beyond the bound.
  std::string textWithCount() const {
    if (!leftOut)
      return diagnostics;
    return diagnostics + "... and " + std::to_string(leftOut) +
           " more diagnostics\n";
  }
  llvm::json::Array takeWarnings() { return std::move(warnings); }

private:
  LogicalResult collect(Diagnostic &diag) {
    // The importer warns about data-layout entries MLIR does not model; the
    // original data layout is restored on export, so they do not matter.
    if (diag.getSeverity() == DiagnosticSeverity::Warning &&
        StringRef(diag.str()).contains("data layout"))
      return success();
    std::string text = formatDiagnostic(diag);
    if (diag.getSeverity() == DiagnosticSeverity::Warning)
      warnings.push_back(StringRef(text).trim());
    if (diagnostics.size() < kMaxDiagnosticBytes)
      diagnostics += text;
    else
      ++leftOut;
    return success();
  }

  std::string diagnostics;
  size_t leftOut = 0;
  llvm::json::Array warnings;
  ScopedDiagnosticHandler handler; // last: it calls collect
};

/// A context with Proton's dialects (and passes registered).
std::unique_ptr<MLIRContext> createContext() {
  static std::once_flag registered;
  std::call_once(registered, mlir::proton::registerProtonPasses);
  DialectRegistry registry;
  mlir::proton::registerProtonDialects(registry);
  auto context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  // Messages name the problem and its source line; the offending operation
  // (often the whole kernel) is printed only when asked for.
  context->printOpOnDiagnostic(std::getenv("PROTON_DEBUG_IR") != nullptr);
  return context;
}

/// Triton's module in MLIR, with what the import drops kept for the export.
struct ImportedModule {
  OwningOpRef<ModuleOp> module;
  std::string dataLayout;
  llvm::Triple triple;
  std::vector<StringParamAttr> stringParamAttrs;
};

/// Parses `llvmIR` and imports it into `context`. Returns why it could not
/// (empty on success).
std::string importModule(const std::string &llvmIR, MLIRContext &context,
                         const DiagnosticCollector &diagnostics,
                         ImportedModule &imported) {
  llvm::LLVMContext llvmContext;
  std::string readError;
  std::unique_ptr<llvm::Module> input =
      parseWithoutAborting(llvmIR, llvmContext, readError);
  if (!input)
    return readError;
  imported.dataLayout = input->getDataLayoutStr();
  imported.triple = input->getTargetTriple();
  imported.stringParamAttrs = collectStringParamAttrs(*input);
  imported.module = translateLLVMIRToModule(std::move(input), &context,
                                            /*emitExpensiveWarnings=*/false);
  if (!imported.module)
    return diagnostics.text() + "could not import the LLVM IR\n";
  return "";
}

/// Runs --proton-pipeline{<options>} on `module`. Returns why it failed
/// (empty on success).
std::string runPipeline(ModuleOp module, const std::string &options,
                        const DiagnosticCollector &diagnostics) {
  PassManager pm(module.getContext());
  std::string pipelineError;
  llvm::raw_string_ostream pipelineErrorStream(pipelineError);
  std::string optionErrors;
  bool parsed = withStderrCaptured(optionErrors, [&] {
    return succeeded(parsePassPipeline("proton-pipeline{" + options + "}", pm,
                                       pipelineErrorStream));
  });
  if (!parsed)
    return "invalid pipeline options: " +
           optionReasons(optionErrors, pipelineError) + " (options: '" +
           options + "')\n";
  if (succeeded(pm.run(module)))
    return "";
  std::string failure = diagnostics.textWithCount();
  return failure.empty() ? "the proton pipeline failed\n" : failure;
}

/// Translates the instrumented `module` back to LLVM IR text in `llvmIR`,
/// with what the import dropped put back and Triton's intrinsic names
/// restored. Returns why it could not (empty on success).
std::string exportModule(ModuleOp module, const ImportedModule &imported,
                         const DiagnosticCollector &diagnostics,
                         std::string &llvmIR) {
  llvm::LLVMContext exportContext;
  std::unique_ptr<llvm::Module> output =
      translateModuleToLLVMIR(module, exportContext);
  if (!output)
    return diagnostics.text() + "could not export the LLVM IR\n";
  output->setDataLayout(imported.dataLayout);
  output->setTargetTriple(imported.triple);
  restoreStringParamAttrs(*output, imported.stringParamAttrs);
  std::string unhideError = unhideIntrinsics(*output);
  if (!unhideError.empty())
    return diagnostics.text() + unhideError + "\n";
  dropAttributesTritonCannotParse(*output);
  llvm::raw_string_ostream os(llvmIR);
  output->print(os, nullptr);
  return "";
}

} // namespace

// Instrument.h's API.
namespace proton {

InstrumentResult instrumentLLVMIR(const std::string &llvmIR,
                                  const std::string &options) {
  InstrumentResult result;
  auto failWith = [&result](std::string why) {
    result.diagnostics = std::move(why);
    return result;
  };
  std::unique_ptr<MLIRContext> context = createContext();
  DiagnosticCollector diagnostics(*context);
  ImportedModule imported;
  if (std::string error = importModule(llvmIR, *context, diagnostics, imported);
      !error.empty())
    return failWith(error);
  if (std::string error = runPipeline(*imported.module, options, diagnostics);
      !error.empty())
    return failWith(error);
  llvm::json::Object meta;
  if (std::string error = collectMetadata(*imported.module, meta);
      !error.empty())
    return failWith(error);
  meta["warnings"] = diagnostics.takeWarnings();
  if (meta["instrumented"] == llvm::json::Value(false)) {
    // Nothing to record: hand Triton its own text back untouched.
    result.llvmIR = llvmIR;
  } else if (std::string error = exportModule(*imported.module, imported,
                                              diagnostics, result.llvmIR);
             !error.empty()) {
    return failWith(error);
  }
  result.metadataJson =
      llvm::formatv("{0}", llvm::json::Value(std::move(meta))).str();
  result.diagnostics = diagnostics.text();
  result.ok = true;
  return result;
}

const char *llvmVersion() { return LLVM_VERSION_STRING; }

int protonOptMain(int argc, char **argv) {
  DialectRegistry registry;
  mlir::proton::registerProtonDialects(registry);
  mlir::proton::registerProtonPasses();
  return asMainReturnCode(
      MlirOptMain(argc, argv, "Proton optimizer driver\n", registry));
}

} // namespace proton
