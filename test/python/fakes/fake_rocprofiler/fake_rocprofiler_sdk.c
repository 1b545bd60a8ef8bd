/* A fake librocprofiler-sdk for CPU tests of the host profiler's
 * rocprofiler-sdk backend (lib/Host/RocprofilerTracer.cpp). The runtime
 * loads it with proton._host.load_rocprofiler(path) like the real library;
 * the tests drive it through the fake_* functions (ctypes), which play the
 * HIP runtime and the GPU: HIP runtime API callbacks around "launches",
 * copies and sets, kernel-symbol registrations, and kernel-dispatch and
 * memory-copy records handed to the buffer's callback on flush or when the
 * buffer reaches its watermark.
 *
 * It follows rocprofiler-sdk's headers (as transcribed in
 * include/proton/Host/RocprofilerSdkTypes.h) and what they document:
 *  - a tool is taken once per process: rocprofiler_force_configure calls the
 *    configure function and then the tool's initialize, during which (and
 *    only then) contexts, services, buffers and callback threads are made;
 *    later calls get ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
 *  - HIP runtime operations are numbered by the SDK and named by
 *    rocprofiler_query_callback_tracing_kind_operation_name;
 *  - every traced API call gets an internal correlation id; the dispatch and
 *    copy records of the work it enqueues carry it;
 *  - kernel dispatch records name a kernel id; names come from the code
 *    object service's kernel-symbol callbacks, which are replayed for
 *    symbols registered before the context starts; the name is lent for the
 *    callback only (overwritten here right after);
 *  - buffered records go out on the buffer's callback thread at the
 *    watermark, and on the caller's thread in rocprofiler_flush_buffer.
 * None of this has been checked against the real library here. */
#include "proton/Host/RocprofilerSdkTypes.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* The fake HIP runtime's operations: their index is the op id. */
static const char *const kHipOps[] = {
    "__hipPopCallConfiguration", "hipMalloc", "hipFree", "hipLaunchKernel",
    "hipModuleLaunchKernel", "hipExtModuleLaunchKernel", "hipLaunchCooperativeKernel",
    "hipExtLaunchKernel", "hipGraphLaunch", "hipLaunchKernelExC", "hipHccModuleLaunchKernel",
    "hipModuleLaunchCooperativeKernel", "hipMemcpy", "hipMemcpyAsync", "hipMemcpyHtoD",
    "hipMemcpyDtoHAsync", "hipMemcpy2D", "hipMemcpyPeer", "hipMemcpyWithStream", "hipMemset",
    "hipMemsetAsync", "hipMemsetD32Async", "hipLaunchHostFunc", "hipStreamSynchronize",
    "hipDeviceSynchronize", "hipGetDevice", "hipGraphInstantiate", "hipStreamBeginCapture",
    "hipEventRecord", "hipMemcpyHtoDAsync"};
#define NUM_OPS (sizeof kHipOps / sizeof kHipOps[0])
#define MAX_RECORDS 64 /* per buffer delivery: small, so tests can fill it */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int initState = 0;  /* rocprofiler_is_initialized: 0, -1 (during), 1 */
static int configuring = 0; /* inside the tool's initialize */
static const char *clientName = NULL;

struct Service {
  int on;
  rocprofiler_tracing_operation_t ops[NUM_OPS + 8];
  size_t count; /* 0: every operation */
  rocprofiler_callback_tracing_cb_t callback;
  void *arg;
};
static struct Service hipService, codeObjectService;
static int contextMade = 0, contextActive = 0;
static int dispatchTraced = 0, copyTraced = 0; /* buffer services */

/* The one buffer. Records are copied into typed slots; headers point at
 * them. */
static int bufferMade = 0;
static rocprofiler_buffer_tracing_cb_t bufferCallback = NULL;
static void *bufferData = NULL;
static size_t watermarkRecords = 0;
static int callbackThreadAssigned = 0;
static rocprofiler_buffer_tracing_kernel_dispatch_record_t dispatches[MAX_RECORDS];
static rocprofiler_buffer_tracing_memory_copy_record_t copies[MAX_RECORDS];
static rocprofiler_record_header_t headerSlots[MAX_RECORDS];
static size_t pending = 0;
static uint64_t pendingDrops = 0;

