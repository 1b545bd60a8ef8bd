#include "proton/Host/RoctracerApi.h"

#include "proton/Host/DynamicLibrary.h"

#include <cstdlib>
#include <dlfcn.h>

namespace proton::host {

RoctracerApi &roctracer() {
  static RoctracerApi api;
  return api;
}

std::string loadRoctracer(const std::string &path) {
  return loadOnce(roctracer(), path, "ROCTracer", "libroctracer64",
                  [](RoctracerApi &api, void *handle) -> const char * {
#define PROTON_ROCTRACER_RESOLVE(name)                                         \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));       \
  if (!api.name)                                                               \
    return #name;
                    PROTON_ROCTRACER_FUNCTIONS(PROTON_ROCTRACER_RESOLVE)
#undef PROTON_ROCTRACER_RESOLVE
                    return nullptr;
                  });
}

static const char *statusName(roctracer_status_t status) {
  switch (status) {
  case ROCTRACER_STATUS_SUCCESS:
    return "ROCTRACER_STATUS_SUCCESS";
  case ROCTRACER_STATUS_ERROR:
    return "ROCTRACER_STATUS_ERROR";
  case ROCTRACER_STATUS_ERROR_INVALID_DOMAIN_ID:
    return "ROCTRACER_STATUS_ERROR_INVALID_DOMAIN_ID";
  case ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT:
    return "ROCTRACER_STATUS_ERROR_INVALID_ARGUMENT";
  case ROCTRACER_STATUS_ERROR_DEFAULT_POOL_UNDEFINED:
    return "ROCTRACER_STATUS_ERROR_DEFAULT_POOL_UNDEFINED";
  case ROCTRACER_STATUS_ERROR_DEFAULT_POOL_ALREADY_DEFINED:
    return "ROCTRACER_STATUS_ERROR_DEFAULT_POOL_ALREADY_DEFINED";
  case ROCTRACER_STATUS_ERROR_MEMORY_ALLOCATION:
    return "ROCTRACER_STATUS_ERROR_MEMORY_ALLOCATION";
  case ROCTRACER_STATUS_ERROR_MISMATCHED_EXTERNAL_CORRELATION_ID:
    return "ROCTRACER_STATUS_ERROR_MISMATCHED_EXTERNAL_CORRELATION_ID";
  case ROCTRACER_STATUS_ERROR_NOT_IMPLEMENTED:
    return "ROCTRACER_STATUS_ERROR_NOT_IMPLEMENTED";
  default:
    return nullptr;
  }
}

std::string roctracerErrorText(roctracer_status_t status) {
  const char *name = statusName(status);
  std::string text =
      name ? name
           : "ROCTracer status " + std::to_string(static_cast<int>(status));
  // The calling thread's last error message: the caller owns (frees) it.
  if (roctracer().roctracer_error_string) {
    if (const char *message = roctracer().roctracer_error_string()) {
      if (*message)
        text += std::string(": ") + message;
      std::free(const_cast<char *>(message));
    }
  }
  return text;
}

} // namespace proton::host
