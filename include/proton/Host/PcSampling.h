// PC sampling (CUPTI's PC Sampling API) of the kernels launched while it is
// on. Kernels run serialized; after each launch the samples CUPTI gathered
// are drained and summed per session, calling context, kernel, PC and stall
// reason. PCs become source lines only at take time, from the cubins kept
// as modules load (the sass-to-source lookup is slow, the launch path not).
#ifndef PROTON_HOST_PCSAMPLING_H
#define PROTON_HOST_PCSAMPLING_H

#include "proton/Host/ActivityStore.h"
#include "proton/Host/CuptiApi.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace proton::host {

// Where a launch's samples go: its calling context and the sessions active
// at the launch (none: drained and dropped).
struct PcLaunch {
  uint32_t correlation = 0;
  uint32_t node = kRootNode;
  uint64_t sessions = 0;
};

struct PcSampleRow {
  uint32_t node;
  std::string kernel, line, stall; // stall: CUPTI's name of the stall reason
  uint64_t count;
};

class PcSampler {
public:
  // interval: a sample every 2^interval cycles per SM; 0 keeps CUPTI's.
  // Starts sampling on the calling thread's current context, if it has one,
  // at once: enabled at its first launch instead, that launch's kernel would
  // get no samples.
  void enableCurrentContext();
  void configure(bool enabled, uint32_t interval);
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  // Kernel launch callbacks (the launching thread).
  void beforeLaunch(CUcontext context);
  void afterLaunch(CUcontext context, const PcLaunch &launch);

  // Resource callbacks.
  void moduleLoaded(const void *cubin, size_t size);
  void contextDestroying(CUcontext context);

  // Drains and switches sampling off on every context (tracing stops).
  void disableAll();

  void clearSession(int slot);
  std::vector<PcSampleRow> takeSession(int slot);
  std::string error(); // the first failure since configure, or ""
  uint64_t totalSamples() const { return totalSamples_.load(); }
  uint64_t droppedSamples() const { return droppedSamples_.load(); }

private:
  struct Buffer {
    CUpti_PCSamplingData data{};
    std::vector<CUpti_PCSamplingPCData> pcs;
    std::vector<CUpti_PCSamplingStallReason> reasons;
    size_t reasonsPerPc = 0;
    void allocate(size_t numPcs, size_t numReasons);
  };
  struct ContextState {
    bool ok = false; // enabled and configured
    std::unordered_map<uint32_t, uint32_t>
        stallNames;    // CUPTI index -> string id
    Buffer configured; // CUPTI fills it at disable
    Buffer drained;    // cuptiPCSamplingGetData's
  };
  // (node, function, cubin CRC, PC offset, stall) -> samples.
  using SampleKey =
      std::tuple<uint32_t, uint32_t, uint64_t, uint64_t, uint32_t>;
  static constexpr size_t kRecentLaunches = 1024;

  bool enableContext(CUcontext context, ContextState &state);
  void drain(CUcontext context, ContextState &state, const PcLaunch *launch);
  void consume(ContextState &state, const Buffer &buffer,
               const PcLaunch *launch);
  void disableLocked(CUcontext context, ContextState &state);
  void fail(const std::string &what);
  uint32_t intern(const std::string &text);
  const std::string &lineOf(uint64_t crc, uint32_t function, uint64_t pcOffset);

  std::atomic<bool> enabled_{false};
  std::atomic<uint32_t> interval_{0};
  std::atomic<uint64_t> totalSamples_{0}, droppedSamples_{0};
  std::mutex mutex_; // everything below
  std::string error_;
  std::unordered_map<CUcontext, std::unique_ptr<ContextState>> contexts_;
  std::array<PcLaunch, kRecentLaunches>
      recent_{}; // by correlation, for late samples
  std::array<std::map<SampleKey, uint64_t>, kMaxSessions> sessions_;
  std::vector<std::string> strings_; // function and stall names
  std::unordered_map<std::string, uint32_t> stringIds_;
  std::unordered_map<uint64_t, std::string> cubins_; // CRC -> cubin bytes
  std::map<std::tuple<uint64_t, uint32_t, uint64_t>, std::string> lines_;
};

PcSampler &pcSampler();

} // namespace proton::host

#endif // PROTON_HOST_PCSAMPLING_H
