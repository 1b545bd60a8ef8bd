#include "proton/Host/DynamicLibrary.h"

#include <dlfcn.h>

namespace proton::host {

std::string openLibrary(const std::string &path, const char *library,
                        const char *file,
                        const std::function<const char *(void *)> &resolve,
                        void **handle) {
  void *opened = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!opened) {
    const char *why = dlerror();
    return std::string("cannot load ") + library + " from " + path + ": " +
           (why ? why : "dlopen failed");
  }
  if (const char *missing = resolve(opened)) {
    dlclose(opened);
    return path + " has no " + missing + ": not a usable " + file;
  }
  *handle = opened;
  return "";
}

} // namespace proton::host
