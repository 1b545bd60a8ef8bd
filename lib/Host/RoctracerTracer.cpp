// What is and is not known about this file: it follows roctracer.h,
// roctracer_hip.h and hip_prof_str.h as shipped in Triton's wheel
// (ROCTracer 4.1), and it is exercised by the CPU tests through a fake
// libroctracer64 written from the same headers. It has never run against
// the real library on an AMD GPU; the points that only hardware can settle
// are marked "Unverified on hardware".
#include "proton/Host/RoctracerTracer.h"

#include "proton/Host/ActivityStore.h"
#include "proton/Host/CallPath.h"
#include "proton/Host/HipRuntime.h"
#include "proton/Host/RoctracerApi.h"

// hip_api_data_t (the callback's data) and HIP_OP_ID_*. It pulls in HIP's
// host-side headers (hip_runtime.h wants __HIP_PLATFORM_AMD__, which
// CMakeLists.txt defines for this file); nothing here needs a HIP compiler.
#include <roctracer/roctracer_hip.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

namespace proton::host {
namespace {

// Each of the pool's two buffers (ROCTracer fills one while the other is
// handed to the callback).
constexpr size_t kPoolBufferBytes = 4u << 20;
// HIP API ids are named at start with roctracer_op_string, for every id
// below this bound: the library in use, not the headers we compiled
// against, decides which APIs exist (HIP_API_ID_LAST is 444 in the headers
// Triton ships; ids the library does not know are named "unknown" or are
// refused).
constexpr uint32_t kHipApiOpLimit = 4096;

using OpClass = HipApiClass;

std::mutex stateMutex; // start / flush / stop
roctracer_pool_t *pool = nullptr;
std::atomic<bool> tracing{
    false}; // pool open and callbacks on (read without the mutex)
std::vector<uint32_t> tracedOps; // HIP API ids with our callback
// Read by the callback on any launching thread; set before a callback is
// enabled, cleared after it is disabled.
std::array<std::atomic<uint8_t>, kHipApiOpLimit> opClasses{};
std::atomic<uint64_t> activityCount{0};

// The activity ops we enable. HIP_OP_ID_BARRIER is left off: it carries
// markers (hipEventRecord, stream waits) that are not work, under
// correlation ids of APIs we do not trace. Sets are not barriers either:
// HIP reports a fill (hipMemset*) as HIP_OP_ID_COPY, named "FillBuffer".
constexpr uint32_t kActivityOps[] = {HIP_OP_ID_DISPATCH, HIP_OP_ID_COPY};

// The HIP API callback, on the calling thread, at ENTER and EXIT of each
// traced API. ROCTracer's correlation ids are 64-bit; the store keys on
// the low 32 bits, as it does CUPTI's (a wrap needs 2^32 traced calls,
// far past the ring's reach), and the records are keyed the same way.
// Unverified on hardware: that HIP stamps the work an API enqueues with the
// id this callback sees (CLR's sources say so; the fake does it).
void onHipApi(uint32_t domain, uint32_t op, const void *data, void *) {
  if (domain != ACTIVITY_DOMAIN_HIP_API || !data || op >= kHipApiOpLimit)
    return;
  auto *api = static_cast<const hip_api_data_t *>(data);
  if (api->phase != ACTIVITY_API_PHASE_ENTER)
    return;
  auto kind =
      static_cast<OpClass>(opClasses[op].load(std::memory_order_relaxed));
  if (kind == OpClass::None)
    return;
  recordLaunchNow(static_cast<uint32_t>(api->correlation_id),
                  kind == OpClass::Launch);
}

bool startsWith(const char *text, const char *prefix) {
  return std::strncmp(text, prefix, std::strlen(prefix)) == 0;
}

// A copy record's name and kind from its command kind's name, e.g.
// "CopyHostToDevice", "CopyDeviceToHost2D", "FillBuffer" (HIP's names as
// returned by roctracer_op_string(HIP_OPS, op, kind)). Unverified on
// hardware: the names come from ROCm's CLR sources, not from a run.
const char *transferName(const char *kindName, ActivityKind &kind) {
  kind = ActivityKind::Memcpy;
  if (!kindName)
    return "memcpy";
  if (std::strstr(kindName, "Fill")) {
    kind = ActivityKind::Memset;
    return "memset";
  }
  if (startsWith(kindName, "CopyHostToDevice"))
    return "memcpy HtoD";
  if (startsWith(kindName, "CopyDeviceToHost"))
    return "memcpy DtoH";
  if (startsWith(kindName, "CopyDeviceToDevice"))
    return "memcpy DtoD";
  return "memcpy";
}

// One HIP_OPS record as an Activity; false for anything else. Unverified
// on hardware: device_id is whatever HIP puts there (CLR sources suggest
// the driver's node id, which may differ from the HIP device index), and
// queue_id stands in for the stream.
bool toActivity(const roctracer_record_t &record, Activity &activity) {
  if (record.domain != ACTIVITY_DOMAIN_HIP_OPS)
    return false;
  ActivityKind kind;
  const char *name;
  if (record.op == HIP_OP_ID_DISPATCH) {
    kind = ActivityKind::Kernel;
    name = record.kernel_name ? record.kernel_name : "<kernel>";
  } else if (record.op == HIP_OP_ID_COPY) {
    name = transferName(roctracer().roctracer_op_string(ACTIVITY_DOMAIN_HIP_OPS,
                                                        record.op, record.kind),
                        kind);
  } else {
    return false;
  }
  activity = {kind,
              callPaths().intern(name),
              record.device_id < 0 ? 0u
                                   : static_cast<uint32_t>(record.device_id),
              static_cast<uint32_t>(record.queue_id),
              record.begin_ns,
              record.end_ns,
              static_cast<uint32_t>(record.correlation_id),
              0};
  return true;
}

// The pool's buffer callback: on ROCTracer's own thread when a buffer
// fills, or on the flushing thread. A record's kernel name lives in the
// buffer, so it is interned here, before the buffer is reused.
void onBuffer(const char *begin, const char *end, void *) {
  RoctracerApi &api = roctracer();
  auto *record = reinterpret_cast<const roctracer_record_t *>(begin);
  auto *last = reinterpret_cast<const roctracer_record_t *>(end);
  while (record && record < last) {
    activityCount.fetch_add(1, std::memory_order_relaxed);
    Activity activity;
    if (toActivity(*record, activity))
      activityStore().add(activity);
    const roctracer_record_t *next = nullptr;
    if (api.roctracer_next_record(record, &next) != ROCTRACER_STATUS_SUCCESS ||
        next <= record)
      break;
    record = next;
  }
}

std::string check(roctracer_status_t status, const char *what) {
  if (status == ROCTRACER_STATUS_SUCCESS)
    return "";
  return std::string(what) + " failed: " + roctracerErrorText(status);
}

std::string flushLocked() {
  synchronizeLoadedHip();
  return check(roctracer().roctracer_flush_activity_expl(pool),
               "roctracer_flush_activity_expl");
}

// Undoes start: callbacks off, activity off, pool closed (ROCTracer's
// close does not switch off the activity that writes to the pool itself).
void teardownLocked() {
  tracing.store(false);
  RoctracerApi &api = roctracer();
  for (uint32_t op : tracedOps) {
    api.roctracer_disable_op_callback(ACTIVITY_DOMAIN_HIP_API, op);
    opClasses[op].store(0, std::memory_order_relaxed);
  }
  tracedOps.clear();
  for (uint32_t op : kActivityOps)
    api.roctracer_disable_op_activity(ACTIVITY_DOMAIN_HIP_OPS, op);
  api.roctracer_close_pool_expl(pool);
  pool = nullptr;
}

} // namespace

std::string loadRoctracerLibrary(const std::string &path) {
  return loadRoctracer(path);
}

std::string startRoctracerTracing() {
  std::lock_guard<std::mutex> lock(stateMutex);
  RoctracerApi &api = roctracer();
  if (!api.handle)
    return "ROCTracer is not loaded";
  if (pool)
    return "";
  // A pool of our own (not the default one, which another ROCTracer client
  // such as rocprof may hold).
  roctracer_properties_t properties{};
  properties.buffer_size = kPoolBufferBytes;
  properties.buffer_callback_fun = onBuffer;
  roctracer_pool_t *opened = nullptr;
  std::string error = check(api.roctracer_open_pool_expl(&properties, &opened),
                            "roctracer_open_pool_expl");
  if (!error.empty())
    return error;
  if (!opened)
    return "roctracer_open_pool_expl returned no pool";
  pool = opened;
  // Callbacks on the launch, copy and set APIs only: every other HIP call
  // stays free of them.
  for (uint32_t op = 1; op < kHipApiOpLimit; ++op) {
    OpClass kind =
        classifyHipApi(api.roctracer_op_string(ACTIVITY_DOMAIN_HIP_API, op, 0));
    if (kind == OpClass::None)
      continue;
    opClasses[op].store(static_cast<uint8_t>(kind), std::memory_order_relaxed);
    if (api.roctracer_enable_op_callback(ACTIVITY_DOMAIN_HIP_API, op, onHipApi,
                                         nullptr) == ROCTRACER_STATUS_SUCCESS)
      tracedOps.push_back(op);
    else
      opClasses[op].store(0, std::memory_order_relaxed);
  }
  if (tracedOps.empty()) {
    teardownLocked();
    return "ROCTracer from " + api.path +
           " enabled no HIP launch, copy or set callback (roctracer_op_string "
           "named none of HIP API ids 1.." +
           std::to_string(kHipApiOpLimit - 1) + "; is libamdhip64 there?)";
  }
  for (uint32_t op : kActivityOps) {
    error = check(api.roctracer_enable_op_activity_expl(ACTIVITY_DOMAIN_HIP_OPS,
                                                        op, pool),
                  "roctracer_enable_op_activity_expl(HIP_OPS)");
    if (!error.empty()) {
      teardownLocked();
      return error;
    }
  }
  tracing.store(true);
  return "";
}

std::string flushRoctracerTracing() {
  std::lock_guard<std::mutex> lock(stateMutex);
  if (!pool)
    return "";
  return flushLocked();
}

std::string stopRoctracerTracing() {
  std::lock_guard<std::mutex> lock(stateMutex);
  if (!pool)
    return "";
  std::string error = flushLocked();
  teardownLocked();
  activityStore().reset();
  return error;
}

bool roctracerBuilt() { return true; }

bool roctracerTracing() { return tracing.load(); }

std::string roctracerLibraryPath() { return roctracer().path; }

std::pair<uint32_t, uint32_t> roctracerVersion() {
  RoctracerApi &api = roctracer();
  if (!api.handle)
    return {0, 0};
  return {api.roctracer_version_major(), api.roctracer_version_minor()};
}

uint64_t roctracerActivities() {
  return activityCount.load(std::memory_order_relaxed);
}

} // namespace proton::host
