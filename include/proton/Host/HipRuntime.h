// What both AMD backends (ROCTracer, rocprofiler-sdk) know about the HIP
// runtime: which of its APIs enqueue work we attribute, and how to wait for
// the device through a HIP runtime the process already holds.
#ifndef PROTON_HOST_HIPRUNTIME_H
#define PROTON_HOST_HIPRUNTIME_H

#include <cstdint>

namespace proton::host {

enum class HipApiClass : uint8_t { None = 0, Launch = 1, Transfer = 2 };

// By name, so that _spt, Ex and later variants come along: kernel launches
// (graph launches included: HIP reports a graph's kernels under the
// hipGraphLaunch's correlation id) are Launch; copies and sets Transfer.
HipApiClass classifyHipApi(const char *name);

// hipDeviceSynchronize of an already-loaded libamdhip64, if any (the
// extension never loads one itself). Kernels still running have no record.
void synchronizeLoadedHip();

} // namespace proton::host

#endif // PROTON_HOST_HIPRUNTIME_H
