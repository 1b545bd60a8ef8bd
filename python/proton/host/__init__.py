"""The host profiler: kernel launches timed by CUPTI (ROCTracer on AMD),
attributed to proton.scope nesting or Python call paths. Its sessions
(session, their metrics: metrics), scopes (scope) and states (state), the
launch hook (launch_hook), the C++ runtime and its open sessions (runtime),
the vendor tracers and libraries (tracers, libraries, rocm_wheels), and the
tree and trace builders (activity_tree, activity_trace)."""
