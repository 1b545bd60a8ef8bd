/* A fake libroctracer64 for CPU tests of the host profiler's ROCTracer
 * backend (lib/Host/RoctracerTracer.cpp). The runtime loads it with
 * proton._host.load_roctracer(path) like the real library; the tests drive
 * it through the fake_* functions (ctypes), which play the part of the HIP
 * runtime: HIP API callbacks around "launches", copies and sets, and HIP_OPS
 * activity records written to the pool and handed to its buffer callback
 * on flush, when the buffer is full, or when the pool is closed.
 *
 * It follows roctracer.h / prof_protocol.h / roctracer_hip.h as shipped in
 * Triton's wheel, and what ROCm's sources say the real library does:
 *  - HIP API ids are named by roctracer_op_string(HIP_API, op, 0) from the
 *    HIP runtime's table ("unknown" for ids it does not have);
 *  - a correlation id is made for an API call only if a callback or an
 *    activity is enabled for its op; work it enqueues carries that id
 *    (0 if there was none);
 *  - HIP_OPS records: op HIP_OP_ID_DISPATCH (kernel_name set), COPY (copies
 *    and fills; kind is the command type, named by
 *    roctracer_op_string(HIP_OPS, op, kind)), BARRIER (markers);
 *  - records are fixed-size, roctracer_next_record steps by one; a kernel's
 *    name lives in the pool's buffer, valid during the buffer callback only
 *    (here it is overwritten right after the callback returns);
 *  - a full buffer is handed over on another thread (ROCTracer's own).
 * None of this has been checked against the real library here. */
#include <roctracer/roctracer_hip.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* OpenCL command types (CL/cl.h), which HIP puts in a HIP_OPS record's kind. */
#define CL_COMMAND_NDRANGE_KERNEL 0x11F0
#define CL_COMMAND_READ_BUFFER 0x11F3
#define CL_COMMAND_WRITE_BUFFER 0x11F4
#define CL_COMMAND_COPY_BUFFER 0x11F5
#define CL_COMMAND_MARKER 0x11FE
#define CL_COMMAND_READ_BUFFER_RECT 0x1201
#define CL_COMMAND_WRITE_BUFFER_RECT 0x1202
#define CL_COMMAND_COPY_BUFFER_RECT 0x1203
#define CL_COMMAND_FILL_BUFFER 0x1207

#define MAX_OPS 1024 /* HIP API ids this fake can name (its "HIP runtime") */

/* ------------------------------------------------------------------ state */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct Callback {
  activity_rtapi_callback_t function;
  void *arg;
};
static struct Callback callbacks[MAX_OPS];
static const char *extraNames[MAX_OPS]; /* ids past HIP_API_ID_LAST, named by tests */

struct Pool {
  roctracer_properties_t properties;
  activity_record_t *records; /* buffer_size / sizeof(record) slots */
  size_t capacity, count;
  char *names; /* kernel names of the buffered records */
  size_t namesUsed, namesCapacity;
  int open;
};
#define MAX_POOLS 8
static struct Pool pools[MAX_POOLS];
static struct Pool *defaultPool = NULL;
static struct Pool *activityPool[HIP_OP_ID_NUMBER]; /* HIP_OPS op -> pool, NULL if off */

static uint64_t nextCorrelation = 1;
static int currentDevice = 0;
static uint64_t currentQueue = 3;
static uint64_t callbackCount = 0;    /* API callbacks invoked (both phases) */
static uint64_t buffersDelivered = 0; /* buffer callbacks made */
static uint64_t asyncDeliveries = 0;  /* ...of which on another thread */
static int failOpenPool = 0;          /* test switch: roctracer_open_pool_expl fails */
static int namesUnavailable = 0;      /* test switch: HIP API ids have no names */

/* The last error, per thread, as roctracer_error_string reports it. */
static __thread char lastError[256];

static roctracer_status_t fail(roctracer_status_t status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(lastError, sizeof lastError, format, args);
  va_end(args);
  return status;
}

