// context="python": a launch's calling context is its Python call path, the
// frames of the launching thread's stack as nodes below its scopes. Uses the
// Python C API, so it is compiled into the proton._host extension rather than
// into ProtonHost.
#ifndef PROTON_HOST_PYTHONCALLPATH_H
#define PROTON_HOST_PYTHONCALLPATH_H

#include <string>
#include <vector>

namespace proton::host {

// Switches the Python call path of launches on (every tracer's launch
// callback walks the launching thread's frames) or off. Frames, named
// "file:line@function", from files under one of `skippedPrefixes` (the
// profiler's and Triton's own code) are left out. Called with the GIL held.
void setPythonContext(bool enabled, std::vector<std::string> skippedPrefixes);

} // namespace proton::host

#endif // PROTON_HOST_PYTHONCALLPATH_H
