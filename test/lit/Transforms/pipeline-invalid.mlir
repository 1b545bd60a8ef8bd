// RUN: proton-opt %s -split-input-file --proton-pipeline -verify-diagnostics

// Errors of every stage surface through the pipeline, at the marker.
llvm.func ptx_kernelcc @malformed(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  // expected-error @+1 {{malformed proton marker '// @proton start': expected '// @proton <kind> <name>' with <kind> one of start, end, event_start, event_end, mark}}
  llvm.inline_asm has_side_effects "// @proton start", "" : () -> ()
  llvm.return
}

// -----

llvm.func ptx_kernelcc @unclosed(%arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  // expected-error @+1 {{scope 'x' is never closed: the function returns with it open}}
  llvm.inline_asm has_side_effects "// @proton start x", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton start y", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton end y", "" : () -> ()
  llvm.return
}

// -----

// A marker lifted on one branch only.
llvm.func ptx_kernelcc @branch(%c: i1, %arg0: !llvm.ptr<1>) attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  llvm.cond_br %c, ^bb1, ^bb2
^bb1:
  // expected-error @+1 {{scope 'x' is open on one path into a block and closed on another}}
  llvm.inline_asm has_side_effects "// @proton start x", "" : () -> ()
  llvm.br ^bb2
^bb2:
  // expected-error @+2 {{end of scope 'x' has no matching start on this path}}
  // expected-note @+1 {{paths meet here}}
  llvm.inline_asm has_side_effects "// @proton end x", "" : () -> ()
  llvm.return
}

// -----

// expected-error @+1 {{kernel @no_scratch has no profile_scratch parameter}}
llvm.func ptx_kernelcc @no_scratch() attributes {passthrough = [["nvvm.reqntid", "128"]]} {
  llvm.inline_asm has_side_effects "// @proton start x", "" : () -> ()
  llvm.inline_asm has_side_effects "// @proton end x", "" : () -> ()
  llvm.return
}
