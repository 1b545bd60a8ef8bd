#include "proton/Host/PcSampling.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace proton::host {
namespace {

// PCs per cuptiPCSamplingGetData call; more are drained in further calls.
constexpr size_t kPcsPerBuffer = 4096;
// Bounds one drain, should CUPTI keep reporting PCs left.
constexpr int kMaxDrainRounds = 1 << 16;

std::string failure(const char *what, CUptiResult result) {
  return std::string(what) + " failed: " + cuptiErrorText(result);
}

} // namespace

void PcSampler::Buffer::allocate(size_t numPcs, size_t numReasons) {
  reasonsPerPc = numReasons;
  pcs.assign(numPcs, CUpti_PCSamplingPCData{});
  reasons.assign(numPcs * numReasons, CUpti_PCSamplingStallReason{});
  for (size_t i = 0; i < numPcs; ++i) {
    pcs[i].size = sizeof(CUpti_PCSamplingPCData);
    pcs[i].stallReason = reasons.data() + i * numReasons;
  }
  data = CUpti_PCSamplingData{};
  data.size = sizeof(CUpti_PCSamplingData);
  data.collectNumPcs = numPcs;
  data.pPcData = pcs.data();
}

void PcSampler::configure(bool enabled, uint32_t interval) {
  std::lock_guard<std::mutex> lock(mutex_);
  interval_.store(interval);
  enabled_.store(enabled);
  if (enabled)
    error_.clear();
}

void PcSampler::fail(const std::string &what) {
  if (error_.empty())
    error_ = what;
}

std::string PcSampler::error() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

uint32_t PcSampler::intern(const std::string &text) {
  auto [it, inserted] = stringIds_.emplace(text, strings_.size());
  if (inserted)
    strings_.push_back(text);
  return it->second;
}

bool PcSampler::enableContext(CUcontext context, ContextState &state) {
  CuptiApi &api = cupti();
  CUpti_PCSamplingEnableParams enable{};
  enable.size = CUpti_PCSamplingEnableParamsSize;
  enable.ctx = context;
  CUptiResult result = api.cuptiPCSamplingEnable(&enable);
  if (result != CUPTI_SUCCESS) {
    fail(failure("cuptiPCSamplingEnable", result));
    return false;
  }
  // Every stall reason the device has, by CUPTI's index.
  size_t numReasons = 0;
  CUpti_PCSamplingGetNumStallReasonsParams count{};
  count.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
  count.ctx = context;
  count.numStallReasons = &numReasons;
  result = api.cuptiPCSamplingGetNumStallReasons(&count);
  std::vector<uint32_t> indices(numReasons);
  std::vector<std::vector<char>> names(
      numReasons, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE, 0));
  std::vector<char *> namePointers;
  for (auto &name : names)
    namePointers.push_back(name.data());
  if (result == CUPTI_SUCCESS) {
    CUpti_PCSamplingGetStallReasonsParams reasons{};
    reasons.size = CUpti_PCSamplingGetStallReasonsParamsSize;
    reasons.ctx = context;
    reasons.numStallReasons = numReasons;
    reasons.stallReasonIndex = indices.data();
    reasons.stallReasons = namePointers.data();
    result = api.cuptiPCSamplingGetStallReasons(&reasons);
  }
  if (result == CUPTI_SUCCESS && numReasons == 0)
    result = CUPTI_ERROR_NOT_SUPPORTED;
  if (result == CUPTI_SUCCESS) {
    for (size_t i = 0; i < numReasons; ++i) {
      names[i].back() = '\0';
      state.stallNames[indices[i]] = intern(names[i].data());
    }
    state.configured.allocate(kPcsPerBuffer, numReasons);
    state.drained.allocate(kPcsPerBuffer, numReasons);
    // Serialized: each kernel's samples carry its correlation id and are
    // complete when it ends, so they can be drained right after it.
    std::vector<CUpti_PCSamplingConfigurationInfo> info(4);
    for (auto &entry : info)
      entry = CUpti_PCSamplingConfigurationInfo{};
    info[0].attributeType =
        CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    info[0].attributeData.collectionModeData.collectionMode =
        CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED;
    info[1].attributeType =
        CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    info[1].attributeData.stallReasonData.stallReasonCount = numReasons;
    info[1].attributeData.stallReasonData.pStallReasonIndex = indices.data();
    info[2].attributeType =
        CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    info[2].attributeData.samplingDataBufferData.samplingDataBuffer =
        &state.configured.data;
    if (uint32_t interval = interval_.load()) {
      info[3].attributeType =
          CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
      info[3].attributeData.samplingPeriodData.samplingPeriod = interval;
    } else {
      info.pop_back();
    }
    CUpti_PCSamplingConfigurationInfoParams params{};
    params.size = CUpti_PCSamplingConfigurationInfoParamsSize;
    params.ctx = context;
    params.numAttributes = info.size();
    params.pPCSamplingConfigurationInfo = info.data();
    result = api.cuptiPCSamplingSetConfigurationAttribute(&params);
    if (result != CUPTI_SUCCESS) {
      fail(failure("cuptiPCSamplingSetConfigurationAttribute", result));
    }
  } else {
    fail(failure("reading the PC sampling stall reasons", result));
  }
  if (result != CUPTI_SUCCESS) {
    CUpti_PCSamplingDisableParams disable{};
    disable.size = CUpti_PCSamplingDisableParamsSize;
    disable.ctx = context;
    api.cuptiPCSamplingDisable(&disable);
    return false;
  }
  return true;
}

