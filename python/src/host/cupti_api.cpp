#include "cupti_api.h"

#include "dynamic_library.h"

#include <dlfcn.h>

namespace proton::host {

CuptiApi &cupti() {
  static CuptiApi api;
  return api;
}

std::string loadCupti(const std::string &path) {
  CuptiApi &api = cupti();
  if (api.handle)
    return api.path == path ? "" : "CUPTI is already loaded from " + api.path;
  CuptiApi loaded;
  std::string error = openLibrary(path, "CUPTI", "libcupti", [&](void *handle) -> const char * {
#define PROTON_CUPTI_RESOLVE(name)                                             \
  loaded.name = reinterpret_cast<decltype(loaded.name)>(dlsym(handle, #name)); \
  if (!loaded.name)                                                            \
    return #name;
    PROTON_CUPTI_FUNCTIONS(PROTON_CUPTI_RESOLVE)
#undef PROTON_CUPTI_RESOLVE
    return nullptr;
  }, &loaded.handle);
  if (!error.empty())
    return error;
  loaded.path = path;
  api = loaded;
  return "";
}

std::string cuptiErrorText(CUptiResult result) {
  const char *text = nullptr;
  if (cupti().cuptiGetResultString &&
      cupti().cuptiGetResultString(result, &text) == CUPTI_SUCCESS && text)
    return text;
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

} // namespace proton::host