/* ---------------------------------------------------------------- names */

static const char *apiName(uint32_t op) {
  if (namesUnavailable)
    return NULL;
  if (op < MAX_OPS && extraNames[op])
    return extraNames[op];
  return hip_api_name(op); /* the HIP runtime's table: "unknown" if none */
}

static int knownOp(uint32_t op) {
  return op >= HIP_API_ID_FIRST && op < MAX_OPS && (op <= HIP_API_ID_LAST || extraNames[op]);
}

static const char *commandName(uint32_t kind) {
  switch (kind) {
  case CL_COMMAND_NDRANGE_KERNEL: return "KernelExecution";
  case CL_COMMAND_READ_BUFFER: return "CopyDeviceToHost";
  case CL_COMMAND_WRITE_BUFFER: return "CopyHostToDevice";
  case CL_COMMAND_COPY_BUFFER: return "CopyDeviceToDevice";
  case CL_COMMAND_READ_BUFFER_RECT: return "CopyDeviceToHost2D";
  case CL_COMMAND_WRITE_BUFFER_RECT: return "CopyHostToDevice2D";
  case CL_COMMAND_COPY_BUFFER_RECT: return "CopyDeviceToDevice2D";
  case CL_COMMAND_FILL_BUFFER: return "FillBuffer";
  case CL_COMMAND_MARKER: return "Marker";
  default: return "Unknown command kind";
  }
}

/* ------------------------------------------------------------ delivery */

static void deliverLocked(struct Pool *pool);

static void *deliverThread(void *arg) {
  struct Pool *pool = arg;
  pthread_mutex_lock(&lock);
  deliverLocked(pool);
  pthread_mutex_unlock(&lock);
  return NULL;
}

/* Hands the buffered records to the pool's callback, then forgets them and
 * scribbles over their kernel names (which were only lent). Called with the
 * lock held; the callback runs with it held too (it must not call back
 * into the fake, as with the real pool's consumer). */
static void deliverLocked(struct Pool *pool) {
  if (!pool->count)
    return;
  ++buffersDelivered;
  if (pool->properties.buffer_callback_fun)
    pool->properties.buffer_callback_fun((const char *)pool->records,
                                         (const char *)(pool->records + pool->count),
                                         pool->properties.buffer_callback_arg);
  memset(pool->names, '#', pool->namesUsed);
  pool->namesUsed = 0;
  memset(pool->records, 0xAB, pool->count * sizeof(activity_record_t));
  pool->count = 0;
}

/* Writes one record to the pool; a full buffer goes out first, on another
 * thread (joined before returning, so the tests stay deterministic). */
static void writeLocked(struct Pool *pool, const activity_record_t *record, const char *kernelName) {
  size_t nameBytes = kernelName ? strlen(kernelName) + 1 : 0;
  while (pool->open && (pool->count == pool->capacity || pool->namesUsed + nameBytes > pool->namesCapacity)) {
    pthread_t thread;
    pthread_mutex_unlock(&lock);
    /* The delivering thread takes the lock itself. */
    if (pthread_create(&thread, NULL, deliverThread, pool) == 0) {
      pthread_join(thread, NULL);
      pthread_mutex_lock(&lock);
      ++asyncDeliveries;
    } else {
      pthread_mutex_lock(&lock);
      deliverLocked(pool);
    }
  }
  if (!pool->open)
    return; /* closed while the lock was let go */
  activity_record_t *slot = &pool->records[pool->count++];
  *slot = *record;
  if (kernelName) {
    char *copy = pool->names + pool->namesUsed;
    memcpy(copy, kernelName, nameBytes);
    pool->namesUsed += nameBytes;
    slot->kernel_name = copy;
  }
}

/* ------------------------------------------------------- ROCTracer API */

FAKE_EXPORT uint32_t roctracer_version_major(void) { return ROCTRACER_VERSION_MAJOR; }

