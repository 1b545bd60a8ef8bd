#!/usr/bin/env python3
"""Makes a sysroot in which this machine's GCC builds for glibc 2.28.

PyTorch's wheels are manylinux_2_28 (glibc 2.28+: RHEL 8, Amazon Linux 2023,
Ubuntu 20.04); a wheel built against this machine's glibc needs this
machine's glibc. The sysroot holds what a glibc 2.28 system would give a
compiler, taken from the ziglang package (pinned in
tools/requirements-wheels.txt), run with the interpreter that runs this script:

- glibc's headers as zig ships them: zig's copy guards what later releases
  added by __GLIBC_MINOR__, which the toolchain file defines as 28;
- link stubs of libc.so.6, libm.so.6, libpthread.so.0, ... that zig generates
  for x86_64-linux-gnu.2.28, holding only the symbol versions 2.28 defines, so
  the linker can only bind versions that 2.28 has; zig's libc_nonshared.a and
  crt1.o for 2.28 (the start code of glibc before 2.34, which runs the
  program's constructors itself);
- crti.o and crtn.o, the same on every glibc, from this machine.

GCC's own C++ headers and libraries stay this machine's. libstdc++ is linked
statically (-static-libstdc++, its symbols hidden with --exclude-libs): LLVM's
archives need a newer libstdc++ than GLIBCXX_3.4.24, manylinux_2_28's limit.
Two things in GCC's configuration name glibc functions newer than 2.28:
bits/c++config.h turns on pthread_cond_clockwait and the clocklock functions
(2.30), overridden by a c++config.h of the sysroot's include-c++ folder; and
libstdc++.a refers to __libc_single_threaded (2.32) and arc4random (2.36),
defined by tools/glibc_compat.c, compiled into the sysroot and linked into
every binary.

The toolchain file <out>/toolchain.cmake (CMAKE_TOOLCHAIN_FILE) sets the
flags. A C++ program built with them is run and its symbol versions checked
before the script reports success. About a minute on 2 cores (zig compiles
its stubs and libc_nonshared.a).

    python3 tools/glibc_sysroot.py --out /tmp/sysroot-glibc-2.28
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GLIBC = "2.28"
TARGET = f"x86_64-linux-gnu.{GLIBC}"
#: zig's header folders for the target, highest priority first (as `zig cc -v` lists them).
HEADER_DIRS = ("x86-linux-gnu", "generic-glibc", "x86-linux-any", "any-linux-any")
#: The link stubs zig writes, by the name the linker looks for (lib<name>.so).
STUBS = {
    "c": "libc.so.6",
    "m": "libm.so.6",
    "pthread": "libpthread.so.0",
    "dl": "libdl.so.2",
    "rt": "librt.so.1",
    "util": "libutil.so.1",
    "resolv": "libresolv.so.2",
}
#: The dynamic loader's stub; its soname is ld-linux-x86-64.so.2.
LOADER_STUB, LOADER = "libld.so.2", "ld-linux-x86-64.so.2"
#: GCC configuration macros that name glibc functions 2.28 lacks (2.30's clock variants).
CXX_CONFIG_OFF = (
    "_GLIBCXX_USE_PTHREAD_COND_CLOCKWAIT",
    "_GLIBCXX_USE_PTHREAD_MUTEX_CLOCKLOCK",
    "_GLIBCXX_USE_PTHREAD_RWLOCK_CLOCKLOCK",
)
LIBDIR = "usr/lib/x86_64-linux-gnu"


class Failure(Exception):
    pass


def run(argv, **kwargs) -> str:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise Failure(f"{' '.join(map(str, argv))} failed ({done.returncode}):\n{done.stdout}{done.stderr}"[-4000:])
    return done.stdout


def zig_libc(work: Path) -> dict[str, Path]:
    """Links a C program for the target with zig, in caches of its own, and
    returns the stubs, libc_nonshared.a and crt1.o it generated for it."""
    env = {**os.environ, "ZIG_GLOBAL_CACHE_DIR": str(work / "global"), "ZIG_LOCAL_CACHE_DIR": str(work / "local")}
    (work / "main.c").write_text("int main(void) { return 0; }\n")
    zig = [sys.executable, "-m", "ziglang"]
    run([*zig, "cc", "-target", TARGET, "-O2", "-fno-sanitize=all", work / "main.c", "-o", work / "main"], env=env)
    found = {}
    for name in [*STUBS.values(), LOADER_STUB, "libc_nonshared.a", "crt1.o"]:
        hits = sorted((work / "global").glob(f"o/*/{name}"))
        if len(hits) != 1:
            raise Failure(f"zig's cache holds {len(hits)} copies of {name}, expected 1 (zig {version(zig)})")
        found[name] = hits[0]
    return found


def version(zig: list[str]) -> str:
    return run([*zig, "version"]).strip()


def zig_headers() -> Path:
    import ziglang  # the tools venv's package

    return Path(ziglang.__file__).parent / "lib" / "libc" / "include"


def copy_headers(out: Path) -> None:
    include = out / "usr" / "include"
    # Lowest priority first: a header of a folder earlier in HEADER_DIRS replaces a later one's.
    for name in reversed(HEADER_DIRS):
        shutil.copytree(zig_headers() / name, include, dirs_exist_ok=True)
    # zig keeps headers that later releases added, with an #error for older
    # targets; 2.28 had none of them, and __has_include (libstdc++ asks for
    # <sys/single_threaded.h>) must say so.
    added = re.compile(r'#error "\S+ did not exist before glibc 2\.(\d+)"')
    for header in include.rglob("*.h"):
        match = added.search(header.read_text(errors="replace"))
        if match and int(match.group(1)) > int(GLIBC.split(".")[1]):
            header.unlink()
    # _GNU_SOURCE meant POSIX.1-2008 and XPG7 in 2.28 (Python's pyconfig.h
    # defines the same); zig's features.h says POSIX.1-2024 and XPG8.
    features = include / "features.h"
    text = features.read_text()
    for macro, new, old in (("_POSIX_C_SOURCE", "200809L", "202405L"), ("_XOPEN_SOURCE", "700", "800")):
        text, count = re.subn(rf"(#\s*define {macro}\s+){old}\n", rf"\g<1>{new}\n", text)
        if not count:
            raise Failure(f"zig's features.h no longer defines {macro} as {old}")
    features.write_text(text)


def gcc_file(name: str) -> Path:
    path = Path(run(["gcc", f"-print-file-name={name}"]).strip())
    if not path.is_absolute() or not path.exists():
        raise Failure(f"gcc does not know where {name} is")
    return path


def cxx_config_header() -> Path:
    """GCC's bits/c++config.h for this target, as g++ finds it."""
    deps = run(["g++", "-M", "-x", "c++", "-"], input="#include <bits/c++config.h>\n")
    for path in deps.replace("\\\n", " ").split():
        if path.endswith("/bits/c++config.h"):
            return Path(path)
    raise Failure("g++ -M named no bits/c++config.h")


