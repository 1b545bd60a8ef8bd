"""Run time: an instrumentation session (instrumentation_session) allocates the profile
buffers of the launches it keeps (launches, cuda_graphs; arena, of the
profiler's own device memory), reads them back (buffer), decodes them with the
kernel's KernelMetadata (decode, decode_non_scope) and writes the traces;
calibration and clock_sync measure the record cost and the GPU's timer offset."""
