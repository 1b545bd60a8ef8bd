#include "proton/Host/InstrumentedLaunches.h"

#include "proton/Host/CallPath.h"

#include <atomic>
#include <cmath>
#include <ctime>

namespace nb = nanobind;

namespace proton::host {
namespace {

// What the calling thread's last allocation handed out, until its launch
// hook: nothing, a slice of the session's Python allocator, or a fast slice.
enum class Pending : uint8_t { None, Slow, Fast };

struct ThreadPending {
  Pending state = Pending::None;
  uint64_t owner = 0; // the InstrumentedLaunches it came from
  LoggedLaunch slice{};
};

thread_local ThreadPending threadPending;
thread_local int benchmarkDepth = 0;
std::atomic<uint64_t> nextId{1};

// time.monotonic() on Linux.
double monotonicSeconds() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec + now.tv_nsec * 1e-9;
}

bool readUnsigned(PyObject *value, uint64_t &out) {
  if (!PyLong_Check(value))
    return false;
  out = PyLong_AsUnsignedLongLong(value);
  if (out == static_cast<uint64_t>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// The CUfunction of a launch, from Triton's LazyDict (its data["function"]).
bool launchedFunction(nb::handle metadata, uint64_t &handle) {
  static PyObject *dataAttr = PyUnicode_InternFromString("data");
  static PyObject *functionKey = PyUnicode_InternFromString("function");
  nb::object data = nb::steal(PyObject_GetAttr(metadata.ptr(), dataAttr));
  if (!data.is_valid()) {
    PyErr_Clear();
    return false;
  }
  if (!PyDict_Check(data.ptr()))
    return false;
  PyObject *function = PyDict_GetItem(data.ptr(), functionKey); // borrowed
  return function && readUnsigned(function, handle);
}

} // namespace

InstrumentedLaunches::InstrumentedLaunches(nb::object slowAllocate,
                                           nb::object slowLaunch)
    : slowAllocate_(std::move(slowAllocate)),
      slowLaunch_(std::move(slowLaunch)), id_(nextId.fetch_add(1)),
      deadline_(INFINITY) {}

int InstrumentedLaunches::traverse(visitproc visit, void *arg) {
  Py_VISIT(slowAllocate_.ptr());
  Py_VISIT(slowLaunch_.ptr());
  Py_VISIT(captureCheck_.ptr());
  return 0;
}

void InstrumentedLaunches::clearReferences() {
  slowAllocate_ = nb::object();
  slowLaunch_ = nb::object();
  captureCheck_ = nb::object();
  enabled_ = false;
}

uint64_t &InstrumentedLaunches::count(uint32_t counter) {
  if (counts_.size() <= counter)
    counts_.resize(counter + 1);
  return counts_[counter];
}

void InstrumentedLaunches::knowHandle(uint64_t handle, uint32_t variant,
                                      uint32_t counter) {
  variants_[handle] = variant;
  if (variantCounter_.size() <= variant)
    variantCounter_.resize(variant + 1);
  variantCounter_[variant] = counter;
  count(counter); // the counter exists before a logged launch reads it
}

void InstrumentedLaunches::setCount(uint32_t counter, uint64_t launches) {
  count(counter) = launches;
}

uint64_t InstrumentedLaunches::countLaunch(uint32_t counter) {
  return count(counter)++;
}

void InstrumentedLaunches::setBenchmarkDepth(int depth) {
  benchmarkDepth = depth;
}

bool InstrumentedLaunches::fastEligible() const {
  return enabled_ && currentContext_ && benchmarkDepth == 0 &&
         (std::isinf(deadline_) || monotonicSeconds() < deadline_);
}

Reservation *InstrumentedLaunches::find(std::vector<Reservation> &runs,
                                        uint64_t context, uint64_t size) {
  for (Reservation &run : runs)
    if (run.context == context && run.size == size)
      return &run;
  return nullptr;
}

uint32_t InstrumentedLaunches::stackId() {
  const std::vector<uint32_t> &scopes = threadContext().scopes;
  if (scopes.size() == 1)
    return 0; // the root only: no host scope open
  auto known = stackIds_.find(scopes);
  if (known != stackIds_.end())
    return known->second;
  uint32_t id = stackNames_.size();
  stackNames_.push_back(scopeStack());
  stackIds_.emplace(scopes, id);
  return id;
}

bool InstrumentedLaunches::capturing() const {
  if (!captureCheck_.is_valid() || captureCheck_.is_none())
    return false;
  nb::object answer = captureCheck_();
  return PyObject_IsTrue(answer.ptr()) != 0;
}

void InstrumentedLaunches::setSink(uint64_t context, uint64_t size,
                                   uint32_t chunk, uint64_t pointer) {
  Reservation sink{context, size, chunk, pointer, 0, 0, 0};
  if (Reservation *existing = find(sinks_, context, size))
    *existing = sink;
  else
    sinks_.push_back(sink);
}

nb::object InstrumentedLaunches::allocate(nb::handle size, nb::handle alignment,
                                          nb::handle stream) {
  ThreadPending &pending = threadPending;
  bool mine = pending.owner == id_;
  if (mine && pending.state == Pending::Fast)
    unlaunched_.push_back(pending.slice); // its launch never came
  // A slow slice whose launch never came: the slow allocator counts it.
  bool slowBefore = mine && pending.state == Pending::Slow;
  pending.state = Pending::None;
  uint64_t bytes, streamValue;
  void *context = nullptr;
  if (!slowBefore && fastEligible() && readUnsigned(size.ptr(), bytes) &&
      readUnsigned(stream.ptr(), streamValue) &&
      currentContext_(&context) == 0) {
    uint64_t key = reinterpret_cast<uint64_t>(context);
    Reservation *run = find(runs_, key, bytes);
    if (!run || run->count == 0)
      run = find(sinks_, key, bytes); // past the budget: the session's sink
    if (run && !capturing()) {
      pending = {Pending::Fast, id_,
                 LoggedLaunch{0, run->chunk, 0, 0, 0, run->offset, bytes,
                              streamValue}};
      uint64_t pointer = run->pointer;
      if (run->stride) { // a run; a sink is handed out again and again
        run->pointer += run->stride;
        run->offset += run->stride;
        --run->count;
      }
      return nb::steal(PyLong_FromUnsignedLongLong(pointer));
    }
  }
  if (!slowAllocate_.is_valid())
    throw nb::value_error(
        "the instrumentation session of this allocator is gone");
  nb::object slice = slowAllocate_(size, alignment, stream);
  pending = {Pending::Slow, id_, {}};
  return slice;
}

void InstrumentedLaunches::onLaunch(nb::handle metadata) {
  ThreadPending &pending = threadPending;
  bool fast = pending.state == Pending::Fast && pending.owner == id_;
  LoggedLaunch slice = pending.slice;
  pending.state = Pending::None;
  if (!slowLaunch_.is_valid())
    return; // the session is gone
  if (!fast) {
    slowLaunch_(metadata, nb::none());
    return;
  }
  uint64_t handle;
  if (fastEligible() && launchedFunction(metadata, handle)) {
    auto known = variants_.find(handle);
    if (known != variants_.end()) {
      slice.variant = known->second;
      slice.index = counts_[variantCounter_[known->second]]++;
      slice.sequence = sequence_++;
      slice.stack = stackId();
      log_.push_back(slice);
      return;
    }
  }
  slowLaunch_(metadata, pendingTuple(slice));
}

nb::tuple InstrumentedLaunches::pendingTuple(const LoggedLaunch &slice) const {
  return nb::make_tuple(slice.chunk, slice.offset, slice.size, slice.stream);
}

void InstrumentedLaunches::addReservation(const Reservation &run) {
  for (Reservation &existing : runs_) {
    if (existing.context == run.context && existing.size == run.size) {
      existing = run; // the old run is used up (the session checks `reserved`)
      return;
    }
  }
  runs_.push_back(run);
}

uint64_t InstrumentedLaunches::reserved(uint64_t context, uint64_t size) const {
  for (const Reservation &run : runs_)
    if (run.context == context && run.size == size)
      return run.count;
  return 0;
}

uint64_t InstrumentedLaunches::reservedBytes() const {
  uint64_t bytes = 0;
  for (const Reservation &run : runs_)
    bytes += run.count * run.size;
  return bytes;
}

std::vector<Reservation> InstrumentedLaunches::takeReservations() {
  std::vector<Reservation> left;
  for (const Reservation &run : runs_)
    if (run.count > 0)
      left.push_back(run);
  runs_.clear();
  return left;
}

std::pair<std::vector<LoggedLaunch>, std::vector<LoggedLaunch>>
InstrumentedLaunches::drain() {
  std::pair<std::vector<LoggedLaunch>, std::vector<LoggedLaunch>> out;
  out.first.swap(log_);
  out.second.swap(unlaunched_);
  return out;
}

} // namespace proton::host
