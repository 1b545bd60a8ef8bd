"""The README as a front door, the documentation site, and no work-log wording.

- The README stays within its budget: at most 250 lines, a command within its
  first 40 lines and a first profile (`proton.start` ... `proton.finalize`)
  too, the test command CI runs, and links into docs/ that resolve.
- The tree speaks of the product with dates and versions, never of how the
  work was organized: no numbered work sessions ("session N", "since session
  N", a result file named after one) and no issue numbers used as history
  ("issue N", "issue N item M"), in any file's text or name. A session's id
  in prose is written "session id N" (or `session 0`, which no work log
  used); a project's issue elsewhere is written owner/repo#N.
- `mkdocs build --strict` passes (broken links and anchors fail it), where
  MkDocs is installed (requirements-dev.txt pins it; CI also builds the site
  on its own).
"""

import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

import suite_paths

ROOT = suite_paths.REPO
README = ROOT / "README.md"

README_MAX_LINES = 250
FIRST_SCREEN = 40

#: Work-log wording, matched case-insensitively in every file's text and name.
WORK_LOG = {
    # "session N", "Session N's", "since session N", "sessions N to M"; not
    # "session 0" (an id in API examples) nor "session 2.00x" (a ratio).
    "numbered session": re.compile(r"\bsessions? (?!0\b)\d+(?![.,]\d)", re.IGNORECASE),
    # "sessionN", "h200_sessionN", "session-N" (file and folder names).
    "session number in a name": re.compile(r"session[_-]?\d", re.IGNORECASE),
    # "issue N", "Issue N item M", "issues N and M", "issue-N".
    "issue number": re.compile(r"\bissues?(?: #?|-|#)\d+", re.IGNORECASE),
}


def work_log_hits(text: str) -> list[str]:
    return [f"{name}: {m.group(0)!r}" for name, pattern in WORK_LOG.items() for m in pattern.finditer(text)]


# Built from pieces so that this file holds none of the forms it looks for.
S, ISSUE = "sess" + "ion", "iss" + "ue"
FLAGGED = [
    f"On one H100, {S} 12:",
    f"since {S} 13 (records in a loop)",
    f"{S.title()} 14's code",
    f"(H100, {S} 13)",
    f"test runs ({S}s 2 to 8)",
    f"bench/results/h200_{S}7/host_overhead",
    f"upstream_tests_36_h100_ours_{S}14.json",
    f"the {S}-13 diff",
    f"an old {S} 9.",
    f"target of {ISSUE} 28",
    f"# {ISSUE.title()} 17 item 8: at start",
    f"{ISSUE}s 3 and 4",
    f"every {ISSUE}-3 target",
]
NOT_FLAGGED = [
    "a host session adds a callback per launch",
    "a session never changes what it measures",
    "python/proton/session_exit.py",
    "SessionId, session_interface.py, test_host_session.py",
    "proton.finalize(session 0)",
    "the session id 1 still wants it",
    "a 300-repetition do_bench session 2.00x wall time",
    "sessions keep every launch; one session per process",
    "fla-org/flash-linear-attention#640",
    "the issue run and the wait",
    "phase 3 of the run, step 3, round 0",
]


@pytest.mark.parametrize("text", FLAGGED)
def test_work_log_wording_is_caught(text):
    assert work_log_hits(text), text


@pytest.mark.parametrize("text", NOT_FLAGGED)
def test_product_wording_is_not_caught(text):
    assert not work_log_hits(text), work_log_hits(text)


def repository_files() -> list[Path]:
    """Tracked files and new ones git does not ignore."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    names = sorted({n for n in out.decode("utf-8", "surrogateescape").split("\0") if n})
    return [ROOT / n for n in names]


def test_no_work_log_wording_in_the_tree():
    hits = []
    for path in repository_files():
        relative = path.relative_to(ROOT).as_posix()
        hits += [f"{relative} (its name) {hit}" for hit in work_log_hits(relative)]
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            hits += [f"{relative}:{number}: {hit}" for hit in work_log_hits(line)]
    assert not hits, "work-log wording (use dates and versions):\n" + "\n".join(hits)


def test_readme_is_a_front_door():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; the budget is {README_MAX_LINES}"
    first_screen = lines[:FIRST_SCREEN]
    fences = [i for i, line in enumerate(first_screen) if line.startswith("```bash")]
    assert fences and fences[0] + 1 < FIRST_SCREEN, "no command in the README's first 40 lines"
    assert first_screen[fences[0] + 1].strip(), "the first command block is empty"
    start = [i for i, line in enumerate(first_screen) if "proton.start(" in line]
    finalize = [i for i, line in enumerate(first_screen) if "proton.finalize(" in line]
    assert start and finalize and start[0] < finalize[0], "no first profile in the README's first 40 lines"
    assert "```" in first_screen[finalize[0] + 1 :], "the first profile's code block ends past line 40"
    assert any(line.strip().endswith("./run_tests.sh") for line in lines), "the README's test command is gone"


def slugs(heading: str) -> set[str]:
    """The anchors of a heading: Python-Markdown's (the site) and GitHub's."""
    text = unicodedata.normalize("NFKD", re.sub(r"[`*]", "", heading))
    markdown = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())
    github = re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text.strip().lower()))
    return {markdown, github}


def anchors(page: Path) -> set[str]:
    found, fenced = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.*)", line)):
            found |= slugs(m.group(1))
    return found


def test_readme_links_resolve():
    text = re.sub(r"^```.*?^```", "", README.read_text(), flags=re.MULTILINE | re.DOTALL)
    links = re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", text))
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert local, "the README links to no page"
    for link in local:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), f"README.md links to {path}, which does not exist"
        if anchor:
            assert anchor in anchors(target), f"README.md links to {link}: no such heading in {path}"


def test_documentation_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
