/* A fake libcupti for CPU tests of the host profiler's runtime
 * (lib/Host). The runtime loads it with proton._host.load_cupti(path)
 * like a real libcupti; the tests drive it through the fake_* functions
 * (ctypes), which play the part of the CUDA driver: API callbacks around
 * "launches", resource callbacks for graph nodes, and activity records
 * delivered by cuptiActivityFlushAll. With PC sampling enabled, each launch
 * leaves a few canned PC samples for cuptiPCSamplingGetData, and cubins
 * "loaded" with fake_load_module map PCs to made-up source lines.
 *
 * Activity buffers hold fixed-size slots, each large enough for the largest
 * record kind used here, so cuptiActivityGetNextRecord can walk them. */
#include <cupti.h>
#include <cupti_pcsampling.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------ state */

#define MAX_CBID 1024

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static CUpti_CallbackFunc subscriberCallback = NULL;
static void *subscriberUserdata = NULL;
static int subscribed = 0;
/* The handle only has to be non-null and recognizable. */
static int subscriberToken;
#define SUBSCRIBER_HANDLE ((CUpti_SubscriberHandle)&subscriberToken)

static unsigned char callbackEnabled[CUPTI_CB_DOMAIN_SIZE][MAX_CBID];
static unsigned char activityEnabled[CUPTI_ACTIVITY_KIND_COUNT];

static CUpti_BuffersCallbackRequestFunc bufferRequested = NULL;
static CUpti_BuffersCallbackCompleteFunc bufferCompleted = NULL;

static size_t droppedRecords = 0;
static uint32_t nextCorrelation = 1;
static uint32_t currentDevice = 0;
static uint32_t currentStream = 7;
static uint64_t callbackCount = 0;   /* subscriber callbacks invoked */
static uint64_t buffersCompleted = 0; /* completed buffers handed back */
static uint64_t finalizeCount = 0;   /* cuptiFinalize calls that detached */
/* The one context of the fake driver: launches and resources report it. */
static int contextToken;
#define FAKE_CONTEXT ((CUcontext)&contextToken)

/* ---------------------------------------------------------- record slots */

#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define RAW_SLOT                                                               \
  MAX2(sizeof(CUpti_ActivityKernel9),                                          \
       MAX2(sizeof(CUpti_ActivityMemcpy6), sizeof(CUpti_ActivityMemset4)))
#define SLOT_BYTES ((RAW_SLOT + 7) / 8 * 8)

static unsigned char *pending = NULL; /* SLOT_BYTES per record */
static size_t pendingCount = 0, pendingCapacity = 0;

static unsigned char *newSlot(void) {
  if (pendingCount == pendingCapacity) {
    size_t capacity = pendingCapacity ? pendingCapacity * 2 : 1024;
    unsigned char *grown = realloc(pending, capacity * SLOT_BYTES);
    if (!grown)
      abort();
    pending = grown;
    pendingCapacity = capacity;
  }
  unsigned char *slot = pending + pendingCount++ * SLOT_BYTES;
  memset(slot, 0, SLOT_BYTES);
  return slot;
}

/* ------------------------------------------------------- interned names */

struct Name {
  char *text;
  struct Name *next;
};
static struct Name *names = NULL;

/* Record names must outlive the buffers (as with real CUPTI): never freed. */
static const char *internName(const char *text) {
  if (!text)
    return NULL;
  for (struct Name *n = names; n; n = n->next)
    if (strcmp(n->text, text) == 0)
      return n->text;
  struct Name *n = malloc(sizeof *n);
  n->text = strdup(text);
  n->next = names;
  names = n;
  return n->text;
}

/* ------------------------------------------------------------ graph nodes */

/* Node ids are the CUgraphNode pointer values: kNodeBase + k * kNodeStep. */
static const uint64_t kNodeBase = 0x10000;
static const uint64_t kNodeStep = 0x10;
static const char **nodeNames = NULL; /* kernel name per node, NULL if none */
static unsigned char *nodeAlive = NULL;
static size_t nodeCount = 0, nodeCapacity = 0;

static uint64_t newNode(const char *kernelName) {
  if (nodeCount == nodeCapacity) {
    size_t capacity = nodeCapacity ? nodeCapacity * 2 : 256;
    nodeNames = realloc(nodeNames, capacity * sizeof *nodeNames);
    nodeAlive = realloc(nodeAlive, capacity);
    if (!nodeNames || !nodeAlive)
      abort();
    nodeCapacity = capacity;
  }
  nodeNames[nodeCount] = internName(kernelName);
  nodeAlive[nodeCount] = 1;
  return kNodeBase + kNodeStep * nodeCount++;
}

