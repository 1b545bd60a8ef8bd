// RUN: proton-opt %s -split-input-file --proton-lift-markers -verify-diagnostics

llvm.func @unknown_kind(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{malformed proton marker '// @proton begin x': expected '// @proton <kind> <name>' with <kind> one of start, end, event_start, event_end, mark}}
  %0 = llvm.inline_asm has_side_effects "// @proton begin x", "=r" : () -> i32
  llvm.return
}

// -----

llvm.func @no_name(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{malformed proton marker '// @proton end': expected '// @proton <kind> <name>' with <kind> one of start, end, event_start, event_end, mark}}
  llvm.inline_asm has_side_effects "// @proton end", "" : () -> ()
  llvm.return
}

// -----

llvm.func @blank_name(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{malformed proton marker '// @proton start   ': expected '// @proton <kind> <name>' with <kind> one of start, end, event_start, event_end, mark}}
  llvm.inline_asm has_side_effects "// @proton start   ", "" : () -> ()
  llvm.return
}

// -----

// A marker without side effects may have been moved or removed by LLVM.
llvm.func @pure_marker(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{proton marker '// @proton start y' is not side-effecting: the compiler may have moved or dropped it}}
  %0 = llvm.inline_asm "// @proton start y", "=r" : () -> i32
  llvm.return
}

// -----

// The lifted record's name is verified.
llvm.func @bad_character(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{'proton.record' op scope name 'a{b}' contains the character '{'; allowed are letters, digits, spaces and _-.:/[]()<>,+=#@}}
  llvm.inline_asm has_side_effects "// @proton start a{b}", "" : () -> ()
  llvm.return
}

// -----

llvm.func @float_result(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{proton marker result of type 'f32' is used; only integer results can be replaced}}
  %0 = llvm.inline_asm has_side_effects "// @proton start f", "=f" : () -> f32
  %1 = llvm.fadd %0, %0 : f32
  llvm.return
}

// -----

// Every bad marker is reported, not just the first.
llvm.func @several(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{malformed proton marker '// @proton stop a'}}
  llvm.inline_asm has_side_effects "// @proton stop a", "" : () -> ()
  // expected-error @+1 {{proton marker '// @proton end a' is not side-effecting}}
  llvm.inline_asm "// @proton end a", "" : () -> ()
  llvm.return
}

// -----

llvm.func @bad_location(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{malformed proton marker '// @proton start x ;loc=file.ttgir:nine:5': expected '// @proton <kind> <name>' with <kind> one of start, end, event_start, event_end, mark, value}}
  llvm.inline_asm has_side_effects "// @proton start x ;loc=file.ttgir:nine:5", "" : () -> ()
  llvm.return
}