void PcSampler::beforeLaunch(CUcontext context) {
  if (!context)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (contexts_.count(context))
    return;
  // First launch on this context: sampling starts before its kernel runs.
  auto state = std::make_unique<ContextState>();
  state->ok = enableContext(context, *state);
  contexts_.emplace(context, std::move(state));
}

void PcSampler::enableCurrentContext() { beforeLaunch(currentContext()); }

void PcSampler::afterLaunch(CUcontext context, const PcLaunch &launch) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    recent_[launch.correlation % kRecentLaunches] = launch;
    auto found = contexts_.find(context);
    if (found == contexts_.end() || !found->second->ok)
      return;
  }
  synchronizeCurrentContext(); // without the lock: other threads' launches
                               // drain meanwhile
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = contexts_.find(context);
  if (found != contexts_.end() && found->second->ok)
    drain(context, *found->second, &launch);
}

void PcSampler::drain(CUcontext context, ContextState &state,
                      const PcLaunch *launch) {
  CuptiApi &api = cupti();
  for (int round = 0; round < kMaxDrainRounds; ++round) {
    CUpti_PCSamplingData &data = state.drained.data;
    data.totalNumPcs = 0;
    data.remainingNumPcs = 0;
    CUpti_PCSamplingGetDataParams params{};
    params.size = CUpti_PCSamplingGetDataParamsSize;
    params.ctx = context;
    params.pcSamplingData = &data;
    CUptiResult result = api.cuptiPCSamplingGetData(&params);
    if (result != CUPTI_SUCCESS) {
      fail(result == CUPTI_ERROR_OUT_OF_MEMORY
               ? "the PC sampling hardware buffer was full: samples were lost "
                 "(a larger interval samples less)"
               : failure("cuptiPCSamplingGetData", result));
      return;
    }
    consume(state, state.drained, launch);
    if (!data.totalNumPcs || !data.remainingNumPcs)
      return;
  }
}

void PcSampler::consume(ContextState &state, const Buffer &buffer,
                        const PcLaunch *launch) {
  const CUpti_PCSamplingData &data = buffer.data;
  totalSamples_.fetch_add(data.totalSamples, std::memory_order_relaxed);
  droppedSamples_.fetch_add(data.droppedSamples, std::memory_order_relaxed);
  size_t numPcs = std::min(data.totalNumPcs, buffer.pcs.size());
  for (size_t i = 0; i < numPcs; ++i) {
    const CUpti_PCSamplingPCData &pc = buffer.pcs[i];
    // Serialized mode names the launch; an earlier one's late samples
    // still find it among the recent launches.
    const PcLaunch *owner = launch;
    if (pc.correlationId &&
        (!owner || owner->correlation != pc.correlationId)) {
      const PcLaunch &recent = recent_[pc.correlationId % kRecentLaunches];
      owner = recent.correlation == pc.correlationId ? &recent : nullptr;
    }
    if (!owner || !owner->sessions)
      continue;
    // functionName may be shared with activity records (CUPTI's docs):
    // copied, never freed here.
    uint32_t function = intern(pc.functionName ? pc.functionName : "<unknown>");
    size_t numReasons = std::min(pc.stallReasonCount, buffer.reasonsPerPc);
    for (size_t j = 0; j < numReasons; ++j) {
      const CUpti_PCSamplingStallReason &reason = pc.stallReason[j];
      if (!reason.samples)
        continue;
      auto name = state.stallNames.find(reason.pcSamplingStallReasonIndex);
      uint32_t stall =
          name != state.stallNames.end()
              ? name->second
              : intern("reason_" +
                       std::to_string(reason.pcSamplingStallReasonIndex));
      SampleKey key{owner->node, function, pc.cubinCrc, pc.pcOffset, stall};
      for (int slot = 0; slot < kMaxSessions; ++slot)
        if (owner->sessions >> slot & 1)
          sessions_[slot][key] += reason.samples;
    }
  }
}

