// CUPTI entry points, resolved from a libcupti loaded at run time (dlopen):
// the extension links no CUDA library, so it imports on machines without one.
#ifndef PROTON_HOST_CUPTIAPI_H
#define PROTON_HOST_CUPTIAPI_H

#include <cupti.h>
#include <cupti_pcsampling.h>

#include <string>

namespace proton::host {

struct CuptiApi {
#define PROTON_CUPTI_FUNCTIONS(X)                                              \
  X(cuptiGetVersion)                                                           \
  X(cuptiGetResultString)                                                      \
  X(cuptiSubscribe)                                                            \
  X(cuptiUnsubscribe)                                                          \
  X(cuptiEnableCallback)                                                       \
  X(cuptiEnableDomain)                                                         \
  X(cuptiGetCallbackName)                                                      \
  X(cuptiActivityEnable)                                                       \
  X(cuptiActivityDisable)                                                      \
  X(cuptiActivityRegisterCallbacks)                                            \
  X(cuptiActivityFlushAll)                                                     \
  X(cuptiActivityGetNextRecord)                                                \
  X(cuptiActivityGetNumDroppedRecords)                                         \
  X(cuptiGetGraphNodeId)                                                       \
  X(cuptiGetTimestamp)                                                         \
  X(cuptiFinalize)                                                             \
  X(cuptiPCSamplingEnable)                                                     \
  X(cuptiPCSamplingDisable)                                                    \
  X(cuptiPCSamplingGetNumStallReasons)                                         \
  X(cuptiPCSamplingGetStallReasons)                                            \
  X(cuptiPCSamplingSetConfigurationAttribute)                                  \
  X(cuptiPCSamplingGetData)                                                    \
  X(cuptiGetCubinCrc)                                                          \
  X(cuptiGetSassToSourceCorrelation)
#define PROTON_CUPTI_POINTER(name) decltype(&::name) name = nullptr;
  PROTON_CUPTI_FUNCTIONS(PROTON_CUPTI_POINTER)
#undef PROTON_CUPTI_POINTER
  void *handle = nullptr;
  std::string path;
};

// The process's one CUPTI (a process has one CUPTI subscriber at most).
CuptiApi &cupti();

// Loads libcupti from `path` and resolves every entry point above. Returns
// an empty string on success, else why it failed (naming the path).
std::string loadCupti(const std::string &path);

// The loaded CUPTI's version (cuptiGetVersion), 0 if none is loaded.
uint32_t cuptiVersion();

// "CUPTI_ERROR_...: message" for a result code.
std::string cuptiErrorText(CUptiResult result);

// The CUDA driver as the program loaded it (nothing here links libcuda):
// waits for the calling thread's current context, and that context (null
// when there is none). Both do nothing while libcuda is not loaded.
void synchronizeCurrentContext();
CUcontext currentContext();

} // namespace proton::host

#endif // PROTON_HOST_CUPTIAPI_H
