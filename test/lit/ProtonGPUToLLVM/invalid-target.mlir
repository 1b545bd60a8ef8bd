// Pass options that name no supported target; one option set per part.
// RUN: split-file %s %t
// RUN: proton-opt %t/unknown-target.mlir --convert-protongpu-to-llvm="target=spirv" -verify-diagnostics
// RUN: proton-opt %t/amd-arch.mlir --convert-protongpu-to-llvm="target=amdgpu arch=gfx90a" -verify-diagnostics
// RUN: proton-opt %t/amd-nvidia-arch.mlir --convert-protongpu-to-llvm="target=amdgpu arch=sm_90" -verify-diagnostics
// RUN: proton-opt %t/nvidia-arch.mlir --convert-protongpu-to-llvm="target=nvptx arch=gfx942" -verify-diagnostics
// RUN: proton-opt %t/pipeline-arch.mlir --proton-pipeline="target=amdgpu arch=gfx1100" -verify-diagnostics

//--- unknown-target.mlir
// expected-error @+1 {{unknown target 'spirv'; valid: nvptx, amdgpu}}
module {
  llvm.func @f() {
    %c = proton_gpu.read_counter : i64
    llvm.return
  }
}

//--- amd-arch.mlir
// expected-error @+1 {{arch 'gfx90a' is not supported for amdgpu; supported: gfx942, gfx950}}
module {
  llvm.func @f() {
    llvm.return
  }
}

//--- amd-nvidia-arch.mlir
// expected-error @+1 {{arch 'sm_90' is not supported for amdgpu; supported: gfx942, gfx950}}
module {
}

//--- nvidia-arch.mlir
// expected-error @+1 {{arch 'gfx942' is not an NVIDIA arch (sm_XX)}}
module {
}

//--- pipeline-arch.mlir
// The pipeline reports it too, after lowering to proton_gpu.
// expected-error @+1 {{arch 'gfx1100' is not supported for amdgpu; supported: gfx942, gfx950}}
module {
  llvm.func amdgpu_kernelcc @k(%arg0: !llvm.ptr<1>) attributes {passthrough = [["amdgpu-flat-work-group-size", "1,256"]]} {
    llvm.inline_asm has_side_effects "// @proton start a", "" : () -> ()
    llvm.inline_asm has_side_effects "// @proton end a", "" : () -> ()
    llvm.return
  }
}
