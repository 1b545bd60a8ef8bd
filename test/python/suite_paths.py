"""Where the suite's files are, for its test modules and the child processes
they start. Test modules import the helpers (helpers/), the fakes (fakes/)
and each other's helpers and fixtures (test_decode.make, ...) by module
name, from any folder: IMPORT_PATH holds every folder of the suite that has
modules; conftest.py puts it on sys.path, a child process with
`sys.path[:0] = IMPORT_PATH`."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent  # test/python
REPO = ROOT.parents[1]
FIXTURES = ROOT / "fixtures"
HELPERS = ROOT / "helpers"
FAKES = ROOT / "fakes"
EXAMPLES = REPO / "examples"

#: The suite's root, the helpers, the fakes, then the test folders.
IMPORT_PATH = [str(ROOT), str(HELPERS), str(FAKES)] + sorted(
    str(folder) for folder in ROOT.iterdir() if folder.is_dir() and any(folder.glob("test_*.py"))
)
