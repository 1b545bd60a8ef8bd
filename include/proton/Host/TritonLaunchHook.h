// hook="triton": Triton's launch hook, called before each launch with its
// LazyDict of launch metadata. In C++ because it runs once per launch. Uses
// the Python C API (and raises Python exceptions), so it is compiled into the
// proton._host extension rather than into ProtonHost. Called with the GIL held.
#ifndef PROTON_HOST_TRITONLAUNCHHOOK_H
#define PROTON_HOST_TRITONLAUNCHHOOK_H

#include <Python.h>

namespace proton::host {

// The hook: sets proton.hooks.launch.id, evaluates the kernel's
// launch_metadata function (if it has one and the launch filter keeps it) and
// attaches the metrics it returns to this thread's next launch. Raises what
// launch_metadata raised, or a TypeError or ValueError for a result that is
// not a dict of numbers (without an extras handler).
void tritonLaunchHook(PyObject *metadata);

// proton.hooks.launch.id: the contextvars.ContextVar the hook sets to the id
// of the launch it last saw on this thread (upstream's scripts read it after
// a launch). Raises TypeError for anything else.
void setLaunchIdVar(PyObject *var);

// launchFilter(kernel name) -> bool decides whether a launch's metadata is
// evaluated and kept (LaunchHook.configure); None: every launch's is.
void setLaunchFilter(PyObject *filter);

// launchExtras(data, raw kernel name, kernel name) takes what C++ does not
// keep itself: metrics other than flops8..flops64 and bytes, and values that
// are not plain numbers (device tensors). None: such values are an error.
void setLaunchExtras(PyObject *handler);

} // namespace proton::host

#endif // PROTON_HOST_TRITONLAUNCHHOOK_H