void PcSampler::disableLocked(CUcontext context, ContextState &state) {
  if (!state.ok)
    return;
  drain(context, state, nullptr);
  CUpti_PCSamplingDisableParams disable{};
  disable.size = CUpti_PCSamplingDisableParamsSize;
  disable.ctx = context;
  CUptiResult result = cupti().cuptiPCSamplingDisable(&disable);
  if (result != CUPTI_SUCCESS)
    fail(failure("cuptiPCSamplingDisable", result));
  consume(state, state.configured,
          nullptr); // what disabling left in the configured buffer
  state.ok = false;
}

void PcSampler::contextDestroying(CUcontext context) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = contexts_.find(context);
  if (found == contexts_.end())
    return;
  disableLocked(context, *found->second);
  contexts_.erase(found);
}

void PcSampler::disableAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto &[context, state] : contexts_)
    disableLocked(context, *state);
  contexts_.clear();
}

void PcSampler::moduleLoaded(const void *cubin, size_t size) {
  if (!cubin || !size)
    return;
  CUpti_GetCubinCrcParams params{};
  params.size = CUpti_GetCubinCrcParamsSize;
  params.cubinSize = size;
  params.cubin = cubin;
  if (cupti().cuptiGetCubinCrc(&params) != CUPTI_SUCCESS)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  // A copy: the driver's image may go when the module unloads, and lines
  // are looked up at take time.
  cubins_.try_emplace(params.cubinCrc, static_cast<const char *>(cubin), size);
}

const std::string &PcSampler::lineOf(uint64_t crc, uint32_t function,
                                     uint64_t pcOffset) {
  auto key = std::make_tuple(crc, function, pcOffset);
  auto cached = lines_.find(key);
  if (cached != lines_.end())
    return cached->second;
  const std::string &functionName = strings_[function];
  std::string line;
  auto cubin = cubins_.find(crc);
  if (cubin != cubins_.end()) {
    CUpti_GetSassToSourceCorrelationParams params{};
    params.size = CUpti_GetSassToSourceCorrelationParamsSize;
    params.cubin = cubin->second.data();
    params.cubinSize = cubin->second.size();
    params.functionName = functionName.c_str();
    params.pcOffset = pcOffset;
    if (cupti().cuptiGetSassToSourceCorrelation(&params) == CUPTI_SUCCESS &&
        params.fileName && *params.fileName && params.lineNumber) {
      std::string file = params.fileName;
      if (file.front() != '/' && params.dirName && *params.dirName)
        file = std::string(params.dirName) + "/" + file;
      // "file:line@function", as context="python" names frames (and as
      // Triton's Proton names sampled lines).
      line =
          file + ":" + std::to_string(params.lineNumber) + "@" + functionName;
    }
    // Allocated by CUPTI for the caller (its docs): freed here.
    std::free(params.fileName);
    std::free(params.dirName);
  }
  if (line.empty()) {
    char offset[32];
    std::snprintf(offset, sizeof offset, "+0x%llx",
                  static_cast<unsigned long long>(pcOffset));
    line = functionName + offset;
  }
  return lines_.emplace(key, std::move(line)).first->second;
}

void PcSampler::clearSession(int slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  sessions_[slot].clear();
}

std::vector<PcSampleRow> PcSampler::takeSession(int slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  // PCs of one line merge: (node, function, line, stall) -> samples.
  std::map<std::tuple<uint32_t, uint32_t, std::string, uint32_t>, uint64_t>
      lines;
  for (const auto &[key, count] : sessions_[slot]) {
    auto [node, function, crc, pcOffset, stall] = key;
    lines[{node, function, lineOf(crc, function, pcOffset), stall}] += count;
  }
  sessions_[slot].clear();
  std::vector<PcSampleRow> rows;
  rows.reserve(lines.size());
  for (const auto &[key, count] : lines) {
    const auto &[node, function, line, stall] = key;
    rows.push_back({node, strings_[function], line, strings_[stall], count});
  }
  return rows;
}

PcSampler &pcSampler() {
  static PcSampler sampler;
  return sampler;
}

} // namespace proton::host
