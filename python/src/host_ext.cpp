// proton._host: the host profiler's runtime (CUPTI, rocprofiler-sdk, and
// ROCTracer where built), a plain binding over lib/Host. Launch bookkeeping
// stays in C++; Python only sees per-session results at finalize. What needs
// Python itself (the launch's Python call path, the Triton launch hook's
// metadata) is here; everything else is in lib/Host.
#include "proton/Host/ActivityStore.h"
#include "proton/Host/CallPath.h"
#include "proton/Host/CuptiApi.h"
#include "proton/Host/CuptiTracer.h"
#include "proton/Host/Demangle.h"
#include "proton/Host/PackedRows.h"
#include "proton/Host/PcSampling.h"
#include "proton/Host/RocprofilerTracer.h"
#include "proton/Host/RoctracerTracer.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <Python.h>
#include <frameobject.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <stdexcept>

namespace nb = nanobind;
using namespace proton::host;

namespace {

void raiseIfError(const std::string &error) {
  if (!error.empty())
    throw std::runtime_error(error);
}

void checkSlot(int slot) {
  if (slot < 0 || slot >= kMaxSessions)
    throw nb::value_error("session slot out of range");
}

template <typename T> nb::bytes packed(const std::vector<T> &rows) {
  return nb::bytes(reinterpret_cast<const char *>(rows.data()),
                   rows.size() * sizeof(T));
}

// --- context="python": the launch's Python call path --------------------
// Frames are named "file:line@function"; frames from files under a skipped
// prefix (the profiler's and Triton's own code) are left out. Both caches
// are only touched with the GIL held.
std::vector<std::string> skippedPrefixes;
std::map<std::pair<PyObject *, int>, uint32_t> frameNames;
std::map<PyObject *, bool> skippedCode;

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

// --- hook="triton" ---------------------------------------------------------
// Called by Triton before each launch with its LazyDict of launch metadata.
// In C++ because it runs once per launch. The usual LazyDict holds one
// launch_metadata call: it is made here directly, which spares
// LazyDict.get's merged copy of the dict; other hooks in the chain can
// still call get().
// proton.hooks.launch.id: a context variable holding the id of the launch
// the hook last saw on this thread (upstream's scripts read it after a launch).
PyObject *launchIdVar = nullptr; // strong reference, set once per process
std::atomic<uint64_t> nextLaunchId{0};

void setLaunchIdVar(nb::handle var) {
  if (!PyContextVar_CheckExact(var.ptr()))
    throw nb::type_error("set_launch_id_var takes a contextvars.ContextVar");
  Py_XDECREF(launchIdVar);
  launchIdVar = Py_NewRef(var.ptr());
}

// Optional Python callables (strong references, set per process):
// launchFilter(kernel name) -> bool decides whether a launch's metadata is
// evaluated and kept (LaunchHook.configure); launchExtras(data, raw kernel
// name, kernel name) takes what C++ does not keep itself: metrics other than
// flops8..flops64 and bytes, and values that are not plain numbers (device
// tensors).
PyObject *launchFilter = nullptr;
PyObject *launchExtras = nullptr;

void setCallable(PyObject *&slot, nb::handle callable, const char *what) {
  if (!callable.is_none() && !PyCallable_Check(callable.ptr()))
    throw nb::type_error(
        (std::string(what) + " must be callable or None").c_str());
  Py_XDECREF(slot);
  slot = callable.is_none() ? nullptr : Py_NewRef(callable.ptr());
}

bool passesFilter(PyObject *name) {
  if (!launchFilter || !name)
    return true;
  nb::object keep = nb::steal(PyObject_CallOneArg(launchFilter, name));
  if (!keep.is_valid())
    throw nb::python_error();
  int truth = PyObject_IsTrue(keep.ptr());
  if (truth < 0)
    throw nb::python_error();
  return truth;
}

void tritonLaunchHook(nb::handle metadata) {
  if (launchIdVar) {
    nb::object id = nb::steal(PyLong_FromUnsignedLongLong(
        nextLaunchId.fetch_add(1, std::memory_order_relaxed)));
    nb::object token = nb::steal(PyContextVar_Set(launchIdVar, id.ptr()));
    if (!token.is_valid())
      throw nb::python_error();
  }
  if (metadata.is_none())
    return;
  static PyObject *extrasAttr = PyUnicode_InternFromString("extras");
  static PyObject *dataAttr = PyUnicode_InternFromString("data");
  static PyObject *nameKey = PyUnicode_InternFromString("name");
  nb::object extras = nb::steal(PyObject_GetAttr(metadata.ptr(), extrasAttr));
  if (!extras.is_valid())
    throw nb::python_error();
  if (PyList_Check(extras.ptr()) && PyList_GET_SIZE(extras.ptr()) == 0)
    return; // the kernel has no launch_metadata function
  // The kernel's own name, before launch_metadata's result is merged in.
  nb::object base = nb::steal(PyObject_GetAttr(metadata.ptr(), dataAttr));
  if (!base.is_valid())
    throw nb::python_error();
  nb::object kernelName = PyDict_Check(base.ptr())
                              ? nb::borrow(PyDict_GetItem(base.ptr(), nameKey))
                              : nb::object();
  bool namedKernel = kernelName.is_valid() && PyUnicode_Check(kernelName.ptr());
  if (namedKernel && !passesFilter(kernelName.ptr()))
    return; // filtered out by its own name: launch_metadata is not evaluated
  LaunchMetadataScope metadataScope(
      namedKernel ? callPaths().intern(PyUnicode_AsUTF8(kernelName.ptr()))
                  : kNoName);
  nb::object data;
  PyObject *only =
      PyList_Check(extras.ptr()) && PyList_GET_SIZE(extras.ptr()) == 1
          ? PyList_GET_ITEM(extras.ptr(), 0)
          : nullptr; // borrowed
  if (only && PyTuple_Check(only) && PyTuple_GET_SIZE(only) == 2 &&
      PyTuple_Check(PyTuple_GET_ITEM(only, 1))) {
    data = nb::steal(PyObject_Call(PyTuple_GET_ITEM(only, 0),
                                   PyTuple_GET_ITEM(only, 1), nullptr));
    if (!data.is_valid())
      throw nb::python_error(); // launch_metadata raised: the launch fails with
                                // its error
  } else {
    data = metadata.attr("get")();
  }
  metadataScope.close();
  if (!PyDict_Check(data.ptr()))
    throw nb::type_error(
        "a Triton launch_metadata function must return a dict");
  PyObject *name = PyDict_GetItem(data.ptr(), nameKey); // borrowed
  if (name && PyUnicode_Check(name) && !passesFilter(name))
    return; // filtered out by the name launch_metadata gave it
  static const char *keys[5] = {"flops8", "flops16", "flops32", "flops64",
                                "bytes"};
  static PyObject *keyObjects[5] = {
      PyUnicode_InternFromString(keys[0]), PyUnicode_InternFromString(keys[1]),
      PyUnicode_InternFromString(keys[2]), PyUnicode_InternFromString(keys[3]),
      PyUnicode_InternFromString(keys[4])}; // made once, never freed
  // The keys kept here or never metrics: any other hands the dict over.
  static PyObject *knownKeys = [] {
    PyObject *set = PySet_New(nullptr);
    for (const char *key : {"flops8", "flops16", "flops32", "flops64", "bytes",
                            "name", "function", "stream"})
      PySet_Add(set, PyUnicode_InternFromString(key));
    return set; // made once, never freed
  }();
  double values[5] = {0, 0, 0, 0, 0};
  bool any = false, handOver = false;
  for (int i = 0; i < 5; ++i) {
    PyObject *value = PyDict_GetItem(data.ptr(), keyObjects[i]); // borrowed
    if (!value)
      continue;
    values[i] = PyFloat_AsDouble(value);
    if (values[i] == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      values[i] = 0;
      if (launchExtras) {
        handOver = true; // a tensor, a list: the Python side reads it
        continue;
      }
      PyObject *shown = name ? name : kernelName.ptr();
      std::string kernel =
          shown && PyUnicode_Check(shown) ? PyUnicode_AsUTF8(shown) : "?";
      throw nb::value_error(("launch_metadata of kernel " + kernel +
                             " gave a non-numeric '" + keys[i] + "'")
                                .c_str());
    }
    any |= values[i] != 0;
  }
  if (launchExtras && !handOver) {
    // Any other key is a metric of its own (e.g. "flops", "extra_metric").
    PyObject *key, *value;
    Py_ssize_t position = 0;
    while (!handOver && PyDict_Next(data.ptr(), &position, &key, &value)) {
      int known = PySet_Contains(knownKeys, key); // one hash lookup a key
      if (known < 0)
        throw nb::python_error(); // an unhashable key
      handOver = !known;
    }
  }
  // A "name" other than the kernel's own renames this launch's node, as
  // Triton's profiler does (e.g. "matmul_4096x4096x4096").
  uint32_t renamed = kNoName;
  if (name && PyUnicode_Check(name) && kernelName.is_valid()) {
    if (PyObject_RichCompareBool(name, kernelName.ptr(), Py_NE) == 1) {
      renamed = callPaths().intern(PyUnicode_AsUTF8(name));
      any = true;
    }
  }
  if (handOver) {
    nb::object shownName = nb::borrow(name && PyUnicode_Check(name) ? name
                                      : kernelName.is_valid() ? kernelName.ptr()
                                                              : Py_None);
    nb::object done = nb::steal(PyObject_CallFunctionObjArgs(
        launchExtras, data.ptr(), namedKernel ? kernelName.ptr() : Py_None,
        shownName.ptr(), nullptr));
    if (!done.is_valid())
      throw nb::python_error();
  }
  if (!any)
    return;
  const double flops[4] = {values[0], values[1], values[2], values[3]};
  setLaunchMetrics(flops, values[4], renamed);
}

// --- the module, by area -----------------------------------------------------

void bindCupti(nb::module_ &m) {
  m.def("load_cupti",
        [](const std::string &path) { raiseIfError(loadCupti(path)); });
  m.def("cupti_version", &cuptiVersion);
  m.def("cupti_path", []() { return cupti().path; });
  m.def("start_cupti", []() { raiseIfError(startCuptiTracing()); });
  m.def("flush_cupti", []() {
    nb::gil_scoped_release release; // buffer callbacks may run on this thread
    raiseIfError(flushCuptiTracing());
  });
  m.def("stop_cupti", []() {
    nb::gil_scoped_release release;
    raiseIfError(stopCuptiTracing());
  });
  m.def("cupti_tracing", &cuptiTracing);
  m.def("set_pc_sampling", [](bool enabled, uint32_t interval) {
    nb::gil_scoped_release release; // switching off drains CUPTI
    setPcSampling(enabled, interval);
  });
  m.def("pc_sampling_error", []() { return pcSampler().error(); });
  m.def("set_nvtx", &setNvtxEnabled);
  m.def("nvtx_enabled", &nvtxEnabled);
}

// ROCTracer (AMD): the same launch bookkeeping and store as CUPTI.
void bindRoctracer(nb::module_ &m) {
  m.def("roctracer_built", &roctracerBuilt);
  m.def("load_roctracer", [](const std::string &path) {
    raiseIfError(loadRoctracerLibrary(path));
  });
  m.def("roctracer_path", &roctracerLibraryPath);
  m.def("roctracer_version", &roctracerVersion);
  m.def("start_roctracer", []() { raiseIfError(startRoctracerTracing()); });
  m.def("flush_roctracer", []() {
    nb::gil_scoped_release
        release; // synchronizes; buffer callbacks may run on this thread
    raiseIfError(flushRoctracerTracing());
  });
  m.def("stop_roctracer", []() {
    nb::gil_scoped_release release;
    raiseIfError(stopRoctracerTracing());
  });
  m.def("roctracer_tracing", &roctracerTracing);
}

// rocprofiler-sdk (AMD, preferred over ROCTracer): the same bookkeeping.
void bindRocprofiler(nb::module_ &m) {
  m.def("load_rocprofiler", [](const std::string &path) {
    raiseIfError(loadRocprofilerLibrary(path));
  });
  m.def("rocprofiler_path", &rocprofilerLibraryPath);
  m.def("rocprofiler_version", &rocprofilerVersion);
  m.def("rocprofiler_configured", &rocprofilerConfigured);
  m.def("start_rocprofiler", []() {
    nb::gil_scoped_release release; // the SDK may replay code objects
    raiseIfError(startRocprofilerTracing());
  });
  m.def("flush_rocprofiler", []() {
    nb::gil_scoped_release
        release; // synchronizes; buffer callbacks may run on this thread
    raiseIfError(flushRocprofilerTracing());
  });
  m.def("stop_rocprofiler", []() {
    nb::gil_scoped_release release;
    raiseIfError(stopRocprofilerTracing());
  });
  m.def("rocprofiler_tracing", &rocprofilerTracing);
}

// Where launches belong: scopes, NVTX ranges, states, Python frames.
void bindScopes(nb::module_ &m) {
  m.def("set_python_context",
        [](bool enabled, std::vector<std::string> prefixes) {
          if (prefixes != skippedPrefixes) {
            // Which code objects are skipped depends on the prefixes.
            for (auto &[code, skip] : skippedCode)
              Py_DECREF(code);
            skippedCode.clear();
          }
          skippedPrefixes = std::move(prefixes);
          setContextCapture(enabled ? capturePythonContext : nullptr);
        });
  m.def("enter_scope",
        [](const std::string &name) { return enterScope(name, false); });
  // Closes the innermost scope (which must be `name` when one is given) and
  // returns its node; an NVTX range still open inside it is closed with it.
  m.def(
      "exit_scope",
      [](std::optional<std::string> name) {
        uint32_t node = kRootNode;
        std::string error = exitScope(name, node);
        if (!error.empty())
          throw nb::value_error(error.c_str());
        return node;
      },
      nb::arg("name").none() = nb::none());
  m.def("scope_depth", []() { return threadContext().scopes.size() - 1; });
  m.def("nvtx_push",
        [](const std::string &name) { return enterScope(name, true); });
  m.def("nvtx_pop", &popNvtxRange);
  m.def("scope_stack", &scopeStack);
  m.def("current_scope_node", []() { return threadContext().scopes.back(); });
  m.def("current_launch_node", &currentLaunchNode);
  // A scope's metrics while a state is set go to the state's node below it,
  // as launches do.
  m.def("state_node", &belowState);
  m.def(
      "set_state",
      [](std::optional<std::string> name) { return setState(name); },
      nb::arg("name").none()); // None clears the state
}

void bindLaunchMetrics(nb::module_ &m) {
  m.def("set_launch_metrics", [](double flops8, double flops16, double flops32,
                                 double flops64, double bytes) {
    const double flops[4] = {flops8, flops16, flops32, flops64};
    setLaunchMetrics(flops, bytes, kNoName);
  });
  m.def("triton_launch_hook", &tritonLaunchHook);
  m.def("set_launch_id_var", &setLaunchIdVar);
  m.def("mark_main_thread", &markMainThread);
  m.def("set_launch_metadata_per_kernel", &setLaunchMetadataPerKernel);
  m.def(
      "set_launch_filter",
      [](nb::handle f) { setCallable(launchFilter, f, "a launch filter"); },
      nb::arg("filter").none());
  m.def(
      "set_launch_extras",
      [](nb::handle f) {
        setCallable(launchExtras, f, "a launch extras handler");
      },
      nb::arg("handler").none());
  m.def("clear_launch_metrics", &clearLaunchMetrics);
}

void bindSessions(nb::module_ &m) {
  m.def("set_active_sessions", &setActiveSessions);
  m.def("open_session", [](int slot, bool keepTrace, uint64_t traceCap) {
    checkSlot(slot);
    activityStore().openSession(slot, keepTrace, traceCap);
    pcSampler().clearSession(slot);
  });
  // (aggregate rows, trace rows, trace rows dropped over the cap).
  m.def("take_session", [](int slot) {
    checkSlot(slot);
    SessionResult result = activityStore().takeSession(slot);
    return nb::make_tuple(packed(packAggregates(result.aggregates)),
                          packed(packTrace(result.trace)), result.traceDropped);
  });
  // [(node, kernel, line, CUPTI stall reason, samples)]: few rows (lines x
  // reasons per kernel and context), so plain tuples.
  m.def("take_pc_samples", [](int slot) {
    checkSlot(slot);
    std::vector<
        std::tuple<uint32_t, std::string, std::string, std::string, uint64_t>>
        rows;
    for (PcSampleRow &row : pcSampler().takeSession(slot))
      rows.emplace_back(row.node, std::move(row.kernel), std::move(row.line),
                        std::move(row.stall), row.count);
    return rows;
  });
  m.def("counters", []() {
    TracerCounters counters = tracerCounters();
    nb::dict out;
    out["launches"] = counters.launches;
    out["activities"] =
        counters.activities + roctracerActivities() + rocprofilerActivities();
    out["dropped_records"] = counters.droppedRecords; // CUPTI's
    out["rocprofiler_dropped_records"] = rocprofilerDropped();
    out["unattributed"] = activityStore().unattributed();
    out["graph_nodes_kept"] = activityStore().graphNodesKept();
    out["uncaptured_graph_kernels"] = activityStore().uncapturedGraphKernels();
    out["pc_samples"] = pcSampler().totalSamples();
    out["pc_samples_dropped"] = pcSampler().droppedSamples();
    return out;
  });
}

// The calling-context tree and the packed rows' layouts and kinds, which
// python/proton/host/records.py turns into numpy dtypes.
void bindRecords(nb::module_ &m) {
  m.def("intern",
        [](const std::string &name) { return callPaths().intern(name); });
  m.def("names", []() { return callPaths().names(); });
  m.def("nodes", []() { return packed(packNodes(callPaths().nodes())); });
  m.def("demangle", &demangle);
  nb::dict layouts;
  for (const RowLayout &layout : kRowLayouts) {
    nb::list fields;
    for (size_t i = 0; i < layout.count; ++i) {
      const RowField &field = layout.fields[i];
      fields.append(
          nb::make_tuple(field.name, field.type, field.count, field.offset));
    }
    nb::dict entry;
    entry["itemsize"] = layout.itemsize;
    entry["fields"] = fields;
    layouts[layout.name] = entry;
  }
  m.attr("ROW_LAYOUTS") = layouts;
  nb::dict nodeKinds, activityKinds;
  for (size_t i = 0; i < std::size(kNodeKindNames); ++i)
    nodeKinds[nb::int_(i)] = kNodeKindNames[i];
  for (size_t i = 0; i < std::size(kActivityKindNames); ++i)
    activityKinds[nb::int_(i)] = kActivityKindNames[i];
  m.attr("NODE_KINDS") = nodeKinds;
  m.attr("ACTIVITY_KINDS") = activityKinds;
}

} // namespace

NB_MODULE(_host, m) {
  bindCupti(m);
  bindRoctracer(m);
  bindRocprofiler(m);
  bindScopes(m);
  bindLaunchMetrics(m);
  bindSessions(m);
  bindRecords(m);
}