/* Kernel symbols registered so far (replayed when the context starts). */
#define MAX_SYMBOLS 256
static uint64_t symbolIds[MAX_SYMBOLS];
static char *symbolNames[MAX_SYMBOLS];
static size_t symbols = 0;

static uint64_t nextCorrelation = 1;
static uint64_t callbackCount = 0, deliveries = 0, asyncDeliveries = 0;
static int failCreateBuffer = 0, namesUnavailable = 0, skipInitialize = 0;

/* Agents: a CPU, then GPUs, in the SDK's order. */
static proton_rocprofiler_agent_head_t agents[4] = {
    {sizeof(proton_rocprofiler_agent_head_t), {100}, ROCPROFILER_AGENT_TYPE_CPU},
    {sizeof(proton_rocprofiler_agent_head_t), {200}, ROCPROFILER_AGENT_TYPE_GPU},
    {sizeof(proton_rocprofiler_agent_head_t), {201}, ROCPROFILER_AGENT_TYPE_GPU},
    {sizeof(proton_rocprofiler_agent_head_t), {202}, ROCPROFILER_AGENT_TYPE_GPU}};

/* ------------------------------------------------------------ the SDK */

FAKE_EXPORT rocprofiler_status_t rocprofiler_get_version(uint32_t *major, uint32_t *minor, uint32_t *patch) {
  if (major) *major = 1;
  if (minor) *minor = 0;
  if (patch) *patch = 0;
  return ROCPROFILER_STATUS_SUCCESS;
}

