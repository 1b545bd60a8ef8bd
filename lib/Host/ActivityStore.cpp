#include "proton/Host/ActivityStore.h"

#include <algorithm>

namespace proton::host {

void ActivityStore::recordLaunch(const LaunchContext &context) {
  std::lock_guard<std::mutex> lock(ringMutex_);
  if (ring_.empty())
    ring_.resize(kRingSize);
  ring_[context.correlation % kRingSize] = context;
}

void ActivityStore::forgetLaunch(uint32_t correlation) {
  std::lock_guard<std::mutex> lock(ringMutex_);
  if (ring_.empty())
    return;
  LaunchContext &slot = ring_[correlation % kRingSize];
  if (slot.correlation == correlation)
    slot = LaunchContext{};
}

void ActivityStore::graphNodeCreated(uint64_t nodeId,
                                     const LaunchContext &context) {
  LaunchContext stored = context;
  stored.openAtCapture = openSessions_.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(graphMutex_);
  graphNodes_[nodeId] = stored;
}

void ActivityStore::graphNodeCloned(uint64_t originalId, uint64_t cloneId) {
  std::lock_guard<std::mutex> lock(graphMutex_);
  auto found = graphNodes_.find(originalId);
  if (found != graphNodes_.end()) {
    LaunchContext copy = found->second;
    graphNodes_[cloneId] = copy;
  }
}

// Retired nodes past this many are forgotten at once, oldest first (a
// program that rebuilds graphs in a loop and never flushes).
static constexpr size_t kMaxRetiredGraphNodes = 1u << 20;

void ActivityStore::graphNodeDestroyed(uint64_t nodeId) {
  std::lock_guard<std::mutex> lock(graphMutex_);
  if (!graphNodes_.count(nodeId))
    return;
  retiredGraphNodes_.push_back(nodeId);
  if (retiredGraphNodes_.size() > kMaxRetiredGraphNodes)
    forgetOldestRetiredLocked(retiredGraphNodes_.size() / 2);
}

void ActivityStore::forgetOldestRetiredLocked(size_t count) {
  count = std::min(count, retiredGraphNodes_.size());
  for (size_t i = 0; i < count; ++i)
    graphNodes_.erase(retiredGraphNodes_[i]);
  retiredGraphNodes_.erase(retiredGraphNodes_.begin(),
                           retiredGraphNodes_.begin() + count);
}

size_t ActivityStore::retiredGraphNodes() {
  std::lock_guard<std::mutex> lock(graphMutex_);
  return retiredGraphNodes_.size();
}

void ActivityStore::releaseRetiredGraphNodes(size_t count) {
  std::lock_guard<std::mutex> lock(graphMutex_);
  forgetOldestRetiredLocked(count);
}

size_t ActivityStore::graphNodesKept() {
  std::lock_guard<std::mutex> lock(graphMutex_);
  return graphNodes_.size() - retiredGraphNodes_.size();
}

static uint64_t aggregateKey(uint32_t node, uint32_t name, uint32_t device,
                             ActivityKind kind) {
  // node < 2^26, name < 2^26, device < 2^10, kind < 4.
  return (uint64_t(node) << 38) | (uint64_t(name) << 12) |
         (uint64_t(device & 0x3ff) << 2) | uint64_t(kind);
}

// Counts aggregates as they are made (under sessionMutex_).
static uint64_t aggregateOrder = 0;

void ActivityStore::add(const Activity &activity) {
  LaunchContext context;
  bool found = false;
  uint64_t capturedFor = ~uint64_t(0); // sessions that may see a graph node
  if (activity.graphNode) {
    // A graph's kernel belongs where it was captured; the launch of the
    // graph decides which sessions see it.
    std::lock_guard<std::mutex> lock(graphMutex_);
    auto node = graphNodes_.find(activity.graphNode);
    if (node != graphNodes_.end()) {
      context = node->second;
      // Seen by the sessions active at its replay, less those that were open
      // but deactivated when it was captured.
      capturedFor = context.sessions | ~context.openAtCapture;
      context.sessions = 0;
      found = true;
    }
  }
  {
    std::lock_guard<std::mutex> lock(ringMutex_);
    if (!ring_.empty()) {
      const LaunchContext &slot = ring_[activity.correlation % kRingSize];
      if (slot.correlation == activity.correlation && slot.sessions) {
        if (found) {
          // Below the graph launch's context, as upstream Proton shows it:
          // <launch context>/<captured_at>/<capture context>/kernel.
          context.sessions = slot.sessions & capturedFor;
          context.node = graftCaptured(slot.node, context.node);
          // Its launch is the graph's, made now, not the captured one.
          context.launchNs = slot.launchNs;
          context.thread = slot.thread;
        } else {
          if (activity.graphNode)
            uncapturedGraphKernels_.fetch_add(1, std::memory_order_relaxed);
          context = slot;
          found = true;
        }
      }
    }
  }
  if (!found || !context.sessions) {
    unattributed_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  uint64_t duration =
      activity.end > activity.start ? activity.end - activity.start : 0;
  uint32_t name = activity.name;
  if (activity.kind == ActivityKind::Kernel && context.metrics.present &&
      context.metrics.name != kNoName)
    name = context.metrics
               .name; // launch_metadata named this launch (e.g. by its shapes)
  std::lock_guard<std::mutex> lock(sessionMutex_);
  for (int slot = 0; slot < kMaxSessions; ++slot) {
    if (!(context.sessions >> slot & 1) || !sessions_[slot].open)
      continue;
    SessionData &session = sessions_[slot];
    Aggregate &agg = session.aggregates[aggregateKey(
        context.node, name, activity.device, activity.kind)];
    if (agg.count == 0) {
      agg.first = aggregateOrder++;
      agg.node = context.node;
      agg.name = name;
      agg.device = activity.device;
      agg.kind = activity.kind;
    }
    ++agg.count;
    agg.totalNs += duration;
    agg.minNs = std::min(agg.minNs, duration);
    agg.maxNs = std::max(agg.maxNs, duration);
    if (context.metrics.present) {
      for (int i = 0; i < 4; ++i)
        agg.flops[i] += context.metrics.flops[i];
      agg.bytes += context.metrics.bytes;
    }
    if (session.keepTrace) {
      if (session.result.trace.size() < session.traceCap)
        session.result.trace.push_back(
            {context.node, name, activity.device, activity.stream,
             activity.kind, activity.start, activity.end, activity.correlation,
             context.launchNs, context.thread});
      else
        ++session.result.traceDropped;
    }
  }
}

void ActivityStore::openSession(int slot, bool keepTrace, uint64_t traceCap) {
  std::lock_guard<std::mutex> lock(sessionMutex_);
  sessions_[slot] = SessionData{};
  sessions_[slot].open = true;
  sessions_[slot].keepTrace = keepTrace;
  sessions_[slot].traceCap = traceCap;
  openSessions_.fetch_or(uint64_t(1) << slot, std::memory_order_relaxed);
  if (keepTrace)
    traceSessions_.fetch_or(uint64_t(1) << slot, std::memory_order_relaxed);
  else
    traceSessions_.fetch_and(~(uint64_t(1) << slot), std::memory_order_relaxed);
}

SessionResult ActivityStore::takeSession(int slot) {
  std::lock_guard<std::mutex> lock(sessionMutex_);
  traceSessions_.fetch_and(~(uint64_t(1) << slot), std::memory_order_relaxed);
  openSessions_.fetch_and(~(uint64_t(1) << slot), std::memory_order_relaxed);
  SessionData &session = sessions_[slot];
  SessionResult result = std::move(session.result);
  result.aggregates.reserve(session.aggregates.size());
  for (auto &entry : session.aggregates)
    result.aggregates.push_back(entry.second);
  session = SessionData{};
  return result;
}

void ActivityStore::reset() {
  {
    std::lock_guard<std::mutex> lock(ringMutex_);
    ring_.clear();
    ring_.shrink_to_fit();
  }
  std::lock_guard<std::mutex> lock(graphMutex_);
  graphNodes_.clear();
  retiredGraphNodes_.clear();
}

ActivityStore &activityStore() {
  static ActivityStore store;
  return store;
}

static std::atomic<uint64_t> activeSessionMask{0};
static std::atomic<LaunchClock> launchClock{nullptr};

void setLaunchClock(LaunchClock clock) { launchClock.store(clock); }
static std::atomic<uint64_t> launchCount{0};

void setActiveSessions(uint64_t mask) {
  activeSessionMask.store(mask, std::memory_order_relaxed);
}

uint64_t activeSessions() {
  return activeSessionMask.load(std::memory_order_relaxed);
}

LaunchContext recordLaunchNow(uint32_t correlation, bool kernelLaunch) {
  LaunchContext context;
  ThreadContext &thread = threadContext();
  if (thread.profilerWork)
    return context; // seen by no session; the program's pending metrics wait
  if (kernelLaunch && thread.pendingMetrics.present) {
    context.metrics = thread.pendingMetrics;
    thread.pendingMetrics = LaunchMetrics{};
  }
  uint64_t sessions = activeSessions();
  if (!sessions)
    return context;
  launchCount.fetch_add(1, std::memory_order_relaxed);
  context.correlation = correlation;
  context.sessions = sessions;
  context.node = currentLaunchNode();
  if (sessions & activityStore().traceSessions())
    if (LaunchClock clock = launchClock.load(std::memory_order_relaxed)) {
      context.launchNs = clock();
      context.thread = thread.osThreadId;
    }
  activityStore().recordLaunch(context);
  return context;
}

uint64_t launchesRecorded() {
  return launchCount.load(std::memory_order_relaxed);
}

} // namespace proton::host
