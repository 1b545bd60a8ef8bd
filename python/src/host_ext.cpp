// proton._host: the host profiler's runtime (CUPTI, rocprofiler-sdk, and
// ROCTracer where built), bindings only. Launch bookkeeping stays in C++;
// Python only sees per-session results at finalize. The runtime is in
// lib/Host, including what needs Python itself (the launch's Python call
// path, the Triton launch hook).
#include "proton/Host/ActivityStore.h"
#include "proton/Host/CallPath.h"
#include "proton/Host/CuptiApi.h"
#include "proton/Host/CuptiTracer.h"
#include "proton/Host/Demangle.h"
#include "proton/Host/InstrumentedLaunches.h"
#include "proton/Host/PackedRows.h"
#include "proton/Host/PcSampling.h"
#include "proton/Host/PythonCallPath.h"
#include "proton/Host/RocprofilerTracer.h"
#include "proton/Host/RoctracerTracer.h"
#include "proton/Host/TritonLaunchHook.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

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
  m.def("set_python_context", &setPythonContext);
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
  // The node of `capture` (a graph's capture context) below `launch` (where
  // the graph was replayed): launch / "<captured_at>" / capture's path.
  m.def("graft_captured", &graftCaptured);
  // A scope's metrics while a state is set go to the state's node below it,
  // as launches do.
  m.def("state_node", &belowState);
  m.def(
      "set_state",
      [](std::optional<std::string> name) { return setState(name); },
      nb::arg("name").none()); // None clears the state
}

void bindLaunchMetrics(nb::module_ &m) {
  // `name`, if given, renames the launch (the profiler's own metric adds are
  // shown as "<metric>").
  m.def(
      "set_launch_metrics",
      [](double flops8, double flops16, double flops32, double flops64,
         double bytes, std::optional<std::string> name) {
        const double flops[4] = {flops8, flops16, flops32, flops64};
        setLaunchMetrics(flops, bytes,
                         name ? callPaths().intern(*name) : kNoName);
      },
      nb::arg("flops8"), nb::arg("flops16"), nb::arg("flops32"),
      nb::arg("flops64"), nb::arg("bytes"),
      nb::arg("name").none() = nb::none());
  // Marks this thread's launches, copies and sets as the profiler's own
  // (seen by no session) or not; returns the previous mark.
  m.def("set_profiler_work", [](bool on) {
    bool previous = threadContext().profilerWork;
    threadContext().profilerWork = on;
    return previous;
  });
  m.def("triton_launch_hook",
        [](nb::handle metadata) { tritonLaunchHook(metadata.ptr()); });
  m.def("set_launch_id_var", [](nb::handle var) { setLaunchIdVar(var.ptr()); });
  m.def("mark_main_thread", &markMainThread);
  m.def("set_launch_metadata_per_kernel", &setLaunchMetadataPerKernel);
  m.def(
      "set_launch_filter", [](nb::handle f) { setLaunchFilter(f.ptr()); },
      nb::arg("filter").none());
  m.def(
      "set_launch_extras", [](nb::handle f) { setLaunchExtras(f.ptr()); },
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

int traverseLaunches(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self))
    return 0;
  return nb::inst_ptr<InstrumentedLaunches>(self)->traverse(visit, arg);
}

int clearLaunches(PyObject *self) {
  nb::inst_ptr<InstrumentedLaunches>(self)->clearReferences();
  return 0;
}

PyType_Slot launchesSlots[] = {{Py_tp_traverse, (void *)traverseLaunches},
                               {Py_tp_clear, (void *)clearLaunches},
                               {0, nullptr}};

// An instrumentation session's per-launch path (launch_fast_path.py).
void bindInstrumentedLaunches(nb::module_ &m) {
  auto rows = [](const std::vector<LoggedLaunch> &launches) {
    nb::list out;
    for (const LoggedLaunch &l : launches)
      out.append(nb::make_tuple(l.variant, l.index, l.sequence, l.stack,
                                l.chunk, l.offset, l.size, l.stream));
    return out;
  };
  nb::class_<InstrumentedLaunches>(m, "InstrumentedLaunches",
                                   nb::type_slots(launchesSlots))
      .def(nb::init<nb::object, nb::object>(), nb::arg("slow_allocate"),
           nb::arg("slow_launch"))
      .def("set_current_context", &InstrumentedLaunches::setCurrentContext)
      .def("allocate", &InstrumentedLaunches::allocate)
      .def("on_launch", &InstrumentedLaunches::onLaunch)
      .def("set_enabled", &InstrumentedLaunches::setEnabled)
      .def("set_deadline", &InstrumentedLaunches::setDeadline)
      .def("set_capture_check", &InstrumentedLaunches::setCaptureCheck,
           nb::arg("check").none())
      .def("know_handle", &InstrumentedLaunches::knowHandle)
      .def("set_count", &InstrumentedLaunches::setCount)
      .def("count_launch", &InstrumentedLaunches::countLaunch)
      .def("next_sequence", &InstrumentedLaunches::nextSequence)
      .def("add_reservation",
           [](InstrumentedLaunches &self, uint64_t context, uint64_t size,
              uint32_t chunk, uint64_t pointer, uint64_t offset,
              uint64_t stride, uint64_t count) {
             self.addReservation(
                 {context, size, chunk, pointer, offset, stride, count});
           })
      .def("reserved", &InstrumentedLaunches::reserved)
      .def("set_sink", &InstrumentedLaunches::setSink)
      .def("clear_sinks", &InstrumentedLaunches::clearSinks)
      .def("reserved_bytes", &InstrumentedLaunches::reservedBytes)
      .def("take_reservations",
           [](InstrumentedLaunches &self) {
             nb::list out;
             for (const Reservation &r : self.takeReservations())
               out.append(nb::make_tuple(r.context, r.size, r.chunk, r.offset,
                                         r.stride, r.count));
             return out;
           })
      // ([(variant, index, sequence, stack, chunk, offset, size, stream)]
      //  logged,
      //  [...] unlaunched)
      .def("drain",
           [rows](InstrumentedLaunches &self) {
             auto [logged, unlaunched] = self.drain();
             return nb::make_tuple(rows(logged), rows(unlaunched));
           })
      .def("scope_stacks",
           [](InstrumentedLaunches &self) {
             nb::list out;
             for (const std::vector<std::string> &stack : self.scopeStacks()) {
               nb::list names;
               for (const std::string &name : stack)
                 names.append(name);
               out.append(nb::tuple(names));
             }
             return out;
           })
      .def_static("set_benchmark_depth",
                  &InstrumentedLaunches::setBenchmarkDepth);
}

} // namespace

NB_MODULE(_host, m) {
  // A session object may live until the interpreter exits (a script's
  // global): not a leak worth a message at every exit.
  nb::set_leak_warnings(false);
  bindInstrumentedLaunches(m);
  bindCupti(m);
  bindRoctracer(m);
  bindRocprofiler(m);
  bindScopes(m);
  bindLaunchMetrics(m);
  bindSessions(m);
  bindRecords(m);
}
