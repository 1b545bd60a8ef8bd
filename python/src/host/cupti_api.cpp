#include "cupti_api.h"

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
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return "cannot load CUPTI from " + path + ": " + (why ? why : "dlopen failed");
  }
  CuptiApi loaded;
#define PROTON_CUPTI_RESOLVE(name)                                             \
  loaded.name = reinterpret_cast<decltype(loaded.name)>(dlsym(handle, #name)); \
  if (!loaded.name) {                                                          \
    dlclose(handle);                                                           \
    return path + " has no " #name ": not a usable libcupti";                 \
  }
  PROTON_CUPTI_FUNCTIONS(PROTON_CUPTI_RESOLVE)
#undef PROTON_CUPTI_RESOLVE
  loaded.handle = handle;
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
