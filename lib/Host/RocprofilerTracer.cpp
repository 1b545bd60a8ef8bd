// What is and is not known about this file: it follows rocprofiler-sdk's
// public headers (transcribed in RocprofilerSdkTypes.h) and what they
// document, and it is exercised by the CPU tests through a fake
// librocprofiler-sdk written from the same headers. It has never run
// against the real library on an AMD GPU; the points that only hardware can
// settle are marked "Unverified on hardware".
#include "proton/Host/RocprofilerTracer.h"

#include "proton/Host/ActivityStore.h"
#include "proton/Host/CallPath.h"
#include "proton/Host/HipRuntime.h"
#include "proton/Host/RocprofilerApi.h"

#include <atomic>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace proton::host {
namespace {

// The record buffer, handed over at 7/8 full on the SDK's callback thread.
constexpr size_t kBufferBytes = 8u << 20;
constexpr const char *kUnknownKernel = "<unknown kernel>";

std::mutex stateMutex; // start / flush / stop
bool configured = false;
std::string configureFailure;     // why the one configuration failed, for good
std::atomic<bool> tracing{false}; // read by the callbacks without the mutex
rocprofiler_context_id_t context{};
rocprofiler_buffer_id_t buffer{};

// HIP runtime API op -> class; filled in the tool's initialization, before
// any callback can run, and only read afterwards.
std::vector<uint8_t> opClasses;

// Kernel id -> interned name, from the kernel-symbol callbacks (which also
// come while no session traces: a code object is registered once).
std::mutex kernelMutex;
std::unordered_map<uint64_t, uint32_t> kernelNames;
// GPU agent handle -> device index (GPU agents in the SDK's order); filled
// in the initialization. Unverified on hardware: that this order is HIP's
// device order (it ignores HIP_VISIBLE_DEVICES and the like).
std::unordered_map<uint64_t, uint32_t> agentDevices;
// HSA queue handle -> stream number (1, 2, ... in order of first record).
std::mutex queueMutex;
std::unordered_map<uint64_t, uint32_t> queueStreams;

std::atomic<uint64_t> activityCount{0};
std::atomic<uint64_t> droppedCount{0};

// The HIP runtime API callback, on the calling thread, at ENTER and EXIT.
// The store keys on the low 32 bits of the SDK's 64-bit correlation id, as
// for CUPTI and ROCTracer. Unverified on hardware: that the dispatch and
// copy records of the work an API enqueues carry this internal id (the
// SDK's documentation says so).
void onHipApi(rocprofiler_callback_tracing_record_t record,
              rocprofiler_user_data_t *, void *) {
  if (!tracing.load(std::memory_order_relaxed) ||
      record.kind != ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API ||
      record.phase != ROCPROFILER_CALLBACK_PHASE_ENTER ||
      record.operation < 0 ||
      static_cast<size_t>(record.operation) >= opClasses.size())
    return;
  auto kind = static_cast<HipApiClass>(opClasses[record.operation]);
  if (kind == HipApiClass::None)
    return;
  recordLaunchNow(static_cast<uint32_t>(record.correlation_id.internal),
                  kind == HipApiClass::Launch);
}

// A kernel symbol's name, lent for the callback only: interned here.
// Unverified on hardware: whether the SDK keeps the symbol's ".kd" suffix
// (dropped here if it does).
void onCodeObject(rocprofiler_callback_tracing_record_t record,
                  rocprofiler_user_data_t *, void *) {
  if (record.kind != ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT ||
      record.operation !=
          ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER ||
      record.phase != ROCPROFILER_CALLBACK_PHASE_LOAD || !record.payload)
    return;
  auto *symbol = static_cast<
      const rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t
          *>(record.payload);
  if (!symbol->kernel_name)
    return;
  std::string_view name(symbol->kernel_name);
  if (name.size() > 3 && name.substr(name.size() - 3) == ".kd")
    name.remove_suffix(3);
  uint32_t id = callPaths().intern(name);
  std::lock_guard<std::mutex> lock(kernelMutex);
  kernelNames[symbol->kernel_id] = id;
}

uint32_t kernelName(uint64_t kernelId) {
  std::lock_guard<std::mutex> lock(kernelMutex);
  auto found = kernelNames.find(kernelId);
  return found != kernelNames.end() ? found->second
                                    : callPaths().intern(kUnknownKernel);
}

uint32_t deviceOf(rocprofiler_agent_id_t agent) {
  auto found = agentDevices.find(agent.handle);
  return found != agentDevices.end() ? found->second : 0;
}

uint32_t streamOf(rocprofiler_queue_id_t queue) {
  std::lock_guard<std::mutex> lock(queueMutex);
  auto [entry, added] = queueStreams.emplace(
      queue.handle, static_cast<uint32_t>(queueStreams.size() + 1));
  return entry->second;
}

bool toActivity(const rocprofiler_record_header_t &header, Activity &activity) {
  if (header.category != ROCPROFILER_BUFFER_CATEGORY_TRACING || !header.payload)
    return false;
  if (header.kind == ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH) {
    auto *record = static_cast<
        const rocprofiler_buffer_tracing_kernel_dispatch_record_t *>(
        header.payload);
    activity = {ActivityKind::Kernel,
                kernelName(record->dispatch_info.kernel_id),
                deviceOf(record->dispatch_info.agent_id),
                streamOf(record->dispatch_info.queue_id),
                record->start_timestamp,
                record->end_timestamp,
                static_cast<uint32_t>(record->correlation_id.internal),
                0};
    return true;
  }
  if (header.kind == ROCPROFILER_BUFFER_TRACING_MEMORY_COPY) {
    auto *record =
        static_cast<const rocprofiler_buffer_tracing_memory_copy_record_t *>(
            header.payload);
    const char *name = "memcpy";
    rocprofiler_agent_id_t device = record->dst_agent_id;
    switch (record->operation) {
    case ROCPROFILER_MEMORY_COPY_HOST_TO_DEVICE:
      name = "memcpy HtoD";
      break;
    case ROCPROFILER_MEMORY_COPY_DEVICE_TO_HOST:
      name = "memcpy DtoH";
      device = record->src_agent_id;
      break;
    case ROCPROFILER_MEMORY_COPY_DEVICE_TO_DEVICE:
      name = "memcpy DtoD";
      break;
    default:
      break;
    }
    // Copies run on DMA engines, not on a queue: stream 0.
    activity = {ActivityKind::Memcpy,
                callPaths().intern(name),
                deviceOf(device),
                0,
                record->start_timestamp,
                record->end_timestamp,
                static_cast<uint32_t>(record->correlation_id.internal),
                0};
    return true;
  }
  return false;
}

// The buffer's callback: on the SDK's callback thread when the buffer
// reaches its watermark, or during rocprofiler_flush_buffer. Records that
// arrive while no session traces are dropped unread (the context stays
// started). HIP reports a set (hipMemset*) as a fill kernel's dispatch,
// under the set's correlation id.
void onBuffer(rocprofiler_context_id_t, rocprofiler_buffer_id_t,
              rocprofiler_record_header_t **headers, size_t count, void *,
              uint64_t dropped) {
  droppedCount.fetch_add(dropped, std::memory_order_relaxed);
  if (!tracing.load(std::memory_order_relaxed) || !headers)
    return;
  for (size_t i = 0; i < count; ++i) {
    if (!headers[i])
      continue;
    Activity activity;
    if (!toActivity(*headers[i], activity))
      continue;
    activityCount.fetch_add(1, std::memory_order_relaxed);
    activityStore().add(activity);
  }
}

int collectOperation(rocprofiler_callback_tracing_kind_t, uint32_t operation,
                     void *data) {
  static_cast<std::vector<uint32_t> *>(data)->push_back(operation);
  return 0; // go on
}

rocprofiler_status_t collectAgents(rocprofiler_agent_version_t,
                                   const void **agents, size_t count, void *) {
  uint32_t next = 0;
  for (size_t i = 0; i < count; ++i) {
    auto *agent = static_cast<const proton_rocprofiler_agent_head_t *>(
        agents ? agents[i] : nullptr);
    if (agent && agent->type == ROCPROFILER_AGENT_TYPE_GPU)
      agentDevices[agent->id.handle] = next++;
  }
  return ROCPROFILER_STATUS_SUCCESS;
}

// The tool's services, in the one context: HIP launch/copy/set callbacks
// (ops chosen by name, as the library in use names them), kernel symbol
// registrations, and dispatch and copy records in one buffer.
std::string configureServices() {
  RocprofilerApi &api = rocprofiler();
  std::string error = rocprofilerCheck(api.rocprofiler_create_context(&context),
                                       "rocprofiler_create_context");
  if (!error.empty())
    return error;
  std::vector<uint32_t> operations;
  error = rocprofilerCheck(
      api.rocprofiler_iterate_callback_tracing_kind_operations(
          ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API, collectOperation,
          &operations),
      "rocprofiler_iterate_callback_tracing_kind_operations(HIP_RUNTIME_API)");
  if (!error.empty())
    return error;
  std::vector<rocprofiler_tracing_operation_t> traced;
  for (uint32_t op : operations) {
    const char *name = nullptr;
    if (api.rocprofiler_query_callback_tracing_kind_operation_name(
            ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API, op, &name, nullptr) !=
        ROCPROFILER_STATUS_SUCCESS)
      continue;
    HipApiClass kind = classifyHipApi(name);
    if (kind == HipApiClass::None || op > (1u << 16))
      continue;
    if (op >= opClasses.size())
      opClasses.resize(op + 1, 0);
    opClasses[op] = static_cast<uint8_t>(kind);
    traced.push_back(static_cast<rocprofiler_tracing_operation_t>(op));
  }
  if (traced.empty())
    return "it named no HIP launch, copy or set API among its " +
           std::to_string(operations.size()) + " HIP runtime operations";
  error = rocprofilerCheck(
      api.rocprofiler_configure_callback_tracing_service(
          context, ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API, traced.data(),
          traced.size(), onHipApi, nullptr),
      "rocprofiler_configure_callback_tracing_service(HIP_RUNTIME_API)");
  if (!error.empty())
    return error;
  rocprofiler_tracing_operation_t symbols[] = {
      ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER};
  error = rocprofilerCheck(
      api.rocprofiler_configure_callback_tracing_service(
          context, ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT, symbols, 1,
          onCodeObject, nullptr),
      "rocprofiler_configure_callback_tracing_service(CODE_OBJECT)");
  if (!error.empty())
    return error;
  error = rocprofilerCheck(
      api.rocprofiler_create_buffer(
          context, kBufferBytes, kBufferBytes - kBufferBytes / 8,
          ROCPROFILER_BUFFER_POLICY_LOSSLESS, onBuffer, nullptr, &buffer),
      "rocprofiler_create_buffer");
  if (!error.empty())
    return error;
  for (auto kind : {ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH,
                    ROCPROFILER_BUFFER_TRACING_MEMORY_COPY}) {
    error = rocprofilerCheck(
        api.rocprofiler_configure_buffer_tracing_service(context, kind, nullptr,
                                                         0, buffer),
        kind == ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH
            ? "rocprofiler_configure_buffer_tracing_service(KERNEL_DISPATCH)"
            : "rocprofiler_configure_buffer_tracing_service(MEMORY_COPY)");
    if (!error.empty())
      return error;
  }
  // The buffer on a thread of its own, apart from other tools' buffers.
  rocprofiler_callback_thread_t thread{};
  error = rocprofilerCheck(api.rocprofiler_create_callback_thread(&thread),
                           "rocprofiler_create_callback_thread");
  if (error.empty())
    error =
        rocprofilerCheck(api.rocprofiler_assign_callback_thread(buffer, thread),
                         "rocprofiler_assign_callback_thread");
  if (!error.empty())
    return error;
  // Without agents every record counts as device 0: not worth failing for.
  api.rocprofiler_query_available_agents(
      ROCPROFILER_AGENT_INFO_VERSION_0, collectAgents,
      sizeof(proton_rocprofiler_agent_head_t), nullptr);
  int invalid = 0;
  error = rocprofilerCheck(api.rocprofiler_context_is_valid(context, &invalid),
                           "rocprofiler_context_is_valid");
  if (!error.empty())
    return error;
  if (invalid)
    return "rocprofiler-sdk found the configured context invalid";
  // Started now, inside the initialization, so that the SDK replays the
  // code objects already loaded to it (their kernel names).
  return rocprofilerCheck(api.rocprofiler_start_context(context),
                          "rocprofiler_start_context");
}

bool initializeCalled = false;

int initializeTool(rocprofiler_client_finalize_t, void *) {
  initializeCalled = true;
  configureFailure = configureServices();
  return configureFailure.empty() ? 0 : -1;
}

void finalizeTool(void *) { tracing.store(false); }

rocprofiler_tool_configure_result_t *
configureTool(uint32_t, const char *, uint32_t,
              rocprofiler_client_id_t *client) {
  if (client)
    client->name = "proton-host";
  static rocprofiler_tool_configure_result_t result{
      sizeof(rocprofiler_tool_configure_result_t), initializeTool, finalizeTool,
      nullptr};
  return &result;
}

// Configures the SDK with our tool, once per process.
std::string configureLocked() {
  RocprofilerApi &api = rocprofiler();
  if (!configureFailure.empty())
    return configureFailure;
  int state = 0;
  api.rocprofiler_is_initialized(&state);
  if (state != 0) {
    configureFailure =
        "rocprofiler-sdk (" + api.path +
        ") was configured in this process before Proton asked (by rocprofv3, "
        "Triton's own Proton, or another tool): it takes tools only once. Run "
        "without the other tool, or use ROCTracer (set PROTON_ROCTRACER_LIB)";
    return configureFailure;
  }
  std::string error =
      rocprofilerCheck(api.rocprofiler_force_configure(configureTool),
                       "rocprofiler_force_configure");
  if (error.empty() && !initializeCalled)
    error = "rocprofiler_force_configure returned without initializing the "
            "tool";
  if (error.empty() && !configureFailure.empty())
    error = configureFailure;
  if (!error.empty()) {
    configureFailure = "configuring rocprofiler-sdk from " + api.path +
                       " failed: " + error +
                       " (it configures once per process)";
    return configureFailure;
  }
  configured = true;
  return "";
}

std::string flushLocked() {
  if (!configured)
    return "";
  synchronizeLoadedHip();
  // Unverified on hardware: that the records of finished work are in the
  // buffer by now, and that the flush returns after our callback has run.
  return rocprofilerCheck(rocprofiler().rocprofiler_flush_buffer(buffer),
                          "rocprofiler_flush_buffer");
}

} // namespace

