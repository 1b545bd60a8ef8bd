// The ROCTracer (AMD) side of the host profiler: HIP API callbacks on the
// launch, copy and set entry points (calling context and launch metrics by
// correlation id, through recordLaunchNow) and HIP_OPS activity records
// (kernel dispatches, copies, fills) fed to the same ActivityStore as CUPTI.
//
// No ROCm header here: the extension includes this file whether or not the
// backend was built. lib/Host/CMakeLists.txt builds RoctracerTracer.cpp when
// Triton's AMD headers are there, else RoctracerMissing.cpp, whose functions
// say that the backend is not built.
//
// Tested on the CPU only, through a fake libroctracer64 that follows the
// documented API (test/python/fake_roctracer); never run on an AMD GPU.
#ifndef PROTON_HOST_ROCTRACERTRACER_H
#define PROTON_HOST_ROCTRACERTRACER_H

#include <cstdint>
#include <string>
#include <utility>

namespace proton::host {

// Whether this build has the backend (RoctracerTracer.cpp) or its stand-in.
bool roctracerBuilt();

// Each returns an empty string on success, else the error.
std::string loadRoctracerLibrary(const std::string &path);
std::string startRoctracerTracing();
// Waits for the device (hipDeviceSynchronize of an already-loaded
// libamdhip64, if any), then hands the pool's records to the store.
std::string flushRoctracerTracing();
std::string stopRoctracerTracing();
bool roctracerTracing();

// The loaded library's path ("" if none) and version (major, minor; 0, 0 if
// none).
std::string roctracerLibraryPath();
std::pair<uint32_t, uint32_t> roctracerVersion();

// Activity records read from ROCTracer's buffers (any domain or op).
uint64_t roctracerActivities();

} // namespace proton::host

#endif // PROTON_HOST_ROCTRACERTRACER_H
