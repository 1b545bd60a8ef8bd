// An instrumentation session's per-launch path (python/proton/recording/
// launch_fast_path.py): Triton's profile allocator and launch hook for the
// launches that need no decision of the session's, so that a long loop of
// launches pays no Python per launch.
//
// The session reserves runs of slices of its arena ahead (addReservation);
// a launch of a kernel the session has seen before, of a size it reserved
// for, on the current context, not captured in a CUDA graph, outside
// Triton's benchmark loops, takes the next slice of the run (allocate) and
// is logged with the host scopes open (onLaunch); past the budget, a size the
// session refused writes into its sink (setSink) and is logged to be counted.
// Everything else goes to the session's Python callables, as before. Both
// number launches on the counters here, so the session drains the log
// (drain) only when it reads what it kept.
// Uses the Python C API; called with the GIL held.
#ifndef PROTON_HOST_INSTRUMENTEDLAUNCHES_H
#define PROTON_HOST_INSTRUMENTEDLAUNCHES_H

#include <nanobind/nanobind.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace proton::host {

// One launch the fast path served, in launch order.
struct LoggedLaunch {
  uint32_t variant;  // the session's index of (kernel, variant, kernel id)
  uint32_t chunk;    // the session's index of the arena chunk
  uint64_t index;    // the launch's number among its (kernel, variant)'s
  uint64_t sequence; // the launch's number among all of the session's
  uint32_t stack;    // the host scopes open at the launch (scopeStacks)
  uint64_t offset;   // of the slice in the chunk
  uint64_t size;
  uint64_t stream;
};

// A run of `count` slices of `size` bytes, `stride` apart, from `offset` of
// arena chunk `chunk` (at device address `pointer`), on context `context`.
struct Reservation {
  uint64_t context;
  uint64_t size;
  uint32_t chunk;
  uint64_t pointer;
  uint64_t offset;
  uint64_t stride;
  uint64_t count;
};

class InstrumentedLaunches {
public:
  // slowAllocate(size, alignment, stream) and slowLaunch(metadata, slice)
  // are the session's own allocator and hook (slice: (chunk, offset, size,
  // stream) of a fast allocation the fast hook could not log, else None).
  InstrumentedLaunches(nanobind::object slowAllocate,
                       nanobind::object slowLaunch);

  nanobind::object allocate(nanobind::handle size, nanobind::handle alignment,
                            nanobind::handle stream);
  void onLaunch(nanobind::handle metadata);

  void setEnabled(bool enabled) { enabled_ = enabled; }
  // The address of cuCtxGetCurrent (0: no fast path), known once the
  // session's device memory is.
  void setCurrentContext(uintptr_t function) {
    currentContext_ = reinterpret_cast<int (*)(void **)>(function);
  }
  // Launches after `seconds` (time.monotonic) go to the slow path.
  void setDeadline(double seconds) { deadline_ = seconds; }
  // torch.cuda.is_current_stream_capturing, or None.
  void setCaptureCheck(nanobind::object check) { captureCheck_ = check; }
  // Launches of CUfunction `handle` are logged as `variant`, numbered by
  // counter `counter` (one per (kernel, variant) the outputs name).
  void knowHandle(uint64_t handle, uint32_t variant, uint32_t counter);
  // Launch numbers, so that the Python path numbers launches on the same
  // counters: `launches` so far of `counter`, the next of `counter`, and the
  // next among all launches.
  void setCount(uint32_t counter, uint64_t launches);
  uint64_t countLaunch(uint32_t counter);
  uint64_t nextSequence() { return sequence_++; }

  void addReservation(const Reservation &run);
  // Slices left in the run for (context, size).
  uint64_t reserved(uint64_t context, uint64_t size) const;
  uint64_t reservedBytes() const;
  // Takes back every run's unused slices.
  std::vector<Reservation> takeReservations();
  // Past the budget: launches of `size` on `context` with no run left write
  // into the session's sink at `pointer` (arena chunk index `chunk`), and
  // are logged for the session to count. clearSinks: at a flush.
  void setSink(uint64_t context, uint64_t size, uint32_t chunk,
               uint64_t pointer);
  void clearSinks() { sinks_.clear(); }
  // The logged launches and the fast slices whose launch never came, since
  // the last drain (the log is empty after).
  std::pair<std::vector<LoggedLaunch>, std::vector<LoggedLaunch>> drain();

  // The host scope stacks launches were logged under, by LoggedLaunch.stack
  // (0: none open), each outermost first.
  const std::vector<std::vector<std::string>> &scopeStacks() const {
    return stackNames_;
  }

  // Triton's benchmark loops running on the calling thread (benchmark_loops).
  static void setBenchmarkDepth(int depth);

  // Python's garbage collector: the session's callables refer back to the
  // session, which holds this object.
  int traverse(visitproc visit, void *arg);
  void clearReferences();

private:
  bool fastEligible() const;
  bool capturing() const;
  uint32_t stackId();                // of the calling thread's open host scopes
  uint64_t &count(uint32_t counter); // counter's launches, made if new
  static Reservation *find(std::vector<Reservation> &runs, uint64_t context,
                           uint64_t size);
  nanobind::tuple pendingTuple(const LoggedLaunch &slice) const;

  nanobind::object slowAllocate_, slowLaunch_, captureCheck_;
  int (*currentContext_)(void **) = nullptr;
  uint64_t id_;
  bool enabled_ = false;
  double deadline_;
  std::vector<Reservation> runs_, sinks_;
  std::unordered_map<uint64_t, uint32_t> variants_; // CUfunction -> variant
  std::vector<uint32_t> variantCounter_;            // variant -> counter
  std::vector<uint64_t> counts_;                    // counter -> launches
  uint64_t sequence_ = 0;
  std::map<std::vector<uint32_t>, uint32_t> stackIds_; // scope nodes -> id
  std::vector<std::vector<std::string>> stackNames_{{}};
  std::vector<LoggedLaunch> log_, unlaunched_;
};

} // namespace proton::host

#endif // PROTON_HOST_INSTRUMENTEDLAUNCHES_H
