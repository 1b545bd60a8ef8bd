// ROCTracer entry points, resolved from a libroctracer64 loaded at run time
// (dlopen): the extension links no ROCm library, so it imports on machines
// without one. Only roctracer.h (plain C, no HIP) is needed here.
#ifndef PROTON_HOST_ROCTRACERAPI_H
#define PROTON_HOST_ROCTRACERAPI_H

#include <roctracer/roctracer.h>

#include <string>

namespace proton::host {

struct RoctracerApi {
#define PROTON_ROCTRACER_FUNCTIONS(X)                                          \
  X(roctracer_version_major)                                                   \
  X(roctracer_version_minor)                                                   \
  X(roctracer_error_string)                                                    \
  X(roctracer_op_string)                                                       \
  X(roctracer_enable_op_callback)                                              \
  X(roctracer_disable_op_callback)                                             \
  X(roctracer_open_pool_expl)                                                  \
  X(roctracer_close_pool_expl)                                                 \
  X(roctracer_enable_op_activity_expl)                                         \
  X(roctracer_disable_op_activity)                                             \
  X(roctracer_flush_activity_expl)                                             \
  X(roctracer_next_record)
#define PROTON_ROCTRACER_POINTER(name) decltype(&::name) name = nullptr;
  PROTON_ROCTRACER_FUNCTIONS(PROTON_ROCTRACER_POINTER)
#undef PROTON_ROCTRACER_POINTER
  void *handle = nullptr;
  std::string path;
};

// The process's one ROCTracer. Separate from the CUPTI table: a process may
// hold both libraries (the CPU tests load both fakes), each loaded once.
RoctracerApi &roctracer();

// Loads libroctracer64 from `path` and resolves every entry point above.
// Returns an empty string on success, else why it failed (naming the path
// or the missing symbol).
std::string loadRoctracer(const std::string &path);

// "ROCTRACER_STATUS_...: last error message" for a status code.
std::string roctracerErrorText(roctracer_status_t status);

} // namespace proton::host

#endif // PROTON_HOST_ROCTRACERAPI_H