FAKE_EXPORT uint32_t roctracer_version_minor(void) { return ROCTRACER_VERSION_MINOR; }

FAKE_EXPORT const char *roctracer_error_string(void) { return strdup(lastError); }

FAKE_EXPORT const char *roctracer_op_string(uint32_t domain, uint32_t op, uint32_t kind) {
  switch (domain) {
  case ACTIVITY_DOMAIN_HIP_API: return apiName(op);
  case ACTIVITY_DOMAIN_HIP_OPS: return commandName(kind);
  default: fail(ROCTRACER_STATUS_ERROR_INVALID_DOMAIN_ID, "invalid domain ID"); return NULL;
  }
}

FAKE_EXPORT roctracer_status_t roctracer_op_code(uint32_t domain, const char *str, uint32_t *op, uint32_t *kind) {
  if (domain != ACTIVITY_DOMAIN_HIP_API)
    return fail(ROCTRACER_STATUS_ERROR_INVALID_DOMAIN_ID, "limited domain ID(%u)", domain);
  uint32_t id = hipApiIdByName(str);
  if (id == HIP_API_ID_NONE)
    return fail(ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT, "Invalid API name \"%s\"", str);
  *op = id;
  if (kind)
    *kind = 0;
  return ROCTRACER_STATUS_SUCCESS;
}

FAKE_EXPORT roctracer_status_t roctracer_enable_op_callback(activity_domain_t domain, uint32_t op,
                                                            activity_rtapi_callback_t callback, void *arg) {
  if (domain != ACTIVITY_DOMAIN_HIP_API)
    return fail(ROCTRACER_STATUS_ERROR_INVALID_DOMAIN_ID, "fake: HIP_API callbacks only, not domain %d", domain);
  if (!knownOp(op) || !callback)
    return fail(ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT, "invalid argument");
  pthread_mutex_lock(&lock);
  callbacks[op].function = callback;
  callbacks[op].arg = arg;
  pthread_mutex_unlock(&lock);
  return ROCTRACER_STATUS_SUCCESS;
}

FAKE_EXPORT roctracer_status_t roctracer_disable_op_callback(activity_domain_t domain, uint32_t op) {
  if (domain != ACTIVITY_DOMAIN_HIP_API)
    return fail(ROCTRACER_STATUS_ERROR_INVALID_DOMAIN_ID, "fake: HIP_API callbacks only, not domain %d", domain);
  if (!knownOp(op))
    return fail(ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT, "invalid argument");
  pthread_mutex_lock(&lock);
  callbacks[op].function = NULL;
  callbacks[op].arg = NULL;
  pthread_mutex_unlock(&lock);
  return ROCTRACER_STATUS_SUCCESS;
}

FAKE_EXPORT roctracer_status_t roctracer_open_pool_expl(const roctracer_properties_t *properties,
                                                        roctracer_pool_t **pool) {
  if (!properties)
    return fail(ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT, "no properties");
  if (failOpenPool)
    return fail(ROCTRACER_STATUS_ERROR_MEMORY_ALLOCATION, "MemoryPool() error");
  pthread_mutex_lock(&lock);
  if (!pool && defaultPool) {
    pthread_mutex_unlock(&lock);
    return fail(ROCTRACER_STATUS_ERROR_DEFAULT_POOL_ALREADY_DEFINED, "default pool already set");
  }
  struct Pool *slot = NULL;
  for (int i = 0; i < MAX_POOLS && !slot; ++i)
    if (!pools[i].open)
      slot = &pools[i];
  if (!slot) {
    pthread_mutex_unlock(&lock);
    return fail(ROCTRACER_STATUS_ERROR_MEMORY_ALLOCATION, "fake: too many pools");
  }
  memset(slot, 0, sizeof *slot);
  slot->properties = *properties;
  slot->capacity = properties->buffer_size / sizeof(activity_record_t);
  if (!slot->capacity)
    slot->capacity = 1;
  slot->records = malloc(slot->capacity * sizeof(activity_record_t));
  slot->namesCapacity = properties->buffer_size ? properties->buffer_size : 256;
  slot->names = malloc(slot->namesCapacity);
  if (!slot->records || !slot->names)
    abort();
  slot->open = 1;
  if (pool)
    *pool = slot;
  else
    defaultPool = slot;
  pthread_mutex_unlock(&lock);
  return ROCTRACER_STATUS_SUCCESS;
}

