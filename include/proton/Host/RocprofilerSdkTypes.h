/* The subset of rocprofiler-sdk's public C API that the host profiler's
 * rocprofiler-sdk backend uses, declared here because no wheel we build
 * against ships its headers (Triton's AMD backend carries roctracer's only).
 *
 * Follows the rocprofiler-sdk headers of ROCm 7.0 (rocprofiler-sdk 1.0:
 * fwd.h, registration.h, context.h, buffer.h, buffer_tracing.h,
 * callback_tracing.h, agent.h, internal_threading.h, rocprofiler.h). The
 * SDK keeps these enum values and struct layouts stable across releases
 * (new values and fields are appended); every value below is the SDK's.
 * Plain C: the fake library in test/python/fake_rocprofiler includes it.
 *
 * Unverified on hardware: that the layouts below match a real
 * librocprofiler-sdk (they are transcribed, not compiled against it). */
#ifndef PROTON_HOST_ROCPROFILERSDKTYPES_H
#define PROTON_HOST_ROCPROFILERSDKTYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fwd.h: status codes (the first ones; the SDK has more after these). */
typedef enum {
  ROCPROFILER_STATUS_SUCCESS = 0,
  ROCPROFILER_STATUS_ERROR = 1,
  ROCPROFILER_STATUS_ERROR_CONTEXT_NOT_FOUND = 2,
  ROCPROFILER_STATUS_ERROR_BUFFER_NOT_FOUND = 3,
  ROCPROFILER_STATUS_ERROR_KIND_NOT_FOUND = 4,
  ROCPROFILER_STATUS_ERROR_OPERATION_NOT_FOUND = 5,
  ROCPROFILER_STATUS_ERROR_CONFIGURATION_LOCKED = 16,
  ROCPROFILER_STATUS_ERROR_INVALID_ARGUMENT = 19,
} rocprofiler_status_t;

typedef enum {
  ROCPROFILER_BUFFER_CATEGORY_NONE = 0,
  ROCPROFILER_BUFFER_CATEGORY_TRACING = 1,
} rocprofiler_buffer_category_t;

typedef enum {
  ROCPROFILER_AGENT_TYPE_NONE = 0,
  ROCPROFILER_AGENT_TYPE_CPU = 1,
  ROCPROFILER_AGENT_TYPE_GPU = 2,
} rocprofiler_agent_type_t;

typedef enum {
  ROCPROFILER_CALLBACK_PHASE_NONE = 0,
  ROCPROFILER_CALLBACK_PHASE_ENTER = 1,
  ROCPROFILER_CALLBACK_PHASE_LOAD = 1,
  ROCPROFILER_CALLBACK_PHASE_EXIT = 2,
  ROCPROFILER_CALLBACK_PHASE_UNLOAD = 2,
} rocprofiler_callback_phase_t;

typedef enum {
  ROCPROFILER_CALLBACK_TRACING_NONE = 0,
  ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API = 5,
  ROCPROFILER_CALLBACK_TRACING_CODE_OBJECT = 10,
} rocprofiler_callback_tracing_kind_t;

typedef enum {
  ROCPROFILER_BUFFER_TRACING_NONE = 0,
  ROCPROFILER_BUFFER_TRACING_MEMORY_COPY = 10,
  ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH = 11,
} rocprofiler_buffer_tracing_kind_t;

typedef enum {
  ROCPROFILER_CODE_OBJECT_NONE = 0,
  ROCPROFILER_CODE_OBJECT_LOAD = 1,
  ROCPROFILER_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER = 2,
} rocprofiler_code_object_operation_t;

typedef enum {
  ROCPROFILER_MEMORY_COPY_NONE = 0,
  ROCPROFILER_MEMORY_COPY_HOST_TO_HOST = 1,
  ROCPROFILER_MEMORY_COPY_HOST_TO_DEVICE = 2,
  ROCPROFILER_MEMORY_COPY_DEVICE_TO_HOST = 3,
  ROCPROFILER_MEMORY_COPY_DEVICE_TO_DEVICE = 4,
} rocprofiler_memory_copy_operation_t;

typedef enum {
  ROCPROFILER_BUFFER_POLICY_NONE = 0,
  ROCPROFILER_BUFFER_POLICY_DISCARD = 1,
  ROCPROFILER_BUFFER_POLICY_LOSSLESS = 2,
} rocprofiler_buffer_policy_t;

