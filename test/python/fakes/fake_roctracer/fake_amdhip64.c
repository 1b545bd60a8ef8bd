/* A stand-in libamdhip64 (built with soname libamdhip64.so) with the one
 * entry point the ROCTracer backend's flush looks up in an already-loaded
 * HIP runtime: hipDeviceSynchronize. It counts the calls. */
#include <stdint.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

static uint64_t synchronizations = 0;

FAKE_EXPORT int hipDeviceSynchronize(void) {
  ++synchronizations;
  return 0; /* hipSuccess */
}

FAKE_EXPORT uint64_t fake_hip_synchronizations(void) { return synchronizations; }