static struct Pool *resolvePool(roctracer_pool_t *pool) {
  struct Pool *p = pool ? (struct Pool *)pool : defaultPool;
  return p && p->open ? p : NULL;
}

FAKE_EXPORT roctracer_status_t roctracer_close_pool_expl(roctracer_pool_t *pool) {
  pthread_mutex_lock(&lock);
  struct Pool *p = resolvePool(pool);
  if (!p) {
    pthread_mutex_unlock(&lock);
    return ROCTRACER_STATUS_SUCCESS;
  }
  deliverLocked(p);
  if (p == defaultPool)
    defaultPool = NULL;
  /* Like the real close, activity that writes here is not switched off:
   * the fake drops records for a closed pool (see recordLocked). */
  free(p->records);
  free(p->names);
  memset(p, 0, sizeof *p);
  pthread_mutex_unlock(&lock);
  return ROCTRACER_STATUS_SUCCESS;
}

FAKE_EXPORT roctracer_status_t roctracer_enable_op_activity_expl(activity_domain_t domain, uint32_t op,
                                                                 roctracer_pool_t *pool) {
  pthread_mutex_lock(&lock);
  struct Pool *p = resolvePool(pool);
  pthread_mutex_unlock(&lock);
  if (!p)
    return fail(ROCTRACER_STATUS_ERROR_DEFAULT_POOL_UNDEFINED, "no default pool");
  if (domain != ACTIVITY_DOMAIN_HIP_OPS)
    return fail(ROCTRACER_STATUS_ERROR_INVALID_DOMAIN_ID, "fake: HIP_OPS activity only, not domain %d", domain);
  if (op >= HIP_OP_ID_NUMBER)
    return fail(ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT, "invalid argument");
  pthread_mutex_lock(&lock);
  activityPool[op] = p;
  pthread_mutex_unlock(&lock);
  return ROCTRACER_STATUS_SUCCESS;
}

FAKE_EXPORT roctracer_status_t roctracer_disable_op_activity(activity_domain_t domain, uint32_t op) {
  if (domain != ACTIVITY_DOMAIN_HIP_OPS)
    return fail(ROCTRACER_STATUS_ERROR_INVALID_DOMAIN_ID, "fake: HIP_OPS activity only, not domain %d", domain);
  if (op >= HIP_OP_ID_NUMBER)
    return fail(ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT, "invalid argument");
  pthread_mutex_lock(&lock);
  activityPool[op] = NULL;
  pthread_mutex_unlock(&lock);
  return ROCTRACER_STATUS_SUCCESS;
}

FAKE_EXPORT roctracer_status_t roctracer_flush_activity_expl(roctracer_pool_t *pool) {
  pthread_mutex_lock(&lock);
  struct Pool *p = resolvePool(pool);
  if (p)
    deliverLocked(p);
  pthread_mutex_unlock(&lock);
  return ROCTRACER_STATUS_SUCCESS;
}

FAKE_EXPORT roctracer_status_t roctracer_next_record(const activity_record_t *record,
                                                     const activity_record_t **next) {
  *next = record + 1;
  return ROCTRACER_STATUS_SUCCESS;
}

/* ------------------------------------------------- the fake HIP runtime */

/* An API call: a correlation id if anything traces it, the ENTER callback,
 * the work (records), the EXIT callback. */
struct Call {
  uint32_t op;
  uint64_t correlation; /* 0: nothing traced the call */
  struct Callback callback;
};

