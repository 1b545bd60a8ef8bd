"""What the parts of the profiler agree on, importing none of them: the
profile buffer's layout and the compiler's enums (compiler_exports), one
kernel's KernelMetadata (kernel_metadata: the contract between compile time
and decoding), the decoded events the writers take (events), the names a
scope may have (scope_names), and the errors users see (errors)."""