std::string loadRocprofilerLibrary(const std::string &path) {
  return loadRocprofiler(path);
}

std::string startRocprofilerTracing() {
  std::lock_guard<std::mutex> lock(stateMutex);
  if (!rocprofiler().handle)
    return "rocprofiler-sdk is not loaded";
  if (!configured) {
    std::string error = configureLocked();
    if (!error.empty())
      return error;
  }
  tracing.store(true);
  return "";
}

std::string flushRocprofilerTracing() {
  std::lock_guard<std::mutex> lock(stateMutex);
  if (!tracing.load())
    return "";
  return flushLocked();
}

std::string stopRocprofilerTracing() {
  std::lock_guard<std::mutex> lock(stateMutex);
  if (!tracing.load())
    return "";
  std::string error = flushLocked();
  tracing.store(false);
  activityStore().reset();
  return error;
}

bool rocprofilerTracing() { return tracing.load(); }

bool rocprofilerConfigured() {
  std::lock_guard<std::mutex> lock(stateMutex);
  return configured;
}

std::string rocprofilerLibraryPath() { return rocprofiler().path; }

std::tuple<uint32_t, uint32_t, uint32_t> rocprofilerVersion() {
  RocprofilerApi &api = rocprofiler();
  uint32_t major = 0, minor = 0, patch = 0;
  if (api.handle)
    api.rocprofiler_get_version(&major, &minor, &patch);
  return {major, minor, patch};
}

uint64_t rocprofilerActivities() {
  return activityCount.load(std::memory_order_relaxed);
}

uint64_t rocprofilerDropped() {
  return droppedCount.load(std::memory_order_relaxed);
}

} // namespace proton::host