static void invoke(struct Call *call, uint32_t phase) {
  if (!call->callback.function)
    return;
  hip_api_data_t data;
  memset(&data, 0, sizeof data);
  uint64_t phaseData = 0;
  data.correlation_id = call->correlation;
  data.phase = phase;
  data.phase_data = &phaseData;
  __atomic_add_fetch(&callbackCount, 1, __ATOMIC_RELAXED);
  call->callback.function(ACTIVITY_DOMAIN_HIP_API, call->op, &data, call->callback.arg);
}

static struct Call enter(uint32_t op) {
  struct Call call = {op, 0, {NULL, NULL}};
  pthread_mutex_lock(&lock);
  if (op < MAX_OPS)
    call.callback = callbacks[op];
  /* The real library makes an id when a callback or an API activity is on
   * for the op; this fake has no API activity, so a callback decides. HIP
   * ops activity alone gets no id: its records then carry 0. */
  if (call.callback.function)
    call.correlation = nextCorrelation++;
  pthread_mutex_unlock(&lock);
  invoke(&call, ACTIVITY_API_PHASE_ENTER);
  return call;
}

static void leave(struct Call *call) { invoke(call, ACTIVITY_API_PHASE_EXIT); }

static void recordLocked(uint32_t op, uint32_t kind, uint64_t correlation, uint64_t begin, uint64_t end,
                         const char *kernelName, size_t bytes) {
  struct Pool *pool = op < HIP_OP_ID_NUMBER ? activityPool[op] : NULL;
  if (!pool || !pool->open)
    return;
  activity_record_t record;
  memset(&record, 0, sizeof record);
  record.domain = ACTIVITY_DOMAIN_HIP_OPS;
  record.kind = kind;
  record.op = op;
  record.correlation_id = correlation;
  record.begin_ns = begin;
  record.end_ns = end;
  record.device_id = currentDevice;
  record.queue_id = currentQueue;
  if (!kernelName)
    record.bytes = bytes;
  writeLocked(pool, &record, kernelName);
}

/* A kernel launch through HIP API `op`; with `emit`, its kernel runs and
 * leaves a dispatch record. Returns the correlation id (0 if untraced). */
FAKE_EXPORT uint64_t fake_hip_launch(uint32_t op, const char *kernel, uint64_t begin, uint64_t end, int emit) {
  struct Call call = enter(op);
  if (emit) {
    pthread_mutex_lock(&lock);
    recordLocked(HIP_OP_ID_DISPATCH, CL_COMMAND_NDRANGE_KERNEL, call.correlation, begin, end, kernel, 0);
    pthread_mutex_unlock(&lock);
  }
  leave(&call);
  return call.correlation;
}

/* `count` launches of one kernel through `op`, back to back. Returns the
 * last correlation id. */
FAKE_EXPORT uint64_t fake_hip_launch_many(uint32_t op, const char *kernel, uint64_t count, int emit) {
  uint64_t correlation = 0;
  for (uint64_t i = 0; i < count; ++i)
    correlation = fake_hip_launch(op, kernel, 10 * i, 10 * i + 5, emit);
  return correlation;
}

/* A copy through HIP API `op`: a COPY record of command type `command`
 * (CL_COMMAND_WRITE_BUFFER: host to device, ...). */
FAKE_EXPORT uint64_t fake_hip_memcpy(uint32_t op, uint32_t command, uint64_t bytes, uint64_t begin, uint64_t end) {
  struct Call call = enter(op);
  pthread_mutex_lock(&lock);
  recordLocked(HIP_OP_ID_COPY, command, call.correlation, begin, end, NULL, bytes);
  pthread_mutex_unlock(&lock);
  leave(&call);
  return call.correlation;
}

/* A set through HIP API `op`: HIP fills with a COPY-op command. */
FAKE_EXPORT uint64_t fake_hip_memset(uint32_t op, uint64_t bytes, uint64_t begin, uint64_t end) {
  return fake_hip_memcpy(op, CL_COMMAND_FILL_BUFFER, bytes, begin, end);
}

