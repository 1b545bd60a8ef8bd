// The CUPTI side of the host profiler: the launch callback (calling context
// and launch metrics by correlation id), graph-node bookkeeping, and the
// activity buffers (kernels, memory copies and sets) fed to the store.
#pragma once

#include <cstdint>
#include <string>

namespace proton::host {

// Returns the calling-context node of a launch made now on this thread,
// below `base`; installed for context="python" (walks the Python stack).
using ContextCapture = uint32_t (*)(uint32_t base);

// Each returns an empty string on success, else the error.
std::string startCuptiTracing();
std::string flushCuptiTracing();
std::string stopCuptiTracing();
bool cuptiTracing();

void setActiveSessions(uint64_t mask);
// PC sampling of every kernel launch (python/src/host/pc_sampling.h); set
// before startCuptiTracing, which then also keeps the cubins loaded.
void setPcSampling(bool enabled, uint32_t interval);
void setContextCapture(ContextCapture capture);

struct TracerCounters {
  uint64_t launches = 0;        // launch callbacks seen while a session was active
  uint64_t activities = 0;      // activity records read
  uint64_t droppedRecords = 0;  // records CUPTI reports it dropped
};
TracerCounters tracerCounters();

// The node a launch made now on this thread belongs to (scopes or Python
// frames, then the state tag).
uint32_t currentLaunchNode();

// Processes one completed activity buffer (also used by tests that feed
// recorded buffers).
void processActivityBuffer(uint8_t *buffer, size_t validSize);

} // namespace proton::host
