#include "proton/Host/CuptiTracer.h"

#include "proton/Host/ActivityStore.h"
#include "proton/Host/CallPath.h"
#include "proton/Host/CuptiApi.h"
#include "proton/Host/PcSampling.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace proton::host {
namespace {

constexpr size_t kActivityBufferBytes = 4u << 20;

std::atomic<uint64_t> activityCount{0}, droppedCount{0};
CUpti_SubscriberHandle subscriber = nullptr;

// Set between a launch API's enter and exit callbacks on this thread, so
// that graph nodes created inside it (stream capture) take its context.
struct ApiInFlight {
  bool active = false;
  LaunchContext context;
};
thread_local ApiInFlight inFlight;
// A PC-sampled launch between its enter and exit callbacks on this thread,
// and whether stream capture turned it into a graph node: then no kernel
// ran, and synchronizing would break the capture.
struct SampledInFlight {
  bool active = false, captured = false;
};
thread_local SampledInFlight sampledInFlight;
// Which driver callback ids are kernel launches, classified by name once
// when callbacks are enabled, so the launch callback needs no string test.
std::array<bool, CUPTI_DRIVER_TRACE_CBID_SIZE> kernelLaunchCbid{};

bool startsWith(const char *text, const char *prefix) {
  return std::strncmp(text, prefix, std::strlen(prefix)) == 0;
}

bool isKernelLaunch(const char *name) {
  return startsWith(name, "cuLaunch") || startsWith(name, "cuGraphLaunch");
}

bool isTracedApi(const char *name) {
  return isKernelLaunch(name) || startsWith(name, "cuMemcpy") ||
         startsWith(name, "cuMemset");
}

uint64_t graphNodeId(CUgraphNode node) {
  uint64_t id = 0;
  if (node && cupti().cuptiGetGraphNodeId(node, &id) != CUPTI_SUCCESS)
    id = 0;
  return id;
}

void onDriverApi(CUpti_CallbackId cbid, const CUpti_CallbackData *data) {
  bool kernelLaunch = cbid < kernelLaunchCbid.size() && kernelLaunchCbid[cbid];
  bool sampled = pcSampler().enabled() && kernelLaunch;
  if (data->callbackSite == CUPTI_API_EXIT) {
    if (sampled && !sampledInFlight.captured) {
      PcLaunch launch; // no sessions: its samples are drained and dropped
      launch.correlation = data->correlationId;
      if (inFlight.active &&
          inFlight.context.correlation == data->correlationId) {
        launch.node = inFlight.context.node;
        launch.sessions = inFlight.context.sessions;
      }
      pcSampler().afterLaunch(data->context, launch);
    }
    inFlight.active = false;
    sampledInFlight = SampledInFlight{};
    return;
  }
  if (sampled) {
    sampledInFlight = {true, false};
    pcSampler().beforeLaunch(data->context);
  }
  LaunchContext context = recordLaunchNow(data->correlationId, kernelLaunch);
  if (!context.sessions)
    return;
  inFlight.active = true;
  inFlight.context = context;
}

std::atomic<bool> nvtxOn{true};

// The NVTX v2 ABI for the two fields read here (nvToolsExt.h's
// nvtxEventAttributes_t), so that no NVTX header is needed.
struct NvtxAttributes {
  uint16_t version, size;
  uint32_t category;
  int32_t colorType;
  uint32_t color;
  int32_t payloadType, reserved0;
  uint64_t payload;
  int32_t messageType; // 1: ASCII
  const char *message;
};

void onNvtx(CUpti_CallbackId cbid, const CUpti_NvtxData *data) {
  if (!data || !data->functionParams)
    return;
  if (cbid == CUPTI_CBID_NVTX_nvtxRangePushA) {
    const char *message =
        *static_cast<const char *const *>(data->functionParams);
    enterScope(message ? message : "<nvtx>", true);
  } else if (cbid == CUPTI_CBID_NVTX_nvtxRangePushEx) {
    auto *attributes =
        *static_cast<const NvtxAttributes *const *>(data->functionParams);
    const char *message = attributes && attributes->messageType == 1
                              ? attributes->message
                              : nullptr;
    enterScope(message ? message : "<nvtx>", true);
  } else if (cbid == CUPTI_CBID_NVTX_nvtxRangePop) {
    popNvtxRange();
  }
}

void onResource(CUpti_CallbackId cbid, const CUpti_ResourceData *data) {
  if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED) {
    if (auto *module = static_cast<const CUpti_ModuleResourceData *>(
            data->resourceDescriptor))
      pcSampler().moduleLoaded(module->pCubin, module->cubinSize);
    return;
  }
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    pcSampler().contextDestroying(data->context);
    return;
  }
  auto *graph = static_cast<const CUpti_GraphData *>(data->resourceDescriptor);
  if (!graph)
    return;
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
    sampledInFlight.captured = sampledInFlight.active;
    uint64_t id = graphNodeId(graph->node);
    if (!id)
      return;
    if (inFlight.active) {
      // A launch captured into a graph: its correlation yields no activity.
      activityStore().graphNodeCreated(id, inFlight.context);
      activityStore().forgetLaunch(inFlight.context.correlation);
    } else {
      LaunchContext context; // built with the graph API: where it was added
      context.node = currentLaunchNode();
      context.sessions = activeSessions();
      activityStore().graphNodeCreated(id, context);
    }
  } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
    activityStore().graphNodeCloned(graphNodeId(graph->originalNode),
                                    graphNodeId(graph->node));
  } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING) {
    activityStore().graphNodeDestroyed(graphNodeId(graph->node));
  }
}

