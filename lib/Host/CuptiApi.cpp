#include "proton/Host/CuptiApi.h"

#include "proton/Host/DynamicLibrary.h"

#include <atomic>
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

// An entry point of the libcuda already loaded, or null. The handle is
// kept so that the pointer stays valid.
static void *loadedDriverSymbol(const char *name) {
  void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return cuda ? dlsym(cuda, name) : nullptr;
}

void synchronizeCurrentContext() {
  using Synchronize = int (*)();
  static std::atomic<Synchronize> resolved{nullptr}; // called per launch
  Synchronize synchronize = resolved.load(std::memory_order_acquire);
  if (!synchronize) {
    synchronize =
        reinterpret_cast<Synchronize>(loadedDriverSymbol("cuCtxSynchronize"));
    if (!synchronize)
      return;
    resolved.store(synchronize, std::memory_order_release);
  }
  synchronize();
}

CUcontext currentContext() {
  using GetCurrent = int (*)(CUcontext *);
  auto getCurrent =
      reinterpret_cast<GetCurrent>(loadedDriverSymbol("cuCtxGetCurrent"));
  CUcontext context = nullptr;
  if (!getCurrent || getCurrent(&context) != 0)
    return nullptr;
  return context;
}

std::string cuptiErrorText(CUptiResult result) {
  const char *text = nullptr;
  if (cupti().cuptiGetResultString &&
      cupti().cuptiGetResultString(result, &text) == CUPTI_SUCCESS && text)
    return text;
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

} // namespace proton::host
