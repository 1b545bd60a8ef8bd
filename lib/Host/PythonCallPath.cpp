#include "proton/Host/PythonCallPath.h"

#include "proton/Host/CallPath.h"

#include <Python.h>
#include <frameobject.h>

#include <algorithm>
#include <map>
#include <string_view>

namespace proton::host {
namespace {

// Both caches are only touched with the GIL held.
std::vector<std::string> skippedPrefixes;
std::map<std::pair<PyObject *, int>, uint32_t> frameNames;
std::map<PyObject *, bool> skippedCode;

// The interned name of a frame at `line` of `code`, or kNoName when its file
// is under a skipped prefix.
uint32_t frameName(PyCodeObject *code, int line) {
  PyObject *key = reinterpret_cast<PyObject *>(code);
  auto skipped = skippedCode.find(key);
  if (skipped == skippedCode.end()) {
    const char *file = PyUnicode_AsUTF8(code->co_filename);
    bool skip = false;
    for (const std::string &prefix : skippedPrefixes)
      skip |= file && std::string_view(file).substr(0, prefix.size()) == prefix;
    Py_INCREF(key); // keeps the code object, hence the key, alive
    skipped = skippedCode.emplace(key, skip).first;
  }
  if (skipped->second)
    return kNoName;
  auto found = frameNames.find({key, line});
  if (found != frameNames.end())
    return found->second;
  const char *file = PyUnicode_AsUTF8(code->co_filename);
  const char *function = PyUnicode_AsUTF8(code->co_name);
  std::string name = std::string(file ? file : "?") + ":" +
                     std::to_string(line) + "@" + (function ? function : "?");
  uint32_t id = callPaths().intern(name);
  frameNames.emplace(std::make_pair(key, line), id);
  return id;
}

// Python 3.13 made the interpreter's finalizing check public.
bool interpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// The ContextCapture for context="python": the launching thread's frames,
// outermost first, below `base`. Called from launch callbacks, on any thread.
uint32_t capturePythonContext(uint32_t base) {
  if (!Py_IsInitialized() || interpreterFinalizing())
    return base;
  std::vector<uint32_t> names; // innermost first
  PyGILState_STATE gil = PyGILState_Ensure();
  PyFrameObject *frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  while (frame) {
    PyCodeObject *code = PyFrame_GetCode(frame);
    uint32_t name = frameName(code, PyFrame_GetLineNumber(frame));
    if (name != kNoName)
      names.push_back(name);
    Py_DECREF(code);
    PyFrameObject *back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  PyGILState_Release(gil);
  std::reverse(names.begin(), names.end());
  return callPaths().descend(base, names.data(), names.size(), NodeKind::Frame);
}

} // namespace

void setPythonContext(bool enabled, std::vector<std::string> prefixes) {
  if (prefixes != skippedPrefixes) {
    // Which code objects are skipped depends on the prefixes.
    for (auto &[code, skip] : skippedCode)
      Py_DECREF(code);
    skippedCode.clear();
  }
  skippedPrefixes = std::move(prefixes);
  setContextCapture(enabled ? capturePythonContext : nullptr);
}

} // namespace proton::host
