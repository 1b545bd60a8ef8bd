"""Progress lines on a terminal, nothing elsewhere."""

import io

from proton.writers.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_sees_the_line_and_a_pipe_sees_nothing(monkeypatch):
    monkeypatch.setattr(Progress, "INTERVAL", 0.0)
    tty, pipe = Terminal(), io.StringIO()
    for stream in (tty, pipe):
        progress = Progress("proton: decoding", 3, "launches", stream=stream)
        for done in range(3):
            progress.update(done, f"{done * 1000:,} events")
        progress.close()
    assert pipe.getvalue() == ""
    text = tty.getvalue()
    assert "\rproton: decoding: 2 of 3 launches, 2,000 events" in text and text.endswith("\r")


def test_quick_work_prints_nothing_before_the_interval():
    tty = Terminal()
    progress = Progress("proton: writing", 3, "files", stream=tty)
    progress.update(0, "run.hatchet")
    assert tty.getvalue() == ""
    progress.update(1, "run.pftrace", now=True)  # a big session's write says so at once
    assert "proton: writing: 1 of 3 files, run.pftrace" in tty.getvalue()
