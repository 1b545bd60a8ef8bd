// The rocprofiler-sdk (AMD) side of the host profiler: HIP runtime API
// callbacks on the launch, copy and set entry points (calling context and
// launch metrics by correlation id, through recordLaunchNow), kernel-symbol
// callbacks for kernel names, and buffered kernel-dispatch and memory-copy
// records fed to the same ActivityStore as CUPTI and ROCTracer.
//
// rocprofiler-sdk takes a tool once per process (rocprofiler_force_configure)
// and only while it has not initialized; the tool's one context then stays
// started for the life of the process (upstream Triton's Proton found a
// stopped context does not reliably trace again): "stop" flushes and makes
// the callbacks return at once.
//
// Tested on the CPU only, through a fake librocprofiler-sdk that follows the
// SDK's headers (test/python/fake_rocprofiler); never run on an AMD GPU.
#ifndef PROTON_HOST_ROCPROFILERTRACER_H
#define PROTON_HOST_ROCPROFILERTRACER_H

#include <cstdint>
#include <string>
#include <tuple>

namespace proton::host {

// Each returns an empty string on success, else the error.
std::string loadRocprofilerLibrary(const std::string &path);
// The first start configures the SDK (once per process; it must come before
// the HIP runtime creates its queues for kernel dispatches to be traced).
std::string startRocprofilerTracing();
// Waits for the device (hipDeviceSynchronize of an already-loaded
// libamdhip64, if any), then has the SDK deliver its buffer to the store.
std::string flushRocprofilerTracing();
std::string stopRocprofilerTracing();
bool rocprofilerTracing();
// Whether this process's rocprofiler-sdk has taken our tool.
bool rocprofilerConfigured();

// The loaded library's path ("" if none) and version (0, 0, 0 if none).
std::string rocprofilerLibraryPath();
std::tuple<uint32_t, uint32_t, uint32_t> rocprofilerVersion();

// Tracing records read from the SDK's buffer while tracing, and records
// the SDK reported it dropped.
uint64_t rocprofilerActivities();
uint64_t rocprofilerDropped();

} // namespace proton::host

#endif // PROTON_HOST_ROCPROFILERTRACER_H
