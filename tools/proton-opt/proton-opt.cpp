// proton-opt: MLIR's optimizer driver with Proton's dialects and passes.
#include "proton/Compiler/Instrument.h"

int main(int argc, char **argv) { return proton::protonOptMain(argc, argv); }
