// RUN: proton-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{clock must be 32 or 64 bits, got 16}}
llvm.func @a() attributes {l = #proton_gpu.layout<shared, warp, clock 16, num_warps 4, warps[0], segment_bytes 64, shared_offset 0>}

// -----

// expected-error @+1 {{num_warps must be positive}}
llvm.func @a() attributes {l = #proton_gpu.layout<shared, warp, clock 32, num_warps 0, warps[0], segment_bytes 64, shared_offset 0>}

// -----

// expected-error @+1 {{recording warp 4 is out of range for 4 warps}}
llvm.func @a() attributes {l = #proton_gpu.layout<shared, warp, clock 32, num_warps 4, warps[0, 4], segment_bytes 64, shared_offset 0>}

// -----

// expected-error @+1 {{recording warp -1 is out of range for 4 warps}}
llvm.func @a() attributes {l = #proton_gpu.layout<shared, warp, clock 32, num_warps 4, warps[-1], segment_bytes 64, shared_offset 0>}

// -----

// expected-error @+1 {{recording warps must be strictly increasing}}
llvm.func @a() attributes {l = #proton_gpu.layout<shared, warp, clock 32, num_warps 4, warps[2, 1], segment_bytes 64, shared_offset 0>}

// -----

// expected-error @+1 {{recording warps must be strictly increasing}}
llvm.func @a() attributes {l = #proton_gpu.layout<shared, warp, clock 32, num_warps 4, warps[1, 1], segment_bytes 64, shared_offset 0>}

// -----

// expected-error @+1 {{segment_bytes must be a power of two of at least 16 bytes, got 48}}
llvm.func @a() attributes {l = #proton_gpu.layout<shared, warp, clock 32, num_warps 4, warps[0], segment_bytes 48, shared_offset 0>}

// -----

// expected-error @+1 {{segment_bytes must be a power of two of at least 16 bytes, got 8}}
llvm.func @a() attributes {l = #proton_gpu.layout<shared, warp, clock 32, num_warps 4, warps[0], segment_bytes 8, shared_offset 0>}

// -----

// expected-error @+1 {{shared_offset must be a multiple of 16, got 8}}
llvm.func @a() attributes {l = #proton_gpu.layout<shared, warp, clock 32, num_warps 4, warps[0], segment_bytes 64, shared_offset 8>}

// -----

// expected-error @+2 {{expected ::mlir::proton::gpu::BufferType to be one of: shared, global}}
// expected-error @+1 {{failed to parse ProtonGPU_LayoutAttr parameter 'bufferType'}}
llvm.func @a() attributes {l = #proton_gpu.layout<local, warp, clock 32, num_warps 4, warps[0], segment_bytes 64, shared_offset 0>}

// -----

// expected-error @+2 {{expected ::mlir::proton::gpu::Granularity to be one of: warp, warp_group, cta}}
// expected-error @+1 {{failed to parse ProtonGPU_LayoutAttr parameter 'granularity'}}
llvm.func @a() attributes {l = #proton_gpu.layout<shared, block, clock 32, num_warps 4, warps[0], segment_bytes 64, shared_offset 0>}

// -----

// The layout verifier also runs on the init_segment's attribute.
llvm.func @k(%arg0: !llvm.ptr<1>) {
  // expected-error @+1 {{recording warp 8 is out of range for 8 warps}}
  %s = proton_gpu.init_segment %arg0 <shared, warp, clock 32, num_warps 8, warps[0, 8], segment_bytes 64, shared_offset 0>
  llvm.return
}

// -----

llvm.func @k(%arg0: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg0 <shared, warp, clock 64, num_warps 4, warps[0], segment_bytes 64, shared_offset 0>
  %c = proton_gpu.read_counter : i32
  // expected-error @+1 {{'proton_gpu.circular_store' op stores a 32-bit counter into a segment laid out for 64-bit clocks}}
  proton_gpu.circular_store start %s, %c scope 0 : i32
  llvm.return
}

// -----

llvm.func @k(%arg0: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg0 <global, warp, clock 32, num_warps 4, warps[0], segment_bytes 64, shared_offset 0>
  %c = proton_gpu.read_counter : i64
  // expected-error @+1 {{'proton_gpu.circular_store' op stores a 64-bit counter into a segment laid out for 32-bit clocks}}
  proton_gpu.circular_store end %s, %c scope 0 : i64
  llvm.return
}

// -----

llvm.func @k(%arg0: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg0 <shared, warp, clock 32, num_warps 4, warps[0], segment_bytes 64, shared_offset 0>
  %c = proton_gpu.read_counter : i32
  // expected-error @+1 {{'proton_gpu.circular_store' op attribute 'scope_id' failed to satisfy constraint: 32-bit signless integer attribute whose value is non-negative}}
  proton_gpu.circular_store start %s, %c scope -1 : i32
  llvm.return
}

// -----

llvm.func @k() {
  // expected-error @+1 {{'proton_gpu.read_counter' op result #0 must be 32-bit signless integer or 64-bit signless integer, but got 'i16'}}
  %c = proton_gpu.read_counter : i16
  llvm.return
}

// -----

llvm.func @k(%arg0: !llvm.ptr<3>) {
  // expected-error @+1 {{'proton_gpu.init_segment' op operand #0 must be LLVM pointer in address space 1, but got '!llvm.ptr<3>'}}
  %s = "proton_gpu.init_segment"(%arg0) <{layout = #proton_gpu.layout<shared, warp, clock 32, num_warps 4, warps[0], segment_bytes 64, shared_offset 0>}> : (!llvm.ptr<3>) -> !proton_gpu.segment
  llvm.return
}

// -----

llvm.func @k(%arg0: !llvm.ptr<1>, %x: i32) {
  %s = builtin.unrealized_conversion_cast %x : i32 to !proton_gpu.segment
  // expected-error @+1 {{'proton_gpu.finalize' op segment must come from proton_gpu.init_segment}}
  proton_gpu.finalize %s, %arg0
  llvm.return
}

// -----

// A record keeps the scope id in 15 bits.
llvm.func @k(%arg0: !llvm.ptr<1>) {
  %s = proton_gpu.init_segment %arg0 <shared, warp, clock 64, num_warps 4, warps[0], segment_bytes 64, shared_offset 0>
  %c = proton_gpu.read_counter : i64
  // expected-error @+1 {{'proton_gpu.circular_store' op scope id 32768 does not fit in a record's 15 bits}}
  proton_gpu.circular_store start %s, %c scope 32768 : i64
  llvm.return
}

// -----

// expected-error @+1 {{overhang must be smaller than the ring's 8 records, got 8}}
llvm.func @a() attributes {l = #proton_gpu.layout<shared, warp, clock 64, num_warps 4, warps[0], segment_bytes 64, shared_offset 0, overhang 8>}

// -----

// expected-error @+1 {{a registers buffer has no overhang}}
llvm.func @a() attributes {l = #proton_gpu.layout<registers, warp, clock 64, num_warps 4, warps[0], segment_bytes 64, shared_offset 0, overhang 1>}

// -----

// expected-error @+1 {{a scope id is in [0, 32768), got -1}}
llvm.func @a() attributes {s = #proton_gpu.scope_entry<id = -1, kind = scope, name = "a", parent = -1, loc = "">}

// -----

// expected-error @+1 {{a parent is another entry's id or -1, got 0}}
llvm.func @a() attributes {s = #proton_gpu.scope_entry<id = 0, kind = scope, name = "a", parent = 0, loc = "">}

// -----

// expected-error @+1 {{a value's dtype is i32 or f32, got 'i64'}}
llvm.func @a() attributes {s = #proton_gpu.scope_entry<id = 0, kind = value, name = "a", parent = -1, loc = "", dtype = "i64">}

// -----

// expected-error @+1 {{a value's dtype is i32 or f32, got ''}}
llvm.func @a() attributes {s = #proton_gpu.scope_entry<id = 0, kind = value, name = "a", parent = -1, loc = "">}

// -----

// expected-error @+1 {{only a value has a dtype, got 'i32'}}
llvm.func @a() attributes {s = #proton_gpu.scope_entry<id = 0, kind = mark, name = "a", parent = -1, loc = "", dtype = "i32">}

// -----

// expected-error @+2 {{expected ::mlir::proton::IdKind to be one of: scope, event, mark, value}}
// expected-error @+1 {{failed to parse ProtonGPU_ScopeEntryAttr parameter 'kind'}}
llvm.func @a() attributes {s = #proton_gpu.scope_entry<id = 0, kind = record, name = "a", parent = -1, loc = "">}
