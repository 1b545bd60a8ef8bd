#include "proton/Host/Demangle.h"

#include <cstdlib>
#include <cxxabi.h>

namespace proton::host {

std::string demangle(const std::string &name) {
  if (name.rfind("_Z", 0) != 0)
    return name;
  int status = 0;
  char *text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && text ? text : name;
  std::free(text);
  return out;
}

} // namespace proton::host