void CUPTIAPI onCallback(void *, CUpti_CallbackDomain domain,
                         CUpti_CallbackId cbid, const void *data) {
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
    onDriverApi(cbid, static_cast<const CUpti_CallbackData *>(data));
  else if (domain == CUPTI_CB_DOMAIN_RESOURCE)
    onResource(cbid, static_cast<const CUpti_ResourceData *>(data));
  else if (domain == CUPTI_CB_DOMAIN_NVTX)
    onNvtx(cbid, static_cast<const CUpti_NvtxData *>(data));
}

void CUPTIAPI onBufferRequested(uint8_t **buffer, size_t *size,
                                size_t *maxNumRecords) {
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(8, kActivityBufferBytes));
  *size = *buffer ? kActivityBufferBytes : 0;
  *maxNumRecords = 0;
}

void CUPTIAPI onBufferCompleted(CUcontext context, uint32_t streamId,
                                uint8_t *buffer, size_t, size_t validSize) {
  processActivityBuffer(buffer, validSize);
  size_t dropped = 0;
  if (cupti().cuptiActivityGetNumDroppedRecords(context, streamId, &dropped) ==
      CUPTI_SUCCESS)
    droppedCount.fetch_add(dropped, std::memory_order_relaxed);
  std::free(buffer);
}

const char *copyKindName(uint8_t kind) {
  switch (kind) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    return "memcpy HtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    return "memcpy DtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    return "memcpy DtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
    return "memcpy HtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
    return "memcpy PtoP";
  default:
    return "memcpy";
  }
}

// PC sampling keeps cubins (source lines) and lets go of a context before
// it is destroyed; other sessions need neither callback.
void enablePcSamplingCallbacks(bool enable) {
  for (CUpti_CallbackId cbid : {CUPTI_CBID_RESOURCE_MODULE_LOADED,
                                CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING})
    cupti().cuptiEnableCallback(enable ? 1 : 0, subscriber,
                                CUPTI_CB_DOMAIN_RESOURCE, cbid);
}

std::string check(CUptiResult result, const char *what) {
  if (result == CUPTI_SUCCESS)
    return "";
  return std::string(what) + " failed: " + cuptiErrorText(result);
}

} // namespace

void processActivityBuffer(uint8_t *buffer, size_t validSize) {
  CUpti_Activity *record = nullptr;
  CallPathTree &names = callPaths();
  while (cupti().cuptiActivityGetNextRecord(buffer, validSize, &record) ==
         CUPTI_SUCCESS) {
    activityCount.fetch_add(1, std::memory_order_relaxed);
    Activity activity{};
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto *kernel = reinterpret_cast<CUpti_ActivityKernel9 *>(record);
      activity = {ActivityKind::Kernel,
                  names.intern(kernel->name ? kernel->name : "<kernel>"),
                  kernel->deviceId,
                  kernel->streamId,
                  kernel->start,
                  kernel->end,
                  kernel->correlationId,
                  kernel->graphNodeId};
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto *copy = reinterpret_cast<CUpti_ActivityMemcpy6 *>(record);
      activity = {
          ActivityKind::Memcpy, names.intern(copyKindName(copy->copyKind)),
          copy->deviceId,       copy->streamId,
          copy->start,          copy->end,
          copy->correlationId,  copy->graphNodeId};
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto *set = reinterpret_cast<CUpti_ActivityMemset4 *>(record);
      activity = {ActivityKind::Memset, names.intern("memset"),
                  set->deviceId,        set->streamId,
                  set->start,           set->end,
                  set->correlationId,   set->graphNodeId};
      break;
    }
    default:
      continue;
    }
    activityStore().add(activity);
  }
}