static long nodeIndex(uint64_t id) {
  if (id < kNodeBase || (id - kNodeBase) % kNodeStep)
    return -1;
  uint64_t index = (id - kNodeBase) / kNodeStep;
  return index < nodeCount ? (long)index : -1;
}

/* ---------------------------------------------------- callback names */

struct CallbackName {
  uint32_t cbid;
  const char *name;
};
static const struct CallbackName driverNames[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx"},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch"},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2"},
    {CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2"},
    {CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, "cuMemsetD8_v2"},
    {CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, "cuCtxGetCurrent"},
    {CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2"},
};

static const char *driverName(uint32_t cbid) {
  for (size_t i = 0; i < sizeof driverNames / sizeof driverNames[0]; ++i)
    if (driverNames[i].cbid == cbid)
      return driverNames[i].name;
  return NULL;
}

/* ------------------------------------------------------------ CUPTI API */

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version) {
  if (!version)
    return CUPTI_ERROR_INVALID_PARAMETER;
  *version = 26;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str) {
  if (!str)
    return CUPTI_ERROR_INVALID_PARAMETER;
  switch (result) {
  case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
  case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
  case CUPTI_ERROR_MAX_LIMIT_REACHED: *str = "CUPTI_ERROR_MAX_LIMIT_REACHED"; break;
  case CUPTI_ERROR_INVALID_OPERATION: *str = "CUPTI_ERROR_INVALID_OPERATION"; break;
  case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
    break;
  default: *str = "CUPTI_ERROR_UNKNOWN"; return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
                                                CUpti_CallbackFunc callback, void *userdata) {
  if (!subscriber)
    return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  if (subscribed) {
    pthread_mutex_unlock(&lock);
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  subscribed = 1;
  subscriberCallback = callback;
  subscriberUserdata = userdata;
  memset(callbackEnabled, 0, sizeof callbackEnabled);
  pthread_mutex_unlock(&lock);
  *subscriber = SUBSCRIBER_HANDLE;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  pthread_mutex_lock(&lock);
  if (!subscribed || subscriber != SUBSCRIBER_HANDLE) {
    pthread_mutex_unlock(&lock);
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  subscribed = 0;
  subscriberCallback = NULL;
  subscriberUserdata = NULL;
  memset(callbackEnabled, 0, sizeof callbackEnabled);
  pthread_mutex_unlock(&lock);
  return CUPTI_SUCCESS;
}

/* Detaches the fake from the process as CUPTI does: the activity kinds and
 * buffer callbacks are gone, so a later client registers them again. Our
 * fake refuses while a subscriber is still attached. */
FAKE_EXPORT CUptiResult CUPTIAPI cuptiFinalize(void) {
  pthread_mutex_lock(&lock);
  if (subscribed) {
    pthread_mutex_unlock(&lock);
    return CUPTI_ERROR_INVALID_OPERATION;
  }
  memset(activityEnabled, 0, sizeof activityEnabled);
  bufferRequested = NULL;
  bufferCompleted = NULL;
  ++finalizeCount;
  pthread_mutex_unlock(&lock);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                     CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (subscriber != SUBSCRIBER_HANDLE || !subscribed || domain <= CUPTI_CB_DOMAIN_INVALID ||
      domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= MAX_CBID)
    return CUPTI_ERROR_INVALID_PARAMETER;
  callbackEnabled[domain][cbid] = enable ? 1 : 0;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                   CUpti_CallbackDomain domain) {
  if (subscriber != SUBSCRIBER_HANDLE || !subscribed || domain <= CUPTI_CB_DOMAIN_INVALID ||
      domain >= CUPTI_CB_DOMAIN_SIZE)
    return CUPTI_ERROR_INVALID_PARAMETER;
  memset(callbackEnabled[domain], enable ? 1 : 0, MAX_CBID);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                                      const char **name) {
  if (!name)
    return CUPTI_ERROR_INVALID_PARAMETER;
  *name = domain == CUPTI_CB_DOMAIN_DRIVER_API ? driverName(cbid) : NULL;
  return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

/* A kind the next cuptiActivityEnable of it refuses (as CUPTI refuses kinds
 * on a context that samples PCs), or 0. */
static int refusedActivityKind = 0;
FAKE_EXPORT void fake_refuse_activity_once(int kind) { refusedActivityKind = kind; }

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (refusedActivityKind && (int)kind == refusedActivityKind) {
    refusedActivityKind = 0;
    return CUPTI_ERROR_NOT_COMPATIBLE;
  }
  activityEnabled[kind] = 1;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
    return CUPTI_ERROR_INVALID_PARAMETER;
  activityEnabled[kind] = 0;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                                CUpti_BuffersCallbackCompleteFunc completed) {
  if (!requested || !completed)
    return CUPTI_ERROR_INVALID_PARAMETER;
  bufferRequested = requested;
  bufferCompleted = completed;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  (void)flag;
  if (!bufferRequested || !bufferCompleted)
    return CUPTI_ERROR_INVALID_OPERATION;
  pthread_mutex_lock(&lock);
  unsigned char *records = pending;
  size_t count = pendingCount;
  pending = NULL;
  pendingCount = pendingCapacity = 0;
  pthread_mutex_unlock(&lock);

  size_t done = 0;
  while (done < count) {
    uint8_t *buffer = NULL;
    size_t size = 0, maxRecords = 0;
    bufferRequested(&buffer, &size, &maxRecords);
    if (!buffer || size < SLOT_BYTES) {
      /* The client declined: what is left is dropped. */
      pthread_mutex_lock(&lock);
      droppedRecords += count - done;
      pthread_mutex_unlock(&lock);
      break;
    }
    size_t fit = size / SLOT_BYTES;
    if (maxRecords && maxRecords < fit)
      fit = maxRecords;
    if (fit > count - done)
      fit = count - done;
    memcpy(buffer, records + done * SLOT_BYTES, fit * SLOT_BYTES);
    done += fit;
    ++buffersCompleted;
    bufferCompleted(NULL, 0, buffer, size, fit * SLOT_BYTES);
  }
  free(records);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
                                                            CUpti_Activity **record) {
  if (!buffer || !record)
    return CUPTI_ERROR_INVALID_PARAMETER;
  size_t offset = 0;
  if (*record) {
    uint8_t *previous = (uint8_t *)*record;
    if (previous < buffer || (size_t)(previous - buffer) % SLOT_BYTES)
      return CUPTI_ERROR_INVALID_PARAMETER;
    offset = (size_t)(previous - buffer) + SLOT_BYTES;
  }
  if (offset + SLOT_BYTES > validBufferSizeBytes)
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = (CUpti_Activity *)(buffer + offset);
  return CUPTI_SUCCESS;
}

/* Attributes are accepted and ignored (only benchmark knobs set them). */
FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *valueSize,
                                                           void *value) {
  (void)attr;
  return valueSize && value ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                                   size_t *dropped) {
  (void)context;
  (void)streamId;
  if (!dropped)
    return CUPTI_ERROR_INVALID_PARAMETER;
  pthread_mutex_lock(&lock);
  *dropped = droppedRecords; /* reset on read, as documented */
  droppedRecords = 0;
  pthread_mutex_unlock(&lock);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetGraphNodeId(CUgraphNode node, uint64_t *nodeId) {
  if (!node || !nodeId)
    return CUPTI_ERROR_INVALID_PARAMETER;
  *nodeId = (uint64_t)(uintptr_t)node;
  return CUPTI_SUCCESS;
}

/* The clock launch times are read from: a value the test sets. */
static uint64_t fakeTimestamp = 1;

FAKE_EXPORT void fake_set_timestamp(uint64_t ns) { fakeTimestamp = ns; }

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp) {
  if (!timestamp)
    return CUPTI_ERROR_INVALID_PARAMETER;
  *timestamp = fakeTimestamp;
  return CUPTI_SUCCESS;
}

/* ---------------------------------------------------------- PC sampling */

/* Three stall reasons, with CUPTI's kind of names and non-contiguous
 * indices. */
#define NUM_STALLS 3
static const uint32_t stallIndex[NUM_STALLS] = {2, 5, 9};
static const char *stallName[NUM_STALLS] = {"smsp__pcsamp_warps_issue_stalled_long_scoreboard",
                                            "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle",
                                            "smsp__pcsamp_warps_issue_stalled_selected"};

struct FakePc {
  uint64_t crc, pcOffset;
  const char *function;
  uint32_t correlation;
  uint32_t samples[NUM_STALLS]; /* per stall reason, in stallIndex order */
};
#define MAX_PENDING_PCS 4096
static struct FakePc pendingPcs[MAX_PENDING_PCS];
static size_t pendingPcCount = 0;

static int pcEnabled = 0;           /* cuptiPCSamplingEnable'd on FAKE_CONTEXT */
static int pcEnableCalls = 0;
static uint32_t pcCollectionMode = 0, pcPeriod = 0;
static size_t pcStallCount = 0;
static void *pcConfiguredBuffer = NULL;
static size_t pcChunk = 0;          /* PCs per cuptiPCSamplingGetData call, 0: no limit */
static uint64_t pcGetDataCalls = 0;
static uint64_t moduleCrc = 0;      /* of the last fake_load_module */

static const char kCubinMagic[] = "FAKECUBIN";

static uint64_t fnv1a(const void *bytes, size_t size) {
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i)
    hash = (hash ^ ((const unsigned char *)bytes)[i]) * 1099511628211ull;
  return hash;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiPCSamplingEnable(CUpti_PCSamplingEnableParams *params) {
  if (!params || params->size != CUpti_PCSamplingEnableParamsSize || params->ctx != FAKE_CONTEXT)
    return CUPTI_ERROR_INVALID_PARAMETER;
  pcEnabled = 1;
  ++pcEnableCalls;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiPCSamplingDisable(CUpti_PCSamplingDisableParams *params) {
  if (!params || params->size != CUpti_PCSamplingDisableParamsSize || params->ctx != FAKE_CONTEXT)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (!pcEnabled)
    return CUPTI_ERROR_INVALID_OPERATION;
  pcEnabled = 0;
  pcCollectionMode = pcPeriod = 0;
  pcStallCount = 0;
  pcConfiguredBuffer = NULL;
  pendingPcCount = 0;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI
cuptiPCSamplingGetNumStallReasons(CUpti_PCSamplingGetNumStallReasonsParams *params) {
  if (!params || params->size != CUpti_PCSamplingGetNumStallReasonsParamsSize || !params->numStallReasons)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (!pcEnabled)
    return CUPTI_ERROR_INVALID_OPERATION;
  *params->numStallReasons = NUM_STALLS;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiPCSamplingGetStallReasons(CUpti_PCSamplingGetStallReasonsParams *params) {
  if (!params || params->size != CUpti_PCSamplingGetStallReasonsParamsSize ||
      params->numStallReasons != NUM_STALLS || !params->stallReasonIndex || !params->stallReasons)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (!pcEnabled)
    return CUPTI_ERROR_INVALID_OPERATION;
  for (size_t i = 0; i < NUM_STALLS; ++i) {
    params->stallReasonIndex[i] = stallIndex[i];
    strncpy(params->stallReasons[i], stallName[i], CUPTI_STALL_REASON_STRING_SIZE - 1);
    params->stallReasons[i][CUPTI_STALL_REASON_STRING_SIZE - 1] = '\0';
  }
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI
cuptiPCSamplingSetConfigurationAttribute(CUpti_PCSamplingConfigurationInfoParams *params) {
  if (!params || params->size != CUpti_PCSamplingConfigurationInfoParamsSize || params->ctx != FAKE_CONTEXT ||
      !params->pPCSamplingConfigurationInfo)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (!pcEnabled)
    return CUPTI_ERROR_INVALID_OPERATION;
  CUptiResult result = CUPTI_SUCCESS;
  for (size_t i = 0; i < params->numAttributes; ++i) {
    CUpti_PCSamplingConfigurationInfo *info = &params->pPCSamplingConfigurationInfo[i];
    info->attributeStatus = CUPTI_SUCCESS;
    switch (info->attributeType) {
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE:
      pcCollectionMode = info->attributeData.collectionModeData.collectionMode;
      break;
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD:
      pcPeriod = info->attributeData.samplingPeriodData.samplingPeriod;
      if (pcPeriod < 5 || pcPeriod > 31)
        info->attributeStatus = CUPTI_ERROR_INVALID_PARAMETER;
      break;
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON:
      pcStallCount = info->attributeData.stallReasonData.stallReasonCount;
      if (!info->attributeData.stallReasonData.pStallReasonIndex)
        info->attributeStatus = CUPTI_ERROR_INVALID_PARAMETER;
      break;
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER:
      pcConfiguredBuffer = info->attributeData.samplingDataBufferData.samplingDataBuffer;
      break;
    default:
      info->attributeStatus = CUPTI_ERROR_INVALID_OPERATION;
    }
    if (info->attributeStatus != CUPTI_SUCCESS)
      result = info->attributeStatus;
  }
  return result;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiPCSamplingGetData(CUpti_PCSamplingGetDataParams *params) {
  if (!params || params->size != CUpti_PCSamplingGetDataParamsSize || params->ctx != FAKE_CONTEXT ||
      !params->pcSamplingData)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (!pcEnabled)
    return CUPTI_ERROR_INVALID_OPERATION;
  CUpti_PCSamplingData *data = (CUpti_PCSamplingData *)params->pcSamplingData;
  if (data->size != sizeof(CUpti_PCSamplingData) || !data->pPcData || !data->collectNumPcs)
    return CUPTI_ERROR_INVALID_PARAMETER;
  ++pcGetDataCalls;
  size_t count = pendingPcCount;
  if (count > data->collectNumPcs)
    count = data->collectNumPcs;
  if (pcChunk && count > pcChunk)
    count = pcChunk;
  data->totalSamples = 0;
  data->droppedSamples = 0;
  for (size_t i = 0; i < count; ++i) {
    const struct FakePc *pc = &pendingPcs[i];
    CUpti_PCSamplingPCData *out = &data->pPcData[i];
    if (out->size != sizeof(CUpti_PCSamplingPCData) || !out->stallReason)
      return CUPTI_ERROR_INVALID_PARAMETER;
    out->cubinCrc = pc->crc;
    out->pcOffset = pc->pcOffset;
    out->functionName = (char *)pc->function;
    out->correlationId = pc->correlation;
    out->stallReasonCount = 0;
    for (size_t k = 0; k < NUM_STALLS && k < pcStallCount; ++k) {
      if (!pc->samples[k])
        continue;
      out->stallReason[out->stallReasonCount].pcSamplingStallReasonIndex = stallIndex[k];
      out->stallReason[out->stallReasonCount].samples = pc->samples[k];
      ++out->stallReasonCount;
      data->totalSamples += pc->samples[k];
    }
  }
  memmove(pendingPcs, pendingPcs + count, (pendingPcCount - count) * sizeof pendingPcs[0]);
  pendingPcCount -= count;
  data->totalNumPcs = count;
  data->remainingNumPcs = pendingPcCount;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetCubinCrc(CUpti_GetCubinCrcParams *params) {
  if (!params || params->size != CUpti_GetCubinCrcParamsSize || !params->cubin || !params->cubinSize)
    return CUPTI_ERROR_INVALID_PARAMETER;
  params->cubinCrc = fnv1a(params->cubin, params->cubinSize);
  return CUPTI_SUCCESS;
}

/* Lines 10 + pcOffset / 32 of /src/fake/fake_kernels.py; PCs from 0x400 on
 * have no line information. */
FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetSassToSourceCorrelation(CUpti_GetSassToSourceCorrelationParams *params) {
  if (!params || params->size != CUpti_GetSassToSourceCorrelationParamsSize || !params->cubin ||
      !params->functionName || !params->cubinSize)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (params->cubinSize < sizeof kCubinMagic - 1 || memcmp(params->cubin, kCubinMagic, sizeof kCubinMagic - 1))
    return CUPTI_ERROR_INVALID_MODULE;
  if (params->pcOffset >= 0x400)
    return CUPTI_ERROR_UNKNOWN;
  params->lineNumber = (uint32_t)(10 + params->pcOffset / 32);
  params->fileName = strdup("fake_kernels.py");
  params->dirName = strdup("/src/fake");
  return CUPTI_SUCCESS;
}

/* What a sampled launch of `kernelName` leaves: four PCs, eight samples
 * (see test_pc_sampling.py). */
static void queuePcs(const char *kernelName, uint32_t correlation) {
  static const struct {
    uint64_t pcOffset;
    uint32_t samples[NUM_STALLS];
  } canned[] = {{0x10, {3, 0, 1}}, {0x20, {0, 2, 0}}, {0x30, {1, 0, 0}}, {0x400, {0, 0, 1}}};
  for (size_t i = 0; i < sizeof canned / sizeof canned[0] && pendingPcCount < MAX_PENDING_PCS; ++i) {
    struct FakePc *pc = &pendingPcs[pendingPcCount++];
    pc->crc = moduleCrc;
    pc->pcOffset = canned[i].pcOffset;
    pc->function = internName(kernelName);
    pc->correlation = correlation;
    memcpy(pc->samples, canned[i].samples, sizeof pc->samples);
  }
}

/* ------------------------------------------------- the fake "driver" */

static int enabled(CUpti_CallbackDomain domain, uint32_t cbid) {
  return subscribed && subscriberCallback && cbid < MAX_CBID && callbackEnabled[domain][cbid];
}

static void apiCallback(uint32_t cbid, CUpti_ApiCallbackSite site, uint32_t correlation, const char *symbol) {
  if (!enabled(CUPTI_CB_DOMAIN_DRIVER_API, cbid))
    return;
  uint64_t correlationData = 0;
  CUpti_CallbackData data;
  memset(&data, 0, sizeof data);
  data.callbackSite = site;
  data.functionName = driverName(cbid);
  data.symbolName = symbol;
  data.correlationData = &correlationData;
  data.correlationId = correlation;
  data.context = FAKE_CONTEXT;
  ++callbackCount;
  subscriberCallback(subscriberUserdata, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &data);
}

static void resourceCallback(CUpti_CallbackId cbid, void *descriptor) {
  if (!enabled(CUPTI_CB_DOMAIN_RESOURCE, cbid))
    return;
  CUpti_ResourceData data;
  memset(&data, 0, sizeof data);
  data.context = FAKE_CONTEXT;
  data.resourceDescriptor = descriptor;
  ++callbackCount;
  subscriberCallback(subscriberUserdata, CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

static void graphCallback(CUpti_CallbackId cbid, uint64_t node, uint64_t original) {
  if (!enabled(CUPTI_CB_DOMAIN_RESOURCE, cbid))
    return;
  CUpti_GraphData graph;
  memset(&graph, 0, sizeof graph);
  graph.graph = (CUgraph)(uintptr_t)0xabc0;
  graph.node = (CUgraphNode)(uintptr_t)node;
  graph.originalNode = (CUgraphNode)(uintptr_t)original;
  graph.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
  CUpti_ResourceData data;
  memset(&data, 0, sizeof data);
  data.resourceDescriptor = &graph;
  ++callbackCount;
  subscriberCallback(subscriberUserdata, CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

static CUpti_ActivityKind kernelKind(void) {
  if (activityEnabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL])
    return CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  if (activityEnabled[CUPTI_ACTIVITY_KIND_KERNEL])
    return CUPTI_ACTIVITY_KIND_KERNEL;
  return CUPTI_ACTIVITY_KIND_INVALID;
}

static void queueKernel(const char *name, uint32_t correlation, uint64_t graphNode, uint64_t start,
                        uint64_t end) {
  CUpti_ActivityKind kind = kernelKind();
  if (kind == CUPTI_ACTIVITY_KIND_INVALID)
    return;
  pthread_mutex_lock(&lock);
  CUpti_ActivityKernel9 *kernel = (CUpti_ActivityKernel9 *)newSlot();
  kernel->kind = kind;
  kernel->name = internName(name);
  kernel->deviceId = currentDevice;
  kernel->streamId = currentStream;
  kernel->contextId = 1;
  kernel->start = start;
  kernel->end = end;
  kernel->completed = end;
  kernel->correlationId = correlation;
  kernel->graphNodeId = graphNode;
  kernel->gridX = kernel->gridY = kernel->gridZ = 1;
  kernel->blockX = 128;
  kernel->blockY = kernel->blockZ = 1;
  pthread_mutex_unlock(&lock);
}

/* Only the ids; not thread-safe against concurrent launches (tests launch
 * from one thread). */
static uint32_t takeCorrelation(void) { return nextCorrelation++; }

/* A kernel launch through driver entry point `cbid`; returns its
 * correlation id. */
FAKE_EXPORT uint32_t fake_launch(uint32_t cbid, const char *kernelName, uint64_t start, uint64_t end,
                                 int emitActivity) {
  uint32_t correlation = takeCorrelation();
  apiCallback(cbid, CUPTI_API_ENTER, correlation, kernelName);
  if (emitActivity)
    queueKernel(kernelName, correlation, 0, start, end);
  if (pcEnabled)
    queuePcs(kernelName, correlation);
  apiCallback(cbid, CUPTI_API_EXIT, correlation, kernelName);
  return correlation;
}

/* cuModuleLoadData of `size` bytes (starting "FAKECUBIN" for source lines):
 * the MODULE_LOADED callback, and later samples come from this module.
 * Returns its CRC. */
FAKE_EXPORT uint64_t fake_load_module(const char *bytes, size_t size) {
  moduleCrc = fnv1a(bytes, size);
  CUpti_ModuleResourceData module;
  memset(&module, 0, sizeof module);
  module.moduleId = 1;
  module.pCubin = bytes;
  module.cubinSize = size;
  resourceCallback(CUPTI_CBID_RESOURCE_MODULE_LOADED, &module);
  return moduleCrc;
}

/* cuCtxDestroy of the fake context (it lives on: only the callback). */
FAKE_EXPORT void fake_destroy_context(void) { resourceCallback(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, NULL); }

/* Samples left behind, as a launch the profiler did not drain would leave. */
FAKE_EXPORT void fake_queue_pcs(const char *kernelName, uint32_t correlation) {
  if (pcEnabled)
    queuePcs(kernelName, correlation);
}

/* `count` cuLaunchKernel launches of `kernelName` (durations 1 ns), for
 * volume tests; returns the last correlation id. */
FAKE_EXPORT uint32_t fake_launch_many(const char *kernelName, uint64_t count, int emitActivity) {
  uint32_t correlation = 0;
  for (uint64_t i = 0; i < count; ++i)
    correlation = fake_launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, kernelName, 1000 + i, 1001 + i,
                              emitActivity);
  return correlation;
}

/* A kernel record for `correlation`, with no API call around it. */
FAKE_EXPORT void fake_kernel_record(uint32_t correlation, uint64_t graphNode, const char *kernelName,
                                    uint64_t start, uint64_t end) {
  queueKernel(kernelName, correlation, graphNode, start, end);
}

/* A cuLaunchKernel while the stream is being captured: the launch becomes a
 * new graph node (returned), and no kernel runs. */
FAKE_EXPORT uint64_t fake_capture_launch(const char *kernelName) {
  uint32_t correlation = takeCorrelation();
  apiCallback(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, correlation, kernelName);
  uint64_t node = newNode(kernelName);
  graphCallback(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, node, 0);
  apiCallback(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, correlation, kernelName);
  return node;
}

/* A kernel node added by cuGraphAddKernelNode (no launch API around it). */
FAKE_EXPORT uint64_t fake_add_kernel_node(const char *kernelName) {
  uint64_t node = newNode(kernelName);
  graphCallback(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, node, 0);
  return node;
}

/* A node copied by graph instantiation or cuGraphClone; returns the copy,
 * or 0 for an unknown node. */
FAKE_EXPORT uint64_t fake_clone_node(uint64_t original) {
  long index = nodeIndex(original);
  if (index < 0)
    return 0;
  uint64_t node = newNode(nodeNames[index]);
  graphCallback(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, node, original);
  return node;
}

FAKE_EXPORT int fake_destroy_node(uint64_t node) {
  long index = nodeIndex(node);
  if (index < 0 || !nodeAlive[index])
    return -1;
  graphCallback(CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING, node, 0);
  nodeAlive[index] = 0;
  return 0;
}

/* cuGraphLaunch of a graph holding `nodes`: one kernel per node, one after
 * the other from `start` (each `duration` ns), all with the graph launch's
 * correlation id (returned). */
FAKE_EXPORT uint32_t fake_graph_launch(const uint64_t *nodes, size_t count, uint64_t start, uint64_t duration) {
  uint32_t correlation = takeCorrelation();
  apiCallback(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_API_ENTER, correlation, NULL);
  apiCallback(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_API_EXIT, correlation, NULL);
  for (size_t i = 0; i < count; ++i) {
    long index = nodeIndex(nodes[i]);
    const char *name = index >= 0 && nodeNames[index] ? nodeNames[index] : "<unknown node>";
    uint64_t begin = start + i * duration;
    queueKernel(name, correlation, nodes[i], begin, begin + duration);
  }
  return correlation;
}

/* cuMemcpy* (the driver entry point `cbid`) of copy kind `copyKind`
 * (CUpti_ActivityMemcpyKind). */
FAKE_EXPORT uint32_t fake_memcpy(uint32_t cbid, uint32_t copyKind, uint64_t bytes, uint64_t start, uint64_t end) {
  uint32_t correlation = takeCorrelation();
  apiCallback(cbid, CUPTI_API_ENTER, correlation, NULL);
  if (activityEnabled[CUPTI_ACTIVITY_KIND_MEMCPY]) {
    pthread_mutex_lock(&lock);
    CUpti_ActivityMemcpy6 *copy = (CUpti_ActivityMemcpy6 *)newSlot();
    copy->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    copy->copyKind = (uint8_t)copyKind;
    copy->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    copy->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    copy->bytes = bytes;
    copy->start = start;
    copy->end = end;
    copy->deviceId = currentDevice;
    copy->contextId = 1;
    copy->streamId = currentStream;
    copy->correlationId = correlation;
    pthread_mutex_unlock(&lock);
  }
  apiCallback(cbid, CUPTI_API_EXIT, correlation, NULL);
  return correlation;
}

/* cuMemsetD8_v2 of `bytes` bytes. */
FAKE_EXPORT uint32_t fake_memset(uint64_t bytes, uint64_t start, uint64_t end) {
  uint32_t cbid = CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2;
  uint32_t correlation = takeCorrelation();
  apiCallback(cbid, CUPTI_API_ENTER, correlation, NULL);
  if (activityEnabled[CUPTI_ACTIVITY_KIND_MEMSET]) {
    pthread_mutex_lock(&lock);
    CUpti_ActivityMemset4 *set = (CUpti_ActivityMemset4 *)newSlot();
    set->kind = CUPTI_ACTIVITY_KIND_MEMSET;
    set->value = 0;
    set->bytes = bytes;
    set->start = start;
    set->end = end;
    set->deviceId = currentDevice;
    set->contextId = 1;
    set->streamId = currentStream;
    set->correlationId = correlation;
    set->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    pthread_mutex_unlock(&lock);
  }
  apiCallback(cbid, CUPTI_API_EXIT, correlation, NULL);
  return correlation;
}

/* A driver call with no activity (e.g. cuCtxGetCurrent). */
FAKE_EXPORT uint32_t fake_api_call(uint32_t cbid) {
  uint32_t correlation = takeCorrelation();
  apiCallback(cbid, CUPTI_API_ENTER, correlation, NULL);
  apiCallback(cbid, CUPTI_API_EXIT, correlation, NULL);
  return correlation;
}

/* ------------------------------------------------------ test inspection */

FAKE_EXPORT int fake_is_enabled(uint32_t domain, uint32_t cbid) {
  if (domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= MAX_CBID)
    return 0;
  return subscribed && callbackEnabled[domain][cbid];
}

FAKE_EXPORT int fake_activity_enabled(uint32_t kind) {
  return kind < CUPTI_ACTIVITY_KIND_COUNT && activityEnabled[kind];
}

FAKE_EXPORT int fake_subscribed(void) { return subscribed; }

/* Takes the subscription as another CUPTI client would (the handle is the
 * fake's only one, so fake_release_other gives it back). */
FAKE_EXPORT int fake_subscribe_other(void) {
  if (subscribed)
    return -1;
  subscribed = 1;
  subscriberCallback = NULL;
  memset(callbackEnabled, 0, sizeof callbackEnabled);
  return 0;
}

FAKE_EXPORT void fake_release_other(void) {
  subscribed = 0;
  subscriberCallback = NULL;
}

FAKE_EXPORT void fake_set_dropped(uint64_t count) {
  pthread_mutex_lock(&lock);
  droppedRecords = count;
  pthread_mutex_unlock(&lock);
}

FAKE_EXPORT void fake_set_device_stream(uint32_t device, uint32_t stream) {
  currentDevice = device;
  currentStream = stream;
}

FAKE_EXPORT uint64_t fake_callback_count(void) { return callbackCount; }
FAKE_EXPORT uint64_t fake_buffers_completed(void) { return buffersCompleted; }
FAKE_EXPORT uint64_t fake_finalize_count(void) { return finalizeCount; }
FAKE_EXPORT uint64_t fake_pending_records(void) { return pendingCount; }
FAKE_EXPORT uint64_t fake_slot_bytes(void) { return SLOT_BYTES; }
FAKE_EXPORT int fake_pc_enabled(void) { return pcEnabled; }
FAKE_EXPORT int fake_pc_enable_calls(void) { return pcEnableCalls; }
FAKE_EXPORT uint32_t fake_pc_collection_mode(void) { return pcCollectionMode; }
FAKE_EXPORT uint32_t fake_pc_period(void) { return pcPeriod; }
FAKE_EXPORT uint64_t fake_pc_stall_count(void) { return pcStallCount; }
FAKE_EXPORT int fake_pc_has_buffer(void) { return pcConfiguredBuffer != NULL; }
FAKE_EXPORT uint64_t fake_pc_get_data_calls(void) { return pcGetDataCalls; }
FAKE_EXPORT uint64_t fake_pc_pending(void) { return pendingPcCount; }
FAKE_EXPORT void fake_pc_set_chunk(uint64_t chunk) { pcChunk = chunk; }

/* NVTX ranges as an NVTX-injected CUPTI sees them: the NVTX domain's
 * callbacks with nvtxRangePushA / nvtxRangePushEx / nvtxRangePop params. */
struct fake_nvtx_attributes {
  uint16_t version, size;
  uint32_t category;
  int32_t colorType;
  uint32_t color;
  int32_t payloadType, reserved0;
  uint64_t payload;
  int32_t messageType;
  const char *message;
};

static int nvtxCallback(uint32_t cbid, const char *name, const void *params) {
  if (!enabled(CUPTI_CB_DOMAIN_NVTX, cbid))
    return 0;
  CUpti_NvtxData data;
  memset(&data, 0, sizeof data);
  data.functionName = name;
  data.functionParams = params;
  ++callbackCount;
  subscriberCallback(subscriberUserdata, CUPTI_CB_DOMAIN_NVTX, cbid, &data);
  return 1;
}

FAKE_EXPORT int fake_nvtx_push(const char *message) {
  const char *params = message;
  return nvtxCallback(CUPTI_CBID_NVTX_nvtxRangePushA, "nvtxRangePushA", &params);
}

FAKE_EXPORT int fake_nvtx_push_ex(const char *message) {
  struct fake_nvtx_attributes attributes;
  memset(&attributes, 0, sizeof attributes);
  attributes.version = 2;
  attributes.size = sizeof attributes;
  attributes.messageType = 1;
  attributes.message = message;
  const struct fake_nvtx_attributes *params = &attributes;
  return nvtxCallback(CUPTI_CBID_NVTX_nvtxRangePushEx, "nvtxRangePushEx", &params);
}

FAKE_EXPORT int fake_nvtx_pop(void) {
  int unused = 0;
  return nvtxCallback(CUPTI_CBID_NVTX_nvtxRangePop, "nvtxRangePop", &unused);
}