def write_cxx_config(out: Path) -> Path:
    folder = out / "usr" / "include-c++"
    (folder / "bits").mkdir(parents=True, exist_ok=True)
    undefs = "".join(f"#undef {macro}\n" for macro in CXX_CONFIG_OFF)
    (folder / "bits" / "c++config.h").write_text(
        "/* GCC's configuration, less the glibc 2.30 functions glibc 2.28 lacks:\n"
        "   libstdc++'s headers then wait with pthread_cond_timedwait and friends. */\n"
        f'#include "{cxx_config_header()}"\n{undefs}'
    )
    return folder


def write_libraries(out: Path, found: dict[str, Path]) -> None:
    lib = out / LIBDIR
    lib.mkdir(parents=True, exist_ok=True)
    for name, stub in STUBS.items():
        shutil.copy2(found[stub], lib / stub)
        if name != "c":
            (lib / f"lib{name}.so").symlink_to(stub)
    shutil.copy2(found[LOADER_STUB], lib / LOADER)
    shutil.copy2(found["libc_nonshared.a"], lib / "libc_nonshared.a")
    # As glibc installs it: the shared library, the static part that
    # 2.28 linked into each program (atexit, stat, __libc_csu_init), the loader.
    (lib / "libc.so").write_text(
        f"GROUP ( /{LIBDIR}/libc.so.6 /{LIBDIR}/libc_nonshared.a AS_NEEDED ( /{LIBDIR}/{LOADER} ) )\n"
    )
    # zig's crt1.o addresses everything through the GOT: it serves position-independent executables too.
    for name in ("crt1.o", "Scrt1.o"):
        shutil.copy2(found["crt1.o"], lib / name)
    for name in ("crti.o", "crtn.o"):
        shutil.copy2(gcc_file(name), lib / name)


def flags(out: Path, cxx_config: Path) -> dict[str, str]:
    compile_flags = f"--sysroot={out} -D__GLIBC_MINOR__={GLIBC.split('.')[1]}"
    # -B: Debian's GCC searches this machine's multiarch library folder
    # before the sysroot's; the sysroot's start files and stubs must come first.
    # --allow-shlib-undefined: this machine's libgcc_s.so.1 needs
    # _dl_find_object (2.35); the target's own libgcc_s is the one loaded there.
    link = [
        f"--sysroot={out}", f"-B{out / LIBDIR}/", "-static-libstdc++", "-Wl,--exclude-libs,ALL",
        "-Wl,--allow-shlib-undefined", str(out / "lib" / "glibc_compat.o"),
    ]  # fmt: skip
    return {"c": compile_flags, "cxx": f"{compile_flags} -isystem {cxx_config}", "link": " ".join(link)}


