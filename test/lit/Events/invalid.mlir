// RUN: proton-opt %s -split-input-file --proton-check-scopes -verify-diagnostics

llvm.func @unknown_kind() {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [start, end, event_start, event_end, mark, value}}
  proton.record event_begin "x"
  llvm.return
}

// -----

llvm.func @bad_event_name() {
  // expected-error @+1 {{'proton.record' op scope name 'a;b' contains the character ';'}}
  proton.record event_start "a;b"
  llvm.return
}

// -----

// A scope still may not cross an event's records out of order.
llvm.func @scope_still_checked() {
  proton.record event_start "e"
  // expected-error @+1 {{end of scope 's' has no matching start on this path}}
  proton.record end "s"
  proton.record event_end "e"
  llvm.return
}
