// The ROCTracer backend's stand-in for builds without AMD's headers
// (triton/backends/amd/include): loading says why, and it never traces.
#include "proton/Host/RoctracerTracer.h"

namespace proton::host {

static const char *const kRoctracerNotBuilt =
    "the ROCTracer backend is not built into this install of proton._host (no "
    "AMD headers, "
    "roctracer/roctracer_hip.h, at build time; install triton with its AMD "
    "backend and rebuild)";

bool roctracerBuilt() { return false; }
std::string loadRoctracerLibrary(const std::string &) {
  return kRoctracerNotBuilt;
}
std::string startRoctracerTracing() { return kRoctracerNotBuilt; }
std::string flushRoctracerTracing() { return ""; }
std::string stopRoctracerTracing() { return ""; }
bool roctracerTracing() { return false; }
std::string roctracerLibraryPath() { return ""; }
std::pair<uint32_t, uint32_t> roctracerVersion() { return {0, 0}; }
uint64_t roctracerActivities() { return 0; }

} // namespace proton::host