def compile_compat(out: Path, f: dict[str, str]) -> None:
    (out / "lib").mkdir(exist_ok=True)
    run(
        [
            "gcc", *f["c"].split(), "-O2", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror",
            "-c", ROOT / "tools" / "glibc_compat.c", "-o", out / "lib" / "glibc_compat.o",
        ]
    )  # fmt: skip


def glibc_versions(binary: Path) -> list[str]:
    """The GLIBC_x.y versions a binary needs, oldest first."""
    text = run(["objdump", "-T", binary])
    found = set(re.findall(r"\bGLIBC_(\d+\.\d+(?:\.\d+)?)\b", text))
    return sorted(found, key=lambda v: [int(n) for n in v.split(".")])


def self_test(out: Path, f: dict[str, str], work: Path) -> str:
    """Builds and runs a C++ program that uses what Proton uses (threads,
    timed waits, exceptions, iostreams, stat, random_device): it must run here
    and need nothing newer than GLIBC_2.28."""
    source = work / "probe.cpp"
    source.write_text(
        "#include <chrono>\n#include <condition_variable>\n#include <iostream>\n#include <mutex>\n"
        "#include <random>\n#include <stdexcept>\n#include <string>\n#include <sys/stat.h>\n#include <thread>\n"
        "int main() {\n"
        "  std::mutex m; std::condition_variable cv; bool ready = false;\n"
        "  std::thread t([&] { std::lock_guard<std::mutex> g(m); ready = true; cv.notify_one(); });\n"
        "  { std::unique_lock<std::mutex> l(m); cv.wait_for(l, std::chrono::seconds(10), [&] { return ready; }); }\n"
        "  t.join();\n"
        "  struct stat s; if (stat(\"/\", &s) != 0) return 2;\n"
        "  std::random_device rd; unsigned r = rd();\n"
        "  try { throw std::runtime_error(std::to_string(r % 7)); }\n"
        "  catch (const std::exception &e) { std::cout << \"ok \" << ready << ' ' << e.what()[0] << '\\n'; }\n"
        "}\n"
    )
    binary = work / "probe"
    run(["g++", *f["cxx"].split(), "-O2", "-std=c++17", source, *f["link"].split(), "-pthread", "-o", binary])
    output = run([binary]).strip()
    if not output.startswith("ok 1 "):
        raise Failure(f"the probe printed {output!r}")
    versions = glibc_versions(binary)
    newest = versions[-1] if versions else "none"
    if [int(n) for n in newest.split(".")] > [int(n) for n in GLIBC.split(".")]:
        raise Failure(f"the probe needs GLIBC_{newest}")
    return newest


def toolchain_file(out: Path, f: dict[str, str]) -> Path:
    path = out / "toolchain.cmake"
    lines = [
        f"# Written by tools/glibc_sysroot.py: this machine's GCC, building for glibc {GLIBC}.",
        f'set(CMAKE_C_COMPILER "{shutil.which("gcc")}")',
        f'set(CMAKE_CXX_COMPILER "{shutil.which("g++")}")',
        f'set(CMAKE_C_FLAGS_INIT "{f["c"]}")',
        f'set(CMAKE_CXX_FLAGS_INIT "{f["cxx"]}")',
    ]
    for kind in ("EXE", "SHARED", "MODULE"):
        lines.append(f'set(CMAKE_{kind}_LINKER_FLAGS_INIT "{f["link"]}")')
    path.write_text("\n".join(lines) + "\n")
    return path


def make(out: Path) -> Path:
    for tool in ("gcc", "g++", "objdump"):
        if not shutil.which(tool):
            raise Failure(f"no {tool} on PATH (GCC and binutils build in the sysroot)")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="glibc-sysroot-") as tmp:
        work = Path(tmp)
        found = zig_libc(work)
        copy_headers(out)
        write_libraries(out, found)
        f = flags(out, write_cxx_config(out))
        compile_compat(out, f)
        newest = self_test(out, f, work)
    path = toolchain_file(out, f)
    print(f"glibc {GLIBC} sysroot in {out} (a probe program needs GLIBC_{newest} at most); toolchain file {path}")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the sysroot's folder (replaced)")
    args = parser.parse_args(argv)
    try:
        make(args.out.resolve())
    except Failure as problem:
        print(f"glibc_sysroot.py: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