// Launch times in the clock of CUPTI's activity records.
static uint64_t cuptiClock() {
  uint64_t now = 0;
  if (cupti().cuptiGetTimestamp(&now) != CUPTI_SUCCESS)
    return 0;
  return now;
}

std::string startCuptiTracing() {
  CuptiApi &api = cupti();
  if (!api.handle)
    return "CUPTI is not loaded";
  if (subscriber)
    return "";
  CUptiResult result = api.cuptiSubscribe(&subscriber, onCallback, nullptr);
  std::string error = check(result, "cuptiSubscribe");
  if (!error.empty()) {
    subscriber = nullptr;
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
      return error + " (another CUPTI client, e.g. a second profiler, owns the "
                     "subscription)";
    if (result == CUPTI_ERROR_NOT_INITIALIZED)
      return error + " (no usable CUDA driver or GPU in this process)";
    return error;
  }
  // Only the launch, copy and set entry points: every other driver call
  // stays free of callbacks.
  for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const char *name = nullptr;
    if (api.cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) !=
            CUPTI_SUCCESS ||
        !name)
      continue;
    kernelLaunchCbid[cbid] = isKernelLaunch(name);
    if (isTracedApi(name))
      api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  }
  for (CUpti_CallbackId cbid : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
                                CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
                                CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING})
    api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid);
  if (nvtxOn.load())
    for (CUpti_CallbackId cbid :
         {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx,
          CUPTI_CBID_NVTX_nvtxRangePop})
      api.cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_NVTX, cbid);
  if (pcSampler().enabled())
    enablePcSamplingCallbacks(true);
  // Every start registers: the stop before it detached CUPTI, which drops them.
  error = check(
      api.cuptiActivityRegisterCallbacks(onBufferRequested, onBufferCompleted),
      "cuptiActivityRegisterCallbacks");
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMSET})
    if (error.empty())
      error = check(api.cuptiActivityEnable(kind), "cuptiActivityEnable");
  if (!error.empty()) {
    stopCuptiTracing(); // half started: the next start begins afresh
    return error;
  }
  setLaunchClock(cuptiClock);
  // After the activity kinds: CUPTI refuses to enable them on a context that
  // samples PCs already.
  if (pcSampler().enabled())
    pcSampler().enableCurrentContext();
  return "";
}

std::string flushCuptiTracing() {
  if (!subscriber)
    return "";
  // Graph nodes destroyed before this flush have their records delivered by
  // its end: they can be forgotten then.
  size_t retired = activityStore().retiredGraphNodes();
  // Kernels still running have no record yet: wait for the current context.
  synchronizeCurrentContext();
  std::string error =
      check(cupti().cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED),
            "cuptiActivityFlushAll");
  activityStore().releaseRetiredGraphNodes(retired);
  return error;
}

std::string stopCuptiTracing() {
  if (!subscriber)
    return "";
  std::string error = flushCuptiTracing();
  pcSampler().disableAll();
  CuptiApi &api = cupti();
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMSET})
    api.cuptiActivityDisable(kind);
  setLaunchClock(nullptr);
  api.cuptiUnsubscribe(subscriber);
  subscriber = nullptr;
  // Detach CUPTI: left attached, it kept later launches in the process about
  // 4% slower after the last session ended (bench/probe_cupti_residual.py).
  // Work is synchronized and flushed above, as cuptiFinalize requires; the
  // next start registers the buffer callbacks again.
  if (CUptiResult result = api.cuptiFinalize();
      result != CUPTI_SUCCESS && error.empty())
    error = check(result, "cuptiFinalize");
  activityStore().reset();
  return error;
}

bool cuptiTracing() { return subscriber != nullptr; }

void setPcSampling(bool enabled, uint32_t interval) {
  if (!enabled)
    pcSampler().disableAll();
  pcSampler().configure(enabled, interval);
  if (subscriber)
    enablePcSamplingCallbacks(enabled);
}

void setNvtxEnabled(bool enabled) { nvtxOn.store(enabled); }

bool nvtxEnabled() { return nvtxOn.load(); }

TracerCounters tracerCounters() {
  return {launchesRecorded(), activityCount.load(), droppedCount.load()};
}

} // namespace proton::host
