#ifndef PROTON_TRANSFORMS_PIPELINE_OPTIONS_TD
#define PROTON_TRANSFORMS_PIPELINE_OPTIONS_TD

include "mlir/Pass/PassBase.td"
include "proton/Conversion/ProtonToProtonGPU/BufferOptions.td"

// A pass pipeline's options, written like a pass's; tools/tblgen/
// gen_pipeline_options.py turns them into a PassPipelineOptions struct's
// members (see Pipeline.h).
class PassPipelineOptions<list<Option> pipelineOptions> {
  list<Option> options = pipelineOptions;
}

// --proton-pipeline: its own options, then the buffer options it hands to
// convert-proton-to-protongpu (the conversion's own, from BufferOptions.td).
def ProtonPipelineOptions : PassPipelineOptions<!listconcat([
  Option<"target", "target", "std::string", "\"nvptx\"", "nvptx or amdgpu">,
  Option<"arch", "arch", "std::string", "\"\"",
         "sm_90, ... for nvptx; gfx942 or gfx950 for amdgpu">,
  Option<"kernelId", "kernel-id", "unsigned", "0",
         "the id convert-protongpu-to-llvm writes into CTA headers">,
  Option<"schedStores", "sched-stores", "bool", "false",
         "run proton-schedule-stores">,
  Option<"schedBarriers", "sched-barriers", "bool", "true",
         "run proton-add-sched-barriers (AMDGPU only)">,
  Option<"mmaScopes", "mma-scopes", "bool", "false",
         "run proton-mma-scopes (the MMA mode): scopes mma.issue, mma.wait "
         "and mma around the kernel's matrix-multiply instructions">,
  Option<"stripMetadata", "strip-metadata", "bool", "false",
         "run proton-strip-metadata: drop the layout and scope table "
         "attributes the compiler reads back, so that stock mlir-translate "
         "can translate the output">
], ProtonBufferOptions)>;

#endif
