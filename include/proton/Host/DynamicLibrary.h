// Opening a vendor library at run time and resolving a table of its entry
// points: the one mechanism behind the CUPTI and ROCTracer loaders.
#ifndef PROTON_HOST_DYNAMICLIBRARY_H
#define PROTON_HOST_DYNAMICLIBRARY_H

#include <functional>
#include <string>

namespace proton::host {

// dlopens `path` (RTLD_NOW | RTLD_LOCAL) and calls `resolve(handle)`, which
// fills the caller's table and returns the first entry point it could not
// find (nullptr when it found them all). On success stores the handle in
// `*handle` and returns an empty string; otherwise closes the library and
// returns why, naming `library` ("CUPTI") or the missing symbol and `file`
// ("libcupti").
std::string openLibrary(const std::string &path, const char *library,
                        const char *file,
                        const std::function<const char *(void *)> &resolve,
                        void **handle);

// Loads a process-wide entry-point table (`Api` has `handle`, `path` and the
// entry points) once: loading the same path again is a no-op, another path
// an error. `resolve(table, handle)` fills a fresh table as for openLibrary;
// `api` changes only when every entry point was found.
template <typename Api, typename Resolve>
std::string loadOnce(Api &api, const std::string &path, const char *library,
                     const char *file, Resolve resolve) {
  if (api.handle)
    return api.path == path
               ? ""
               : std::string(library) + " is already loaded from " + api.path;
  Api loaded;
  std::string error = openLibrary(
      path, library, file,
      [&](void *handle) { return resolve(loaded, handle); }, &loaded.handle);
  if (!error.empty())
    return error;
  loaded.path = path;
  api = loaded;
  return "";
}

} // namespace proton::host

#endif // PROTON_HOST_DYNAMICLIBRARY_H
