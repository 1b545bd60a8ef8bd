// The CUPTI side of the host profiler: the launch callback (calling context
// and launch metrics by correlation id), graph-node bookkeeping, and the
// activity buffers (kernels, memory copies and sets) fed to the store.
#ifndef PROTON_HOST_CUPTITRACER_H
#define PROTON_HOST_CUPTITRACER_H

#include <cstdint>
#include <string>

namespace proton::host {

// Each returns an empty string on success, else the error.
std::string startCuptiTracing();
std::string flushCuptiTracing();
std::string stopCuptiTracing();
bool cuptiTracing();

// PC sampling of every kernel launch (proton/Host/PcSampling.h); set
// before startCuptiTracing, which then also keeps the cubins loaded.
void setPcSampling(bool enabled, uint32_t interval);

struct TracerCounters {
  uint64_t launches = 0; // launches recorded (a session active), by any tracer
  uint64_t activities = 0;     // activity records read
  uint64_t droppedRecords = 0; // records CUPTI reports it dropped
};
TracerCounters tracerCounters();

// NVTX ranges (nvtxRangePushA/PushEx ... nvtxRangePop) as scope nodes:
// read at each start (triton.knobs.proton.enable_nvtx, TRITON_ENABLE_NVTX).
void setNvtxEnabled(bool enabled);
bool nvtxEnabled();

// Processes one completed activity buffer (also used by tests that feed
// recorded buffers).
void processActivityBuffer(uint8_t *buffer, size_t validSize);

} // namespace proton::host

#endif // PROTON_HOST_CUPTITRACER_H
