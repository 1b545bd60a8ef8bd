// Kernel names as profiles show them.
#ifndef PROTON_HOST_DEMANGLE_H
#define PROTON_HOST_DEMANGLE_H

#include <string>

namespace proton::host {

// Itanium C++ names (CUDA C++ kernels such as PyTorch's) demangled; others,
// and names that fail to demangle, as they are.
std::string demangle(const std::string &name);

} // namespace proton::host

#endif // PROTON_HOST_DEMANGLE_H
