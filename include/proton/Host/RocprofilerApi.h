// rocprofiler-sdk entry points, resolved from a librocprofiler-sdk loaded at
// run time (dlopen): the extension links no ROCm library, so it imports on
// machines without one. The types are our own transcription of the SDK's
// (RocprofilerSdkTypes.h), so this backend is built everywhere.
#ifndef PROTON_HOST_ROCPROFILERAPI_H
#define PROTON_HOST_ROCPROFILERAPI_H

#include "proton/Host/RocprofilerSdkTypes.h"

#include <string>

namespace proton::host {

struct RocprofilerApi {
#define PROTON_ROCPROFILER_FUNCTIONS(X)                                        \
  X(rocprofiler_get_version)                                                   \
  X(rocprofiler_get_status_string)                                             \
  X(rocprofiler_is_initialized)                                                \
  X(rocprofiler_force_configure)                                               \
  X(rocprofiler_create_context)                                                \
  X(rocprofiler_start_context)                                                 \
  X(rocprofiler_context_is_valid)                                              \
  X(rocprofiler_configure_callback_tracing_service)                            \
  X(rocprofiler_configure_buffer_tracing_service)                              \
  X(rocprofiler_create_buffer)                                                 \
  X(rocprofiler_flush_buffer)                                                  \
  X(rocprofiler_query_callback_tracing_kind_operation_name)                    \
  X(rocprofiler_iterate_callback_tracing_kind_operations)                      \
  X(rocprofiler_query_available_agents)                                        \
  X(rocprofiler_create_callback_thread)                                        \
  X(rocprofiler_assign_callback_thread)
#define PROTON_ROCPROFILER_POINTER(name) decltype(&::name) name = nullptr;
  PROTON_ROCPROFILER_FUNCTIONS(PROTON_ROCPROFILER_POINTER)
#undef PROTON_ROCPROFILER_POINTER
  void *handle = nullptr;
  std::string path;
};

// The process's one rocprofiler-sdk (apart from the CUPTI and ROCTracer
// tables: the CPU tests load all three fakes in one process).
RocprofilerApi &rocprofiler();

// Loads librocprofiler-sdk from `path` and resolves every entry point above.
// Returns an empty string on success, else why it failed (naming the path or
// the missing symbol).
std::string loadRocprofiler(const std::string &path);

// "`what` failed: <the SDK's message> (status N)" for a failed call, "" on
// success.
std::string rocprofilerCheck(rocprofiler_status_t status, const char *what);

} // namespace proton::host

#endif // PROTON_HOST_ROCPROFILERAPI_H
