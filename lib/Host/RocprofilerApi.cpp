#include "proton/Host/RocprofilerApi.h"

#include "proton/Host/DynamicLibrary.h"

#include <dlfcn.h>

namespace proton::host {

RocprofilerApi &rocprofiler() {
  static RocprofilerApi api;
  return api;
}

std::string loadRocprofiler(const std::string &path) {
  return loadOnce(rocprofiler(), path, "rocprofiler-sdk", "librocprofiler-sdk",
                  [](RocprofilerApi &api, void *handle) -> const char * {
#define PROTON_ROCPROFILER_RESOLVE(name)                                       \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));       \
  if (!api.name)                                                               \
    return #name;
                    PROTON_ROCPROFILER_FUNCTIONS(PROTON_ROCPROFILER_RESOLVE)
#undef PROTON_ROCPROFILER_RESOLVE
                    return nullptr;
                  });
}

std::string rocprofilerCheck(rocprofiler_status_t status, const char *what) {
  if (status == ROCPROFILER_STATUS_SUCCESS)
    return "";
  const char *message =
      rocprofiler().rocprofiler_get_status_string
          ? rocprofiler().rocprofiler_get_status_string(status)
          : nullptr;
  return std::string(what) +
         " failed: " + (message && *message ? message : "unknown error") +
         " (status " + std::to_string(static_cast<int>(status)) + ")";
}

} // namespace proton::host
