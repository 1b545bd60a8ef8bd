// --proton-pipeline repeats the buffer options of convert-proton-to-protongpu
// (include/proton/Transforms/Pipeline.h and BufferOptions.td): both must show
// the same help and, by default, hand the conversion the same values.
// RUN: proton-opt --help | FileCheck %s --check-prefix=HELP
// RUN: proton-opt %s --convert-proton-to-protongpu --dump-pass-pipeline -o %t 2> %t.passes
// RUN: proton-opt %s --proton-pipeline --dump-pass-pipeline -o %t 2>> %t.passes
// RUN: FileCheck %s --check-prefix=DEFAULTS --input-file=%t.passes
// RUN: proton-opt %s --proton-pipeline="target=amdgpu arch=gfx942 sched-stores=true strip-metadata=true" --dump-pass-pipeline -o %t 2>&1 | FileCheck %s --check-prefix=GFX942
// RUN: proton-opt %s --proton-pipeline="mma-scopes=true" --dump-pass-pipeline -o %t 2>&1 | FileCheck %s --check-prefix=MMA

// HELP:      --convert-proton-to-protongpu
// HELP-NEXT:   --buffer-size=<uint> - [[BUFFER_SIZE:.+]]{{$}}
// HELP-NEXT:   --buffer-type=<value> - [[BUFFER_TYPE:.+]]{{$}}
// HELP-NEXT:   =auto - [[AUTO:.+]]{{$}}
// HELP-NEXT:   =shared - [[SHARED:.+]]{{$}}
// HELP-NEXT:   =global - [[GLOBAL:.+]]{{$}}
// HELP-NEXT:   =registers - [[REGISTERS:.+]]{{$}}
// HELP-NEXT:   --clock-bits=<uint> - [[CLOCK_BITS:.+]]{{$}}
// HELP-NEXT:   --granularity=<value> - [[GRANULARITY:.+]]{{$}}
// HELP-NEXT:   =warp - [[WARP:.+]]{{$}}
// HELP-NEXT:   =warp_group - [[WARP_GROUP:.+]]{{$}}
// HELP-NEXT:   =cta - [[CTA:.+]]{{$}}
// HELP-NEXT:   --num-warps=<uint> - [[NUM_WARPS:.+]]{{$}}
// HELP-NEXT:   --sampling-options=<int> - [[SAMPLING_OPTIONS:.+]]{{$}}
// HELP-NEXT:   --sampling-strategy=<string> - [[SAMPLING_STRATEGY:.+]]{{$}}
// HELP-NEXT:   --shared-limit=<uint> - [[SHARED_LIMIT:.+]]{{$}}
// HELP-NEXT:   --shared-offset=<uint> - [[SHARED_OFFSET:.+]]{{$}}
// HELP-NEXT:   --threads-per-warp=<uint> - [[THREADS_PER_WARP:.+]]{{$}}
// HELP:      Pass Pipelines:
// HELP-NEXT: --proton-pipeline - The whole instrumentation chain the Triton plugin runs
// HELP-NEXT:   --arch=<string>
// HELP-NEXT:   --buffer-size=<uint> - [[BUFFER_SIZE]]{{$}}
// HELP-NEXT:   --buffer-type=<value> - [[BUFFER_TYPE]]{{$}}
// HELP-NEXT:   =auto - [[AUTO]]{{$}}
// HELP-NEXT:   =shared - [[SHARED]]{{$}}
// HELP-NEXT:   =global - [[GLOBAL]]{{$}}
// HELP-NEXT:   =registers - [[REGISTERS]]{{$}}
// HELP-NEXT:   --clock-bits=<uint> - [[CLOCK_BITS]]{{$}}
// HELP-NEXT:   --granularity=<value> - [[GRANULARITY]]{{$}}
// HELP-NEXT:   =warp - [[WARP]]{{$}}
// HELP-NEXT:   =warp_group - [[WARP_GROUP]]{{$}}
// HELP-NEXT:   =cta - [[CTA]]{{$}}
// HELP-NEXT:   --kernel-id=<uint>
// HELP-NEXT:   --mma-scopes
// HELP-NEXT:   --num-warps=<uint> - [[NUM_WARPS]]{{$}}
// HELP-NEXT:   --sampling-options=<int> - [[SAMPLING_OPTIONS]]{{$}}
// HELP-NEXT:   --sampling-strategy=<string> - [[SAMPLING_STRATEGY]]{{$}}
// HELP-NEXT:   --sched-barriers
// HELP-NEXT:   --sched-stores
// HELP-NEXT:   --shared-limit=<uint> - [[SHARED_LIMIT]]{{$}}
// HELP-NEXT:   --shared-offset=<uint> - [[SHARED_OFFSET]]{{$}}
// HELP-NEXT:   --strip-metadata
// HELP-NEXT:   --target=<string>
// HELP-NEXT:   --threads-per-warp=<uint> - [[THREADS_PER_WARP]]{{$}}

// With nvptx and no arch, the pipeline's own defaults (threads per warp,
// shared limit) are the conversion's.
// DEFAULTS:      builtin.module(
// DEFAULTS-NEXT:   convert-proton-to-protongpu{[[OPTIONS:.+]]}
// DEFAULTS:      builtin.module(
// DEFAULTS-NEXT:   proton-lift-markers,
// DEFAULTS-NEXT:   convert-proton-to-protongpu{[[OPTIONS]]},
// DEFAULTS-NEXT:   convert-protongpu-to-llvm{arch= kernel-id=0 target=nvptx}
// DEFAULTS-NEXT: )

// The MMA mode adds its scopes after the markers are lifted, before the
// conversion allocates scope ids.
// MMA:      builtin.module(
// MMA-NEXT:   proton-lift-markers,
// MMA-NEXT:   proton-mma-scopes,
// MMA-NEXT:   convert-proton-to-protongpu{

// For gfx942, 64-lane wavefronts, its LDS size and scheduling barriers.
// GFX942:      builtin.module(
// GFX942-NEXT:   proton-lift-markers,
// GFX942-NEXT:   convert-proton-to-protongpu{{{.*}} shared-limit=65536 {{.*}}threads-per-warp=64},
// GFX942-NEXT:   proton-schedule-stores,
// GFX942-NEXT:   proton-add-sched-barriers,
// GFX942-NEXT:   convert-protongpu-to-llvm{arch=gfx942 kernel-id=0 target=amdgpu},
// GFX942-NEXT:   proton-strip-metadata
// GFX942-NEXT: )