typedef enum {
  ROCPROFILER_AGENT_INFO_VERSION_NONE = 0,
  ROCPROFILER_AGENT_INFO_VERSION_0 = 1,
} rocprofiler_agent_version_t;

typedef uint64_t rocprofiler_timestamp_t;
typedef uint64_t rocprofiler_thread_id_t;
typedef int32_t rocprofiler_tracing_operation_t;

typedef union rocprofiler_user_data_t {
  uint64_t value;
  void *ptr;
} rocprofiler_user_data_t;

typedef struct {
  uint64_t handle;
} rocprofiler_context_id_t;
typedef struct {
  uint64_t handle;
} rocprofiler_queue_id_t;
typedef struct {
  uint64_t handle;
} rocprofiler_buffer_id_t;
typedef struct {
  uint64_t handle;
} rocprofiler_agent_id_t;
typedef struct {
  uint64_t handle;
} rocprofiler_callback_thread_t;

typedef struct {
  uint64_t internal;
  rocprofiler_user_data_t external;
} rocprofiler_correlation_id_t;

typedef struct {
  uint32_t x, y, z;
} rocprofiler_dim3_t;

/* Passed by value to callback tracing callbacks. */
typedef struct {
  rocprofiler_context_id_t context_id;
  rocprofiler_thread_id_t thread_id;
  rocprofiler_correlation_id_t correlation_id;
  rocprofiler_callback_tracing_kind_t kind;
  rocprofiler_tracing_operation_t operation;
  rocprofiler_callback_phase_t phase;
  void *payload;
} rocprofiler_callback_tracing_record_t;

typedef struct {
  union {
    struct {
      uint32_t category;
      uint32_t kind;
    };
    uint64_t hash;
  };
  void *payload;
} rocprofiler_record_header_t;

/* 128 bytes: the SDK pads it and asserts the size. */
typedef struct {
  uint64_t size;
  rocprofiler_agent_id_t agent_id;
  rocprofiler_queue_id_t queue_id;
  uint64_t kernel_id;
  uint64_t dispatch_id;
  uint32_t private_segment_size;
  uint32_t group_segment_size;
  rocprofiler_dim3_t workgroup_size;
  rocprofiler_dim3_t grid_size;
  uint8_t reserved_padding[56];
} rocprofiler_kernel_dispatch_info_t;

/* buffer_tracing.h */
typedef struct {
  uint64_t size;
  rocprofiler_buffer_tracing_kind_t kind;
  int32_t operation; /* rocprofiler_kernel_dispatch_operation_t */
  rocprofiler_correlation_id_t correlation_id;
  rocprofiler_thread_id_t thread_id;
  rocprofiler_timestamp_t start_timestamp;
  rocprofiler_timestamp_t end_timestamp;
  rocprofiler_kernel_dispatch_info_t dispatch_info;
} rocprofiler_buffer_tracing_kernel_dispatch_record_t;

typedef struct {
  uint64_t size;
  rocprofiler_buffer_tracing_kind_t kind;
  rocprofiler_memory_copy_operation_t operation;
  rocprofiler_correlation_id_t correlation_id;
  rocprofiler_thread_id_t thread_id;
  rocprofiler_timestamp_t start_timestamp;
  rocprofiler_timestamp_t end_timestamp;
  rocprofiler_agent_id_t dst_agent_id;
  rocprofiler_agent_id_t src_agent_id;
  uint64_t bytes;
} rocprofiler_buffer_tracing_memory_copy_record_t;

/* callback_tracing.h: the payload of a kernel symbol registration. */
typedef struct {
  uint64_t size;
  uint64_t kernel_id;
  uint64_t code_object_id;
  const char *kernel_name;
  uint64_t kernel_object;
  uint32_t kernarg_segment_size;
  uint32_t kernarg_segment_alignment;
  uint32_t group_segment_size;
  uint32_t private_segment_size;
} rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t;

/* agent.h: the leading fields of rocprofiler_agent_v0_t. The query takes
 * the size the caller reads, and accepts one smaller than the SDK's. */
typedef struct {
  uint64_t size;
  rocprofiler_agent_id_t id;
  rocprofiler_agent_type_t type;
} proton_rocprofiler_agent_head_t;

/* registration.h */
typedef struct {
  const char *name;
  const uint32_t handle;
} rocprofiler_client_id_t;

