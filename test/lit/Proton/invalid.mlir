// RUN: proton-opt %s -split-input-file -verify-diagnostics

llvm.func @empty_name() {
  // expected-error @+1 {{'proton.record' op scope name must not be empty}}
  proton.record start ""
  llvm.return
}

// -----

llvm.func @semicolon() {
  // expected-error @+1 {{'proton.record' op scope name 'a;b' contains the character ';'; allowed are letters, digits, spaces and _-.:/[]()<>,+=#@}}
  proton.record start "a;b"
  llvm.return
}

// -----

// A quote would need escaping in the inline-asm marker and in trace files.
llvm.func @quote() {
  // expected-error @+1 {{'proton.record' op scope name 'say"hi"' contains the character '"'}}
  proton.record end "say\22hi\22"
  llvm.return
}

// -----

llvm.func @brace() {
  // expected-error @+1 {{scope name 'a{b}' contains the character '{'}}
  "proton.record"() <{kind = 0 : i32, name = "a{b}"}> : () -> ()
  llvm.return
}

// -----

llvm.func @bad_kind() {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [start, end, event_start, event_end, mark, value}}
  proton.record middle "x"
  llvm.return
}

// -----

llvm.func @generic_bad_kind() {
  // expected-error @+1 {{invalid properties {kind = 999 : i32, name = "x"} for op proton.record: Invalid attribute `kind` in property conversion: 999 : i32}}
  "proton.record"() <{kind = 999 : i32, name = "x"}> : () -> ()
  llvm.return
}
