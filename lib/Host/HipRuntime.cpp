#include "proton/Host/HipRuntime.h"

#include <cstring>
#include <dlfcn.h>
#include <initializer_list>

namespace proton::host {

static bool startsWith(const char *text, const char *prefix) {
  return std::strncmp(text, prefix, std::strlen(prefix)) == 0;
}

HipApiClass classifyHipApi(const char *name) {
  if (!name)
    return HipApiClass::None;
  if (startsWith(name, "hipLaunchHostFunc"))
    return HipApiClass::None; // runs a host function, no kernel
  for (const char *prefix :
       {"hipLaunchKernel", "hipLaunchCooperativeKernel", "hipLaunchByPtr",
        "hipModuleLaunch", "hipExtLaunch", "hipExtModuleLaunch",
        "hipHccModuleLaunch", "hipDrvLaunch", "hipGraphLaunch"})
    if (startsWith(name, prefix))
      return HipApiClass::Launch;
  for (const char *prefix : {"hipMemcpy", "hipMemset", "hipDrvMemcpy"})
    if (startsWith(name, prefix))
      return HipApiClass::Transfer;
  return HipApiClass::None;
}

// Unverified on hardware: that the records of finished work are then with
// the tracer (HIP and the SDK hand them over from their own threads).
void synchronizeLoadedHip() {
  for (const char *name : {"libamdhip64.so", "libamdhip64.so.7",
                           "libamdhip64.so.6", "libamdhip64.so.5"}) {
    void *hip = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
    if (!hip)
      continue;
    using Synchronize = int (*)();
    if (auto synchronize =
            reinterpret_cast<Synchronize>(dlsym(hip, "hipDeviceSynchronize")))
      synchronize();
    dlclose(hip);
    return;
  }
}

} // namespace proton::host
