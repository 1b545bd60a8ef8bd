#include "proton/Host/CuptiApi.h"

#include "proton/Host/DynamicLibrary.h"

#include <dlfcn.h>

namespace proton::host {

CuptiApi &cupti() {
  static CuptiApi api;
  return api;
}

std::string loadCupti(const std::string &path) {
  return loadOnce(cupti(), path, "CUPTI", "libcupti",
                  [](CuptiApi &api, void *handle) -> const char * {
#define PROTON_CUPTI_RESOLVE(name)                                             \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));       \
  if (!api.name)                                                               \
    return #name;
                    PROTON_CUPTI_FUNCTIONS(PROTON_CUPTI_RESOLVE)
#undef PROTON_CUPTI_RESOLVE
                    return nullptr;
                  });
}

uint32_t cuptiVersion() {
  uint32_t version = 0;
  if (!cupti().handle || cupti().cuptiGetVersion(&version) != CUPTI_SUCCESS)
    return 0;
  return version;
}

std::string cuptiErrorText(CUptiResult result) {
  const char *text = nullptr;
  if (cupti().cuptiGetResultString &&
      cupti().cuptiGetResultString(result, &text) == CUPTI_SUCCESS && text)
    return text;
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

} // namespace proton::host