/* A graph launch: each of the graph's kernels leaves a dispatch record
 * under the launch's correlation id, one after the other. */
FAKE_EXPORT uint64_t fake_hip_graph_launch(const char **kernels, size_t count, uint64_t begin, uint64_t duration) {
  struct Call call = enter(HIP_API_ID_hipGraphLaunch);
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < count; ++i)
    recordLocked(HIP_OP_ID_DISPATCH, CL_COMMAND_NDRANGE_KERNEL, call.correlation, begin + i * duration,
                 begin + (i + 1) * duration, kernels[i], 0);
  pthread_mutex_unlock(&lock);
  leave(&call);
  return call.correlation;
}

/* Any other HIP API call (no work). Returns its correlation id. */
FAKE_EXPORT uint64_t fake_hip_api_call(uint32_t op) {
  struct Call call = enter(op);
  leave(&call);
  return call.correlation;
}

/* A record as HIP_OPS op `op` would write it, whatever the API side did
 * (e.g. a barrier for a marker), if that op's activity is on. */
FAKE_EXPORT void fake_hip_ops_record(uint32_t op, uint32_t kind, uint64_t correlation, uint64_t begin, uint64_t end) {
  pthread_mutex_lock(&lock);
  recordLocked(op, kind, correlation, begin, end, op == HIP_OP_ID_DISPATCH ? "raw_kernel" : NULL, 0);
  pthread_mutex_unlock(&lock);
}

/* ----------------------------------------------------- test inspection */

FAKE_EXPORT int fake_callback_enabled(uint32_t op) { return op < MAX_OPS && callbacks[op].function != NULL; }

FAKE_EXPORT uint32_t fake_callbacks_enabled(void) {
  uint32_t count = 0;
  for (uint32_t op = 0; op < MAX_OPS; ++op)
    count += callbacks[op].function != NULL;
  return count;
}

FAKE_EXPORT int fake_activity_enabled(uint32_t op) { return op < HIP_OP_ID_NUMBER && activityPool[op] != NULL; }

FAKE_EXPORT int fake_open_pools(void) {
  int count = 0;
  for (int i = 0; i < MAX_POOLS; ++i)
    count += pools[i].open;
  return count;
}

FAKE_EXPORT uint64_t fake_pool_capacity(void) {
  for (int i = 0; i < MAX_POOLS; ++i)
    if (pools[i].open)
      return pools[i].capacity;
  return 0;
}

FAKE_EXPORT uint64_t fake_pending_records(void) {
  uint64_t count = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < MAX_POOLS; ++i)
    if (pools[i].open)
      count += pools[i].count;
  pthread_mutex_unlock(&lock);
  return count;
}

FAKE_EXPORT uint64_t fake_callback_count(void) { return __atomic_load_n(&callbackCount, __ATOMIC_RELAXED); }
FAKE_EXPORT uint64_t fake_buffers_delivered(void) { return buffersDelivered; }
FAKE_EXPORT uint64_t fake_async_deliveries(void) { return asyncDeliveries; }
FAKE_EXPORT void fake_set_device_queue(int device, uint64_t queue) {
  currentDevice = device;
  currentQueue = queue;
}
FAKE_EXPORT void fake_fail_open_pool(int fail) { failOpenPool = fail; }
FAKE_EXPORT void fake_names_unavailable(int unavailable) { namesUnavailable = unavailable; }
/* Names an id past the header's last one, as a newer HIP runtime would. */
FAKE_EXPORT void fake_name_api(uint32_t op, const char *name) {
  if (op < MAX_OPS)
    extraNames[op] = name ? strdup(name) : NULL;
}
FAKE_EXPORT uint32_t fake_api_id(const char *name) { return hipApiIdByName(name); }
FAKE_EXPORT uint32_t fake_last_api_id(void) { return HIP_API_ID_LAST; }