FAKE_EXPORT const char *rocprofiler_get_status_string(rocprofiler_status_t status) {
  switch (status) {
  case ROCPROFILER_STATUS_SUCCESS: return "Success";
  case ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED: return "Configuration is locked";
  case ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND: return "Context not found";
  case ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND: return "Kind not found";
  case ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND: return "Buffer not found";
  default: return "General error";
  }
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_is_initialized(int *status) {
  *status = initState;
  return ROCPROFILER_STATUS_SUCCESS;
}

static void finalizeClient(rocprofiler_client_id_t client) { (void)client; }

FAKE_EXPORT rocprofiler_status_t rocprofiler_force_configure(rocprofiler_configure_func_t configure) {
  if (initState != 0)
    return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  initState = -1;
  rocprofiler_client_id_t client = {NULL, 1};
  rocprofiler_tool_configure_result_t *result = configure ? configure(10000, "fake 1.0.0", 0, &client) : NULL;
  clientName = client.name;
  if (result && result->initialize && !skipInitialize) {
    configuring = 1;
    int failed = result->initialize(finalizeClient, result->tool_data);
    configuring = 0;
    if (failed) { /* the SDK ignores what a failed tool made */
      contextMade = contextActive = 0;
      hipService.on = codeObjectService.on = 0;
    }
  }
  initState = 1;
  return ROCPROFILER_STATUS_SUCCESS;
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_create_context(rocprofiler_context_id_t *id) {
  if (!configuring)
    return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  contextMade = 1;
  id->handle = 7;
  return ROCPROFILER_STATUS_SUCCESS;
}

static void replaySymbols(void);

FAKE_EXPORT rocprofiler_status_t rocprofiler_start_context(rocprofiler_context_id_t id) {
  if (!contextMade || id.handle != 7)
    return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
  contextActive = 1;
  replaySymbols();
  return ROCPROFILER_STATUS_SUCCESS;
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_context_is_valid(rocprofiler_context_id_t id, int *status) {
  *status = !(contextMade && id.handle == 7);
  return ROCPROFILER_STATUS_SUCCESS;
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_configure_callback_tracing_service(
    rocprofiler_context_id_t id, rocprofiler_callback_tracing_kind_t kind, rocprofiler_tracing_operation_t *ops,
    size_t count, rocprofiler_callback_tracing_cb_t callback, void *arg) {
  if (!configuring)
    return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  if (!contextMade || id.handle != 7)
    return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
  struct Service *service = kind == ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API ? &hipService
                            : kind == ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT   ? &codeObjectService
                                                                                  : NULL;
  if (!service)
    return ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND;
  if (count > NUM_OPS + 8)
    return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
  service->on = 1;
  service->count = ops ? count : 0;
  if (ops)
    memcpy(service->ops, ops, count * sizeof *ops);
  service->callback = callback;
  service->arg = arg;
  return ROCPROFILER_STATUS_SUCCESS;
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_configure_buffer_tracing_service(
    rocprofiler_context_id_t id, rocprofiler_buffer_tracing_kind_t kind, const rocprofiler_tracing_operation_t *ops,
    size_t count, rocprofiler_buffer_id_t buffer) {
  (void)ops;
  (void)count;
  if (!configuring)
    return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  if (!contextMade || id.handle != 7)
    return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
  if (!bufferMade || buffer.handle != 9)
    return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
  if (kind == ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH)
    dispatchTraced = 1;
  else if (kind == ROCPROFILER_BUFFER_TRACING_MEMORY_COPY)
    copyTraced = 1;
  else
    return ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND;
  return ROCPROFILER_STATUS_SUCCESS;
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_create_buffer(rocprofiler_context_id_t id, size_t size, size_t watermark,
                                                           rocprofiler_buffer_policy_t policy,
                                                           rocprofiler_buffer_tracing_cb_t callback, void *data,
                                                           rocprofiler_buffer_id_t *buffer) {
  if (!configuring)
    return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  if (!contextMade || id.handle != 7)
    return ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND;
  if (failCreateBuffer || !callback || watermark > size || policy == ROCPROFILER_BUFFER_POLICY_NONE)
    return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
  bufferMade = 1;
  bufferCallback = callback;
  bufferData = data;
  /* The watermark in records, scaled down so that tests can reach it. */
  watermarkRecords = MAX_RECORDS * (watermark / (double)size);
  if (watermarkRecords < 1)
    watermarkRecords = 1;
  buffer->handle = 9;
  return ROCPROFILER_STATUS_SUCCESS;
}

static void deliverLocked(void) {
  if (!pending && !pendingDrops)
    return;
  rocprofiler_record_header_t *headers[MAX_RECORDS];
  for (size_t i = 0; i < pending; ++i)
    headers[i] = &headerSlots[i];
  ++deliveries;
  rocprofiler_context_id_t context = {7};
  rocprofiler_buffer_id_t buffer = {9};
  bufferCallback(context, buffer, headers, pending, bufferData, pendingDrops);
  memset(dispatches, 0xAB, sizeof dispatches); /* records are only lent */
  memset(copies, 0xAB, sizeof copies);
  pending = 0;
  pendingDrops = 0;
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_flush_buffer(rocprofiler_buffer_id_t buffer) {
  if (!bufferMade || buffer.handle != 9)
    return ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND;
  pthread_mutex_lock(&lock);
  deliverLocked();
  pthread_mutex_unlock(&lock);
  return ROCPROFILER_STATUS_SUCCESS;
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_query_callback_tracing_kind_operation_name(
    rocprofiler_callback_tracing_kind_t kind, uint32_t op, const char **name, uint64_t *length) {
  if (kind != ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API)
    return ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND;
  if (op >= NUM_OPS)
    return ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND;
  const char *found = namesUnavailable ? NULL : kHipOps[op];
  if (name)
    *name = found;
  if (length)
    *length = found ? strlen(found) : 0;
  return ROCPROFILER_STATUS_SUCCESS;
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_iterate_callback_tracing_kind_operations(
    rocprofiler_callback_tracing_kind_t kind, rocprofiler_callback_tracing_kind_operation_cb_t callback, void *data) {
  if (kind != ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API)
    return ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND;
  for (uint32_t op = 0; op < NUM_OPS; ++op)
    if (callback(kind, op, data) != 0)
      break;
  return ROCPROFILER_STATUS_SUCCESS;
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_query_available_agents(rocprofiler_agent_version_t version,
                                                                    rocprofiler_query_available_agents_cb_t callback,
                                                                    size_t size, void *data) {
  /* The real agent struct is much larger: a smaller size is accepted. */
  if (version != ROCPROFILER_AGENT_INFO_VERSION_0 || size > 1024)
    return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
  const void *list[4] = {&agents[0], &agents[1], &agents[2], &agents[3]};
  return callback(version, list, 4, data);
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_create_callback_thread(rocprofiler_callback_thread_t *thread) {
  if (!configuring)
    return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  thread->handle = 11;
  return ROCPROFILER_STATUS_SUCCESS;
}

FAKE_EXPORT rocprofiler_status_t rocprofiler_assign_callback_thread(rocprofiler_buffer_id_t buffer,
                                                                    rocprofiler_callback_thread_t thread) {
  if (!configuring)
    return ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED;
  if (!bufferMade || buffer.handle != 9 || thread.handle != 11)
    return ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT;
  callbackThreadAssigned = 1;
  return ROCPROFILER_STATUS_SUCCESS;
}

/* ------------------------------------------------- the fake HIP runtime */

static void *deliverThread(void *unused) {
  (void)unused;
  pthread_mutex_lock(&lock);
  deliverLocked();
  pthread_mutex_unlock(&lock);
  return NULL;
}

/* At the watermark the buffer goes out on its callback thread (joined, so
 * that tests stay deterministic). Called with the lock held. */
static void afterWriteLocked(void) {
  if (pending < watermarkRecords)
    return;
  pthread_t thread;
  pthread_mutex_unlock(&lock);
  if (pthread_create(&thread, NULL, deliverThread, NULL) == 0) {
    pthread_join(thread, NULL);
    pthread_mutex_lock(&lock);
    ++asyncDeliveries;
  } else {
    pthread_mutex_lock(&lock);
    deliverLocked();
  }
}

static void writeDispatchLocked(uint64_t correlation, uint64_t kernel, uint64_t begin, uint64_t end, uint64_t agent,
                                uint64_t queue) {
  if (!contextActive || !dispatchTraced)
    return;
  rocprofiler_buffer_tracing_kernel_dispatch_record_t *r = &dispatches[pending];
  memset(r, 0, sizeof *r);
  r->size = sizeof *r;
  r->kind = ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH;
  r->operation = 2; /* ROCPROFILER_KERNEL_DISPATCH_COMPLETE */
  r->correlation_id.internal = correlation;
  r->start_timestamp = begin;
  r->end_timestamp = end;
  r->dispatch_info.size = sizeof r->dispatch_info;
  r->dispatch_info.agent_id.handle = agent;
  r->dispatch_info.queue_id.handle = queue;
  r->dispatch_info.kernel_id = kernel;
  headerSlots[pending].category = ROCPROFILER_BUFFER_CATEGORY_TRACING;
  headerSlots[pending].kind = ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH;
  headerSlots[pending].payload = r;
  ++pending;
  afterWriteLocked();
}

static void writeCopyLocked(uint64_t correlation, uint32_t direction, uint64_t bytes, uint64_t begin, uint64_t end,
                            uint64_t dst, uint64_t src) {
  if (!contextActive || !copyTraced)
    return;
  rocprofiler_buffer_tracing_memory_copy_record_t *r = &copies[pending];
  memset(r, 0, sizeof *r);
  r->size = sizeof *r;
  r->kind = ROCPROFILER_BUFFER_TRACING_MEMORY_COPY;
  r->operation = (rocprofiler_memory_copy_operation_t)direction;
  r->correlation_id.internal = correlation;
  r->start_timestamp = begin;
  r->end_timestamp = end;
  r->dst_agent_id.handle = dst;
  r->src_agent_id.handle = src;
  r->bytes = bytes;
  headerSlots[pending].category = ROCPROFILER_BUFFER_CATEGORY_TRACING;
  headerSlots[pending].kind = ROCPROFILER_BUFFER_TRACING_MEMORY_COPY;
  headerSlots[pending].payload = r;
  ++pending;
  afterWriteLocked();
}

static int traces(uint32_t op) {
  if (!contextActive || !hipService.on)
    return 0;
  if (!hipService.count)
    return 1;
  for (size_t i = 0; i < hipService.count; ++i)
    if ((uint32_t)hipService.ops[i] == op)
      return 1;
  return 0;
}

static void invoke(uint32_t op, uint64_t correlation, rocprofiler_callback_phase_t phase) {
  rocprofiler_callback_tracing_record_t record;
  memset(&record, 0, sizeof record);
  record.context_id.handle = 7;
  record.correlation_id.internal = correlation;
  record.kind = ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API;
  record.operation = (rocprofiler_tracing_operation_t)op;
  record.phase = phase;
  rocprofiler_user_data_t user = {0};
  __atomic_add_fetch(&callbackCount, 1, __ATOMIC_RELAXED);
  hipService.callback(record, &user, hipService.arg);
}

/* An API call: a correlation id, ENTER, the work, EXIT. */
static uint64_t enter(uint32_t op) {
  pthread_mutex_lock(&lock);
  uint64_t correlation = nextCorrelation++;
  int traced = traces(op);
  pthread_mutex_unlock(&lock);
  if (traced)
    invoke(op, correlation, ROCPROFILER_CALLBACK_PHASE_ENTER);
  return correlation;
}

static void leave(uint32_t op, uint64_t correlation) {
  if (traces(op))
    invoke(op, correlation, ROCPROFILER_CALLBACK_PHASE_EXIT);
}

static void registerLocked(size_t index) {
  if (!contextActive || !codeObjectService.on)
    return;
  rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t data;
  memset(&data, 0, sizeof data);
  data.size = sizeof data;
  data.kernel_id = symbolIds[index];
  data.code_object_id = 1;
  char *lent = strdup(symbolNames[index]);
  data.kernel_name = lent;
  rocprofiler_callback_tracing_record_t record;
  memset(&record, 0, sizeof record);
  record.context_id.handle = 7;
  record.kind = ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT;
  record.operation = ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER;
  record.phase = ROCPROFILER_CALLBACK_PHASE_LOAD;
  record.payload = &data;
  rocprofiler_user_data_t user = {0};
  codeObjectService.callback(record, &user, codeObjectService.arg);
  memset(lent, '#', strlen(lent)); /* the name was only lent */
  free(lent);
}

static void replaySymbols(void) {
  for (size_t i = 0; i < symbols; ++i)
    registerLocked(i);
}

/* A kernel symbol of a loaded code object (the name may end in ".kd"). */
FAKE_EXPORT void fake_register_kernel(uint64_t kernelId, const char *name) {
  if (symbols == MAX_SYMBOLS)
    abort();
  symbolIds[symbols] = kernelId;
  symbolNames[symbols] = strdup(name);
  registerLocked(symbols++);
}

/* A launch through HIP API `op` of kernel `kernelId` on GPU agent `agent`
 * (an index among GPUs) and queue `queue`; `emit`: whether its dispatch
 * record is written. Returns the correlation id. */
FAKE_EXPORT uint64_t fake_hip_launch(uint32_t op, uint64_t kernelId, uint64_t begin, uint64_t end, uint32_t agent,
                                     uint64_t queue, int emit) {
  uint64_t correlation = enter(op);
  if (emit) {
    pthread_mutex_lock(&lock);
    writeDispatchLocked(correlation, kernelId, begin, end, agents[1 + agent % 3].id.handle, queue);
    pthread_mutex_unlock(&lock);
  }
  leave(op, correlation);
  return correlation;
}

/* `count` launches of one kernel, 5 ns each. */
FAKE_EXPORT void fake_hip_launch_many(uint32_t op, uint64_t kernelId, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i)
    fake_hip_launch(op, kernelId, 10 * i, 10 * i + 5, 0, 0x7000, 1);
}

/* A copy through HIP API `op`: direction is a rocprofiler_memory_copy_
 * operation_t; the device side is GPU agent 0. */
FAKE_EXPORT uint64_t fake_hip_memcpy(uint32_t op, uint32_t direction, uint64_t bytes, uint64_t begin, uint64_t end) {
  uint64_t correlation = enter(op);
  uint64_t gpu = agents[1].id.handle, cpu = agents[0].id.handle;
  uint64_t dst = direction == ROCPROFILER_MEMORY_COPY_DEVICE_TO_HOST ? cpu : gpu;
  uint64_t src = direction == ROCPROFILER_MEMORY_COPY_HOST_TO_DEVICE ? cpu : gpu;
  pthread_mutex_lock(&lock);
  writeCopyLocked(correlation, direction, bytes, begin, end, dst, src);
  pthread_mutex_unlock(&lock);
  leave(op, correlation);
  return correlation;
}

/* A graph launch: each kernel's dispatch under the launch's correlation. */
FAKE_EXPORT uint64_t fake_hip_graph_launch(uint32_t op, const uint64_t *kernels, size_t count, uint64_t begin,
                                           uint64_t duration) {
  uint64_t correlation = enter(op);
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < count; ++i)
    writeDispatchLocked(correlation, kernels[i], begin + i * duration, begin + (i + 1) * duration,
                        agents[1].id.handle, 0x7000);
  pthread_mutex_unlock(&lock);
  leave(op, correlation);
  return correlation;
}

/* Any other API call (no work). Returns its correlation id. */
FAKE_EXPORT uint64_t fake_hip_api_call(uint32_t op) {
  uint64_t correlation = enter(op);
  leave(op, correlation);
  return correlation;
}

/* A dispatch record with no API call behind it (correlation as given). */
FAKE_EXPORT void fake_dispatch_record(uint64_t correlation, uint64_t kernelId, uint64_t begin, uint64_t end) {
  pthread_mutex_lock(&lock);
  writeDispatchLocked(correlation, kernelId, begin, end, agents[1].id.handle, 0x7000);
  pthread_mutex_unlock(&lock);
}

/* The next delivery reports `count` dropped records. */
FAKE_EXPORT void fake_drop_records(uint64_t count) {
  pthread_mutex_lock(&lock);
  pendingDrops += count;
  pthread_mutex_unlock(&lock);
}

/* ----------------------------------------------------- test inspection */

FAKE_EXPORT uint32_t fake_op_id(const char *name) {
  for (uint32_t op = 0; op < NUM_OPS; ++op)
    if (strcmp(kHipOps[op], name) == 0)
      return op;
  abort();
}
FAKE_EXPORT uint32_t fake_op_count(void) { return NUM_OPS; }
FAKE_EXPORT int fake_op_traced(uint32_t op) { return hipService.on && hipService.count && traces(op); }
FAKE_EXPORT uint32_t fake_ops_traced(void) { return hipService.on ? (uint32_t)hipService.count : 0; }
FAKE_EXPORT int fake_initialized(void) { return initState; }
FAKE_EXPORT int fake_context_active(void) { return contextActive; }
FAKE_EXPORT int fake_symbols_traced(void) {
  return codeObjectService.on && codeObjectService.count == 1 &&
         codeObjectService.ops[0] == ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER;
}
FAKE_EXPORT int fake_buffer_services(void) { return dispatchTraced + 2 * copyTraced + 4 * callbackThreadAssigned; }
FAKE_EXPORT const char *fake_client_name(void) { return clientName; }
FAKE_EXPORT uint64_t fake_pending_records(void) { return pending; }
FAKE_EXPORT uint64_t fake_watermark_records(void) { return watermarkRecords; }
FAKE_EXPORT uint64_t fake_callback_count(void) { return __atomic_load_n(&callbackCount, __ATOMIC_RELAXED); }
FAKE_EXPORT uint64_t fake_deliveries(void) { return deliveries; }
FAKE_EXPORT uint64_t fake_async_deliveries(void) { return asyncDeliveries; }
/* Test switches, for the configuration (which happens once per process). */
FAKE_EXPORT void fake_fail_create_buffer(int fail) { failCreateBuffer = fail; }
FAKE_EXPORT void fake_names_unavailable(int unavailable) { namesUnavailable = unavailable; }
FAKE_EXPORT void fake_skip_initialize(int skip) { skipInitialize = skip; }
/* Another tool configured the SDK first. */
FAKE_EXPORT void fake_configured_by_other_tool(void) { initState = 1; }
