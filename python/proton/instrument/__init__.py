"""The intra-kernel path: markers lifted by the stage hook, the MLIR compiler
binding and the LLVM IR bridge, the session that allocates and reads the
profile buffers, and the decoder."""
