"""The host profiler: kernel launches timed by CUPTI (ROCTracer on AMD),
attributed to proton.scope nesting or Python call paths."""
