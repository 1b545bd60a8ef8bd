// From CUPTI/ROCTracer activity records to per-session results: each
// launch's calling context is kept, by correlation id, in a fixed-size ring
// (bounded memory, however many launches or graph launches), and each
// activity is added to the sessions that were active at its launch.
#ifndef PROTON_HOST_ACTIVITYSTORE_H
#define PROTON_HOST_ACTIVITYSTORE_H

#include "proton/Host/CallPath.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace proton::host {

// Kinds of activities as (enumerator, name in Python), numbered from 0 in
// this order: one list for the enum and for proton._host.ACTIVITY_KINDS.
#define PROTON_HOST_ACTIVITY_KINDS(X)                                          \
  X(Kernel, "kernel")                                                          \
  X(Memcpy, "memcpy")                                                          \
  X(Memset, "memset")
#define PROTON_HOST_ENUMERATOR(kind, name) kind,
enum class ActivityKind : uint8_t {
  PROTON_HOST_ACTIVITY_KINDS(PROTON_HOST_ENUMERATOR)
};
#undef PROTON_HOST_ENUMERATOR

constexpr int kMaxSessions = 64;

struct LaunchContext {
  uint32_t correlation = 0;
  uint32_t node = kRootNode;
  uint64_t sessions = 0; // bit i: session slot i was active at the launch
  LaunchMetrics metrics;
  // For sessions that keep a timeline: when (the tracer's clock, as its
  // activity records) and on which host thread the launch was made.
  uint64_t launchNs = 0;
  uint32_t thread = 0;
  // For a graph node: the sessions open (active or not) when it was
  // captured; a session that was open but deactivated then does not see
  // the node's replays, as in Triton's Proton.
  uint64_t openAtCapture = 0;
};

struct Activity {
  ActivityKind kind;
  uint32_t name; // interned kernel name, or "memcpy HtoD" etc.
  uint32_t device;
  uint32_t stream;
  uint64_t start;
  uint64_t end;
  uint32_t correlation;
  uint64_t graphNode; // 0 unless launched by a CUDA graph
};

struct Aggregate {
  uint32_t node, name, device;
  ActivityKind kind;
  uint64_t count = 0;
  uint64_t totalNs = 0, minNs = UINT64_MAX, maxNs = 0;
  double flops[4] = {0, 0, 0, 0};
  double bytes = 0;
  // When its first activity arrived (a process-wide count): trees list
  // contexts in the order the session first saw them, as Triton's Proton.
  uint64_t first = 0;
};

struct TraceRow {
  uint32_t node, name, device, stream;
  ActivityKind kind;
  uint64_t start, end;
  uint32_t correlation;
  uint64_t launchNs; // 0: not known (no clock, or a graph's kernel)
  uint32_t thread;
};

struct SessionResult {
  std::vector<Aggregate> aggregates;
  std::vector<TraceRow> trace;
  uint64_t traceDropped = 0; // trace rows over the cap
};

class ActivityStore {
public:
  static constexpr uint32_t kRingSize = 1u << 17;

  // Launch side (the launching thread, inside the API callback).
  void recordLaunch(const LaunchContext &context);
  // Forgets a correlation whose launch was captured into a graph: it will
  // produce no activity of its own.
  void forgetLaunch(uint32_t correlation);

  // Graph nodes created while capturing (or by graph APIs) keep the calling
  // context of their creation; instantiated copies inherit it.
  void graphNodeCreated(uint64_t nodeId, const LaunchContext &context);
  void graphNodeCloned(uint64_t originalId, uint64_t cloneId);
  // A destroyed node's kernels may still be running or their records not
  // yet delivered (a graph reset right after its replay): it is retired, and
  // forgotten by releaseRetiredGraphNodes once a flush has delivered them.
  void graphNodeDestroyed(uint64_t nodeId);
  size_t retiredGraphNodes();
  // Forgets the first `count` retired nodes (those retired before a flush).
  void releaseRetiredGraphNodes(size_t count);

  // Activity side (the tracer's buffer thread).
  void add(const Activity &activity);

  void openSession(int slot, bool keepTrace, uint64_t traceCap);
  SessionResult takeSession(int slot);
  uint64_t unattributed() const {
    return unattributed_.load(std::memory_order_relaxed);
  }
  // Kernels replayed by a CUDA graph whose capture was not seen (captured
  // before tracing started): attributed to where the graph was launched.
  uint64_t uncapturedGraphKernels() const {
    return uncapturedGraphKernels_.load(std::memory_order_relaxed);
  }
  size_t graphNodesKept();
  // Slots of open sessions that keep a timeline (launch times are read
  // only for them).
  uint64_t traceSessions() const {
    return traceSessions_.load(std::memory_order_relaxed);
  }
  void reset();

private:
  struct SessionData {
    bool open = false, keepTrace = false;
    uint64_t traceCap = 0;
    std::unordered_map<uint64_t, Aggregate> aggregates;
    SessionResult result;
  };
  std::mutex ringMutex_;
  std::vector<LaunchContext> ring_;
  std::mutex graphMutex_;
  std::unordered_map<uint64_t, LaunchContext> graphNodes_;
  std::vector<uint64_t> retiredGraphNodes_; // destroyed, still in graphNodes_
  // Forgets the first `count` retired nodes; graphMutex_ held.
  void forgetOldestRetiredLocked(size_t count);
  std::mutex sessionMutex_;
  std::array<SessionData, kMaxSessions> sessions_;
  std::atomic<uint64_t> traceSessions_{0};
  std::atomic<uint64_t> openSessions_{0};
  std::atomic<uint64_t> uncapturedGraphKernels_{0};
  std::atomic<uint64_t> unattributed_{
      0}; // buffer threads add, counters() reads
};

ActivityStore &activityStore();

// --- the launch side, shared by the tracers (CUPTI, ROCTracer) ------------
// A process runs one tracer at a time for its host sessions (the Python
// layer sees to it): the active-session mask and the launch counter are
// the process's, not a tracer's.

// The session slots active now (bit i: slot i), published from Python.
void setActiveSessions(uint64_t mask);
uint64_t activeSessions();

// A launch, copy or set API entered now on this thread, under
// `correlation`. A kernel launch takes the thread's pending launch metrics
// (they belong to it, recorded or not). If a session is active, the launch's
// calling context (currentLaunchNode()) and the active sessions are
// recorded under `correlation` and returned; otherwise the result has no
// sessions and nothing is recorded.
// The tracer's clock for launch times (nullptr: none; launches keep 0).
using LaunchClock = uint64_t (*)();
void setLaunchClock(LaunchClock clock);

LaunchContext recordLaunchNow(uint32_t correlation, bool kernelLaunch);

// Launches recorded by recordLaunchNow (a session was active).
uint64_t launchesRecorded();

} // namespace proton::host

#endif // PROTON_HOST_ACTIVITYSTORE_H
