// A fake GPU runtime for the profiler's device memory (proton/device/
// memory.py) on a machine without a GPU: the CUDA driver's and HIP's
// memory calls over host memory, so a "device pointer" is a host address
// that tests read and write. It counts what it is asked and can be told to
// fail, for the tests of allocation, capture mode and errors.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *current_context = (void *)0x1000;
static long copies = 0;               // device-to-device copies queued
static int fail_copies = 0;           // the next N copies fail
static void *last_copy_stream = NULL; // the stream of the latest one
static int current_device = 0;
static int capture_mode = 0;      // the thread's mode, as exchanged
static int relaxed_calls = 0;     // allocations and frees made in relaxed mode
static int fail_allocations = 0;  // the next N allocations fail
static long live_allocations = 0; // allocated and not freed
static long live_bytes = 0;
static long fills = 0;
static long synchronizations = 0;

typedef struct Block {
  void *pointer;
  size_t bytes;
  struct Block *next;
} Block;
static Block *blocks = NULL;

static int do_alloc(void **out, size_t bytes) {
  if (fail_allocations > 0) {
    --fail_allocations;
    return 2; // out of memory
  }
  if (capture_mode == 2)
    ++relaxed_calls;
  void *p = aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!p)
    return 2;
  memset(p, 0xEE, bytes); // what fresh device memory might hold
  Block *b = malloc(sizeof(Block));
  b->pointer = p;
  b->bytes = bytes;
  b->next = blocks;
  blocks = b;
  *out = p;
  ++live_allocations;
  live_bytes += (long)bytes;
  return 0;
}

static int do_free(void *p) {
  for (Block **link = &blocks; *link; link = &(*link)->next) {
    if ((*link)->pointer == p) {
      Block *b = *link;
      *link = b->next;
      live_bytes -= (long)b->bytes;
      --live_allocations;
      free(b);
      free(p);
      if (capture_mode == 2)
        ++relaxed_calls;
      return 0;
    }
  }
  return 1; // invalid value
}

static void do_fill(void *p, unsigned word, size_t words) {
  uint32_t *w = (uint32_t *)p;
  for (size_t i = 0; i < words; ++i)
    w[i] = word;
  ++fills;
}

// -- CUDA driver --------------------------------------------------------------
int cuMemAlloc_v2(uint64_t *out, size_t bytes) {
  void *p = NULL;
  int r = do_alloc(&p, bytes);
  *out = (uint64_t)(uintptr_t)p;
  return r;
}
int cuMemFree_v2(uint64_t p) { return do_free((void *)(uintptr_t)p); }
int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes) {
  memcpy(dst, (void *)(uintptr_t)src, bytes);
  return 0;
}
int cuMemcpyDtoDAsync_v2(uint64_t dst, uint64_t src, size_t bytes, void *stream) {
  if (fail_copies > 0) {
    --fail_copies;
    return 1; // invalid value
  }
  memcpy((void *)(uintptr_t)dst, (void *)(uintptr_t)src, bytes);
  ++copies;
  last_copy_stream = stream;
  return 0;
}
int cuMemsetD32Async(uint64_t p, unsigned word, size_t words, void *stream) {
  do_fill((void *)(uintptr_t)p, word, words);
  return 0;
}
int cuStreamCreate(void **stream, unsigned flags) {
  *stream = (void *)0x5000;
  return 0;
}
int cuStreamSynchronize(void *stream) { return 0; }
int cuCtxGetCurrent(void **context) {
  *context = current_context;
  return 0;
}
int cuCtxSetCurrent(void *context) {
  current_context = context;
  return 0;
}
int cuCtxGetDevice(int *device) {
  *device = current_device;
  return 0;
}
int cuDevicePrimaryCtxRetain(void **context, int device) {
  *context = (void *)(uintptr_t)(0x1000 + device);
  return 0;
}
int cuCtxSynchronize(void) {
  ++synchronizations;
  return 0;
}
int cuThreadExchangeStreamCaptureMode(int *mode) {
  int previous = capture_mode;
  capture_mode = *mode;
  *mode = previous;
  return 0;
}
int cuGetErrorName(int error, const char **name) {
  *name = error == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_INVALID_VALUE";
  return 0;
}

// -- HIP runtime --------------------------------------------------------------
int hipMalloc(void **out, size_t bytes) { return do_alloc(out, bytes); }
int hipFree(void *p) { return do_free(p); }
int hipMemcpyDtoH(void *dst, void *src, size_t bytes) {
  memcpy(dst, src, bytes);
  return 0;
}
int hipMemcpyDtoDAsync(void *dst, void *src, size_t bytes, void *stream) {
  memcpy(dst, src, bytes);
  ++copies;
  last_copy_stream = stream;
  return 0;
}
int hipMemsetD32Async(void *p, int word, size_t words, void *stream) {
  do_fill(p, (unsigned)word, words);
  return 0;
}
int hipStreamCreateWithFlags(void **stream, unsigned flags) {
  *stream = (void *)0x6000;
  return 0;
}
int hipStreamSynchronize(void *stream) { return 0; }
int hipGetDevice(int *device) {
  *device = current_device;
  return 0;
}
int hipSetDevice(int device) {
  current_device = device;
  return 0;
}
int hipDeviceSynchronize(void) {
  ++synchronizations;
  return 0;
}
int hipThreadExchangeStreamCaptureMode(int *mode) {
  return cuThreadExchangeStreamCaptureMode(mode);
}
const char *hipGetErrorName(int error) {
  return error == 2 ? "hipErrorOutOfMemory" : "hipErrorInvalidValue";
}

// -- for the tests --------------------------------------------------------------
void fake_set_device(int device, void *context) {
  current_device = device;
  current_context = context;
}
void fake_set_capture_mode(int mode) { capture_mode = mode; }
int fake_capture_mode(void) { return capture_mode; }
int fake_relaxed_calls(void) { return relaxed_calls; }
void fake_fail_allocations(int n) { fail_allocations = n; }
long fake_live_allocations(void) { return live_allocations; }
long fake_live_bytes(void) { return live_bytes; }
long fake_fills(void) { return fills; }
long fake_copies(void) { return copies; }
void fake_fail_copies(int n) { fail_copies = n; }
void *fake_last_copy_stream(void) { return last_copy_stream; }
long fake_synchronizations(void) { return synchronizations; }
