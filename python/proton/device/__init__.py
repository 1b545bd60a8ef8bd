"""The GPU as the profiler sees it, for host and instrumentation sessions
alike: device memory of the profiler's own (memory), the devices'
properties (info) and their peak rates (specs)."""
