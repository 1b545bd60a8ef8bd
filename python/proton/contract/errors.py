"""Errors raised to users of the profiler."""


class ProfilerError(RuntimeError):
    """Misuse of the session API, a buffer without known metadata, or a
    runtime the profiler cannot use (no torch, no GPU)."""


class PipeliningWarning(UserWarning):
    """Software pipelining changed what a scope inside a loop measures."""


def unicode_problem(text: str) -> str | None:
    """Why `text` cannot be written as UTF-8 (None if it can): a lone
    surrogate, which is how Python holds bytes that were not UTF-8 (in
    command-line arguments, file names)."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError as e:
        char = text[e.start]
        source = " (from bytes that are not UTF-8)" if "\udc80" <= char <= "\udcff" else ""
        return f"is not valid Unicode text ({text!r}: character {e.start} is a lone surrogate{source})"