typedef void (*rocprofiler_client_finalize_t)(rocprofiler_client_id_t);
typedef int (*rocprofiler_tool_initialize_t)(
    rocprofiler_client_finalize_t finalize_func, void *tool_data);
typedef void (*rocprofiler_tool_finalize_t)(void *tool_data);

typedef struct {
  size_t size;
  rocprofiler_tool_initialize_t initialize;
  rocprofiler_tool_finalize_t finalize;
  void *tool_data;
} rocprofiler_tool_configure_result_t;

typedef rocprofiler_tool_configure_result_t *(*rocprofiler_configure_func_t)(
    uint32_t version, const char *runtime_version, uint32_t priority,
    rocprofiler_client_id_t *client_id);

/* Callback types */
typedef void (*rocprofiler_callback_tracing_cb_t)(
    rocprofiler_callback_tracing_record_t record,
    rocprofiler_user_data_t *user_data, void *callback_data);
typedef int (*rocprofiler_callback_tracing_kind_operation_cb_t)(
    rocprofiler_callback_tracing_kind_t kind, uint32_t operation, void *data);
typedef void (*rocprofiler_buffer_tracing_cb_t)(
    rocprofiler_context_id_t context, rocprofiler_buffer_id_t buffer_id,
    rocprofiler_record_header_t **headers, size_t num_headers, void *data,
    uint64_t drop_count);
typedef rocprofiler_status_t (*rocprofiler_query_available_agents_cb_t)(
    rocprofiler_agent_version_t version, const void **agents, size_t num_agents,
    void *user_data);

/* The entry points, as the SDK exports them. */
rocprofiler_status_t rocprofiler_get_version(uint32_t *major, uint32_t *minor,
                                             uint32_t *patch);
const char *rocprofiler_get_status_string(rocprofiler_status_t status);
rocprofiler_status_t rocprofiler_is_initialized(int *status);
rocprofiler_status_t
rocprofiler_force_configure(rocprofiler_configure_func_t configure_func);
rocprofiler_status_t
rocprofiler_create_context(rocprofiler_context_id_t *context_id);
rocprofiler_status_t rocprofiler_start_context(rocprofiler_context_id_t id);
rocprofiler_status_t rocprofiler_context_is_valid(rocprofiler_context_id_t id,
                                                  int *status);
rocprofiler_status_t rocprofiler_configure_callback_tracing_service(
    rocprofiler_context_id_t context_id,
    rocprofiler_callback_tracing_kind_t kind,
    rocprofiler_tracing_operation_t *operations, size_t operations_count,
    rocprofiler_callback_tracing_cb_t callback, void *callback_args);
rocprofiler_status_t rocprofiler_configure_buffer_tracing_service(
    rocprofiler_context_id_t context_id, rocprofiler_buffer_tracing_kind_t kind,
    const rocprofiler_tracing_operation_t *operations, size_t operations_count,
    rocprofiler_buffer_id_t buffer_id);
rocprofiler_status_t
rocprofiler_create_buffer(rocprofiler_context_id_t context, size_t size,
                          size_t watermark, rocprofiler_buffer_policy_t policy,
                          rocprofiler_buffer_tracing_cb_t callback,
                          void *callback_data,
                          rocprofiler_buffer_id_t *buffer_id);
rocprofiler_status_t rocprofiler_flush_buffer(rocprofiler_buffer_id_t id);
rocprofiler_status_t rocprofiler_query_callback_tracing_kind_operation_name(
    rocprofiler_callback_tracing_kind_t kind, uint32_t operation,
    const char **name, uint64_t *name_len);
rocprofiler_status_t rocprofiler_iterate_callback_tracing_kind_operations(
    rocprofiler_callback_tracing_kind_t kind,
    rocprofiler_callback_tracing_kind_operation_cb_t callback, void *data);
rocprofiler_status_t rocprofiler_query_available_agents(
    rocprofiler_agent_version_t version,
    rocprofiler_query_available_agents_cb_t callback, size_t agent_size,
    void *user_data);
rocprofiler_status_t
rocprofiler_create_callback_thread(rocprofiler_callback_thread_t *thread);
rocprofiler_status_t
rocprofiler_assign_callback_thread(rocprofiler_buffer_id_t buffer_id,
                                   rocprofiler_callback_thread_t thread);

#ifdef __cplusplus
}
#endif

#endif /* PROTON_HOST_ROCPROFILERSDKTYPES_H */
