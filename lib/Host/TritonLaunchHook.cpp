#include "proton/Host/TritonLaunchHook.h"

#include "proton/Host/CallPath.h"

#include <nanobind/nanobind.h>

#include <atomic>
#include <string>

namespace nb = nanobind;

namespace proton::host {
namespace {

// Strong references, set once per process (or per configuration).
PyObject *launchIdVar = nullptr;
std::atomic<uint64_t> nextLaunchId{0};
PyObject *launchFilter = nullptr;
PyObject *launchExtras = nullptr;

// The metrics the hook keeps itself, in setLaunchMetrics' order.
constexpr int kNumericMetrics = 5;
const char *const kNumericMetricKeys[kNumericMetrics] = {
    "flops8", "flops16", "flops32", "flops64", "bytes"};

PyObject *nameKey() {
  static PyObject *key = PyUnicode_InternFromString("name");
  return key;
}

void setCallable(PyObject *&slot, PyObject *callable, const char *what) {
  if (callable != Py_None && !PyCallable_Check(callable))
    throw nb::type_error(
        (std::string(what) + " must be callable or None").c_str());
  Py_XDECREF(slot);
  slot = callable == Py_None ? nullptr : Py_NewRef(callable);
}

// Sets proton.hooks.launch.id to a new launch id, where it is configured.
void publishLaunchId() {
  if (!launchIdVar)
    return;
  nb::object id = nb::steal(PyLong_FromUnsignedLongLong(
      nextLaunchId.fetch_add(1, std::memory_order_relaxed)));
  nb::object token = nb::steal(PyContextVar_Set(launchIdVar, id.ptr()));
  if (!token.is_valid())
    throw nb::python_error();
}

bool passesFilter(PyObject *name) {
  if (!launchFilter || !name)
    return true;
  nb::object keep = nb::steal(PyObject_CallOneArg(launchFilter, name));
  if (!keep.is_valid())
    throw nb::python_error();
  int truth = PyObject_IsTrue(keep.ptr());
  if (truth < 0)
    throw nb::python_error();
  return truth;
}

// The kernel's own name in the LazyDict's data, before launch_metadata's
// result is merged in (invalid if there is none).
nb::object ownKernelName(nb::handle metadata) {
  static PyObject *dataAttr = PyUnicode_InternFromString("data");
  nb::object base = nb::steal(PyObject_GetAttr(metadata.ptr(), dataAttr));
  if (!base.is_valid())
    throw nb::python_error();
  return PyDict_Check(base.ptr())
             ? nb::borrow(PyDict_GetItem(base.ptr(), nameKey()))
             : nb::object();
}

// Runs launch_metadata in its own scope (see LaunchMetadataScope). The usual
// LazyDict holds one launch_metadata call in `extras`: it is made here
// directly, which spares LazyDict.get's merged copy of the dict; other hooks
// in the chain can still call get().
nb::object evaluateLaunchMetadata(nb::handle metadata, nb::handle extras,
                                  PyObject *kernelName) {
  LaunchMetadataScope metadataScope(
      kernelName ? callPaths().intern(PyUnicode_AsUTF8(kernelName)) : kNoName);
  PyObject *only =
      PyList_Check(extras.ptr()) && PyList_GET_SIZE(extras.ptr()) == 1
          ? PyList_GET_ITEM(extras.ptr(), 0)
          : nullptr; // borrowed
  nb::object data;
  if (only && PyTuple_Check(only) && PyTuple_GET_SIZE(only) == 2 &&
      PyTuple_Check(PyTuple_GET_ITEM(only, 1))) {
    data = nb::steal(PyObject_Call(PyTuple_GET_ITEM(only, 0),
                                   PyTuple_GET_ITEM(only, 1), nullptr));
    if (!data.is_valid())
      throw nb::python_error(); // launch_metadata raised: the launch fails with
                                // its error
  } else {
    data = metadata.attr("get")();
  }
  metadataScope.close();
  if (!PyDict_Check(data.ptr()))
    throw nb::type_error(
        "a Triton launch_metadata function must return a dict");
  return data;
}

// Whether `value` is a tensor (torch's or any with a data pointer).
bool isTensor(PyObject *value) {
  if (PyFloat_CheckExact(value) || PyLong_CheckExact(value))
    return false; // the usual case, without an attribute lookup
  static PyObject *dataPtrAttr = PyUnicode_InternFromString("data_ptr");
  return PyObject_HasAttr(value, dataPtrAttr) == 1;
}

// flops8..flops64 and bytes of a launch_metadata result.
struct NumericMetrics {
  double values[kNumericMetrics] = {0, 0, 0, 0, 0};
  bool any = false;      // one is not zero
  bool handOver = false; // one is not a number: launchExtras reads it
};

// Reads the numeric metrics of `data`; without an extras handler, a value
// that is not a number is an error naming the kernel (`shown`).
NumericMetrics readNumericMetrics(PyObject *data, PyObject *shown) {
  static PyObject *keyObjects[kNumericMetrics] = {
      PyUnicode_InternFromString(kNumericMetricKeys[0]),
      PyUnicode_InternFromString(kNumericMetricKeys[1]),
      PyUnicode_InternFromString(kNumericMetricKeys[2]),
      PyUnicode_InternFromString(kNumericMetricKeys[3]),
      PyUnicode_InternFromString(kNumericMetricKeys[4])}; // never freed
  NumericMetrics metrics;
  for (int i = 0; i < kNumericMetrics; ++i) {
    PyObject *value = PyDict_GetItem(data, keyObjects[i]); // borrowed
    if (!value)
      continue;
    double &number = metrics.values[i];
    // A tensor is never converted here: float() of a one-value GPU tensor
    // reads it back, a synchronization that would break a CUDA graph
    // capture (and stall an eager launch). The Python side adds it on the
    // device.
    bool tensor = isTensor(value);
    number = tensor ? -1.0 : PyFloat_AsDouble(value);
    if (tensor || (number == -1.0 && PyErr_Occurred())) {
      PyErr_Clear();
      number = 0;
      if (launchExtras) {
        metrics.handOver = true; // a tensor, a list: the Python side reads it
        continue;
      }
      std::string kernel =
          shown && PyUnicode_Check(shown) ? PyUnicode_AsUTF8(shown) : "?";
      throw nb::value_error(("launch_metadata of kernel " + kernel +
                             " gave a non-numeric '" + kNumericMetricKeys[i] +
                             "'")
                                .c_str());
    }
    metrics.any |= number != 0;
  }
  return metrics;
}

// Whether `data` has a key other than those kept here or never metrics:
// any other is a metric of its own (e.g. "flops", "extra_metric").
bool hasOtherMetrics(PyObject *data) {
  static PyObject *knownKeys = [] {
    PyObject *set = PySet_New(nullptr);
    for (const char *key : {"flops8", "flops16", "flops32", "flops64", "bytes",
                            "name", "function", "stream"})
      PySet_Add(set, PyUnicode_InternFromString(key));
    return set; // made once, never freed
  }();
  PyObject *key, *value;
  Py_ssize_t position = 0;
  while (PyDict_Next(data, &position, &key, &value)) {
    int known = PySet_Contains(knownKeys, key); // one hash lookup a key
    if (known < 0)
      throw nb::python_error(); // an unhashable key
    if (!known)
      return true;
  }
  return false;
}

// A "name" other than the kernel's own renames this launch's node, as
// Triton's profiler does (e.g. "matmul_4096x4096x4096"); kNoName otherwise.
uint32_t renamedLaunch(PyObject *name, const nb::object &kernelName) {
  if (name && PyUnicode_Check(name) && kernelName.is_valid() &&
      PyObject_RichCompareBool(name, kernelName.ptr(), Py_NE) == 1)
    return callPaths().intern(PyUnicode_AsUTF8(name));
  return kNoName;
}

// Hands `data` to the extras handler with the raw and the shown kernel name.
void handOverExtras(PyObject *data, PyObject *name,
                    const nb::object &kernelName, bool namedKernel) {
  nb::object shownName = nb::borrow(name && PyUnicode_Check(name) ? name
                                    : kernelName.is_valid() ? kernelName.ptr()
                                                            : Py_None);
  nb::object done = nb::steal(PyObject_CallFunctionObjArgs(
      launchExtras, data, namedKernel ? kernelName.ptr() : Py_None,
      shownName.ptr(), nullptr));
  if (!done.is_valid())
    throw nb::python_error();
}

} // namespace

void tritonLaunchHook(PyObject *metadataObject) {
  nb::handle metadata(metadataObject);
  publishLaunchId();
  if (metadata.is_none())
    return;
  static PyObject *extrasAttr = PyUnicode_InternFromString("extras");
  nb::object extras = nb::steal(PyObject_GetAttr(metadata.ptr(), extrasAttr));
  if (!extras.is_valid())
    throw nb::python_error();
  if (PyList_Check(extras.ptr()) && PyList_GET_SIZE(extras.ptr()) == 0)
    return; // the kernel has no launch_metadata function
  nb::object kernelName = ownKernelName(metadata);
  bool namedKernel = kernelName.is_valid() && PyUnicode_Check(kernelName.ptr());
  if (namedKernel && !passesFilter(kernelName.ptr()))
    return; // filtered out by its own name: launch_metadata is not evaluated
  nb::object data = evaluateLaunchMetadata(
      metadata, extras, namedKernel ? kernelName.ptr() : nullptr);
  PyObject *name = PyDict_GetItem(data.ptr(), nameKey()); // borrowed
  if (name && PyUnicode_Check(name) && !passesFilter(name))
    return; // filtered out by the name launch_metadata gave it
  NumericMetrics metrics =
      readNumericMetrics(data.ptr(), name ? name : kernelName.ptr());
  if (launchExtras && !metrics.handOver)
    metrics.handOver = hasOtherMetrics(data.ptr());
  uint32_t renamed = renamedLaunch(name, kernelName);
  metrics.any |= renamed != kNoName;
  if (metrics.handOver)
    handOverExtras(data.ptr(), name, kernelName, namedKernel);
  if (!metrics.any)
    return;
  const double flops[4] = {metrics.values[0], metrics.values[1],
                           metrics.values[2], metrics.values[3]};
  setLaunchMetrics(flops, metrics.values[4], renamed);
}

void setLaunchIdVar(PyObject *var) {
  if (!PyContextVar_CheckExact(var))
    throw nb::type_error("set_launch_id_var takes a contextvars.ContextVar");
  Py_XDECREF(launchIdVar);
  launchIdVar = Py_NewRef(var);
}

void setLaunchFilter(PyObject *filter) {
  setCallable(launchFilter, filter, "a launch filter");
}

void setLaunchExtras(PyObject *handler) {
  setCallable(launchExtras, handler, "a launch extras handler");
}

} // namespace proton::host
