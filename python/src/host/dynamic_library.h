// Opening a vendor library at run time and resolving a table of its entry
// points: the one mechanism behind the CUPTI and ROCTracer loaders.
#pragma once

#include <functional>
#include <string>

namespace proton::host {

// dlopens `path` (RTLD_NOW | RTLD_LOCAL) and calls `resolve(handle)`, which
// fills the caller's table and returns the first entry point it could not
// find (nullptr when it found them all). On success stores the handle in
// `*handle` and returns an empty string; otherwise closes the library and
// returns why, naming `library` ("CUPTI") or the missing symbol and `file`
// ("libcupti").
std::string openLibrary(const std::string &path, const char *library, const char *file,
                        const std::function<const char *(void *)> &resolve, void **handle);

} // namespace proton::host
