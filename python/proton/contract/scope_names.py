"""The names a scope (event, mark, value) may have: what a marker carries
and what a `proton.record` line holds, whoever writes it (proton.language,
insert_proton_records, a hand-edited override file)."""

_ALLOWED_PUNCTUATION = set("_-.:/[]()<>, +=#@")


def check_scope_name(name: str) -> str:
    """`name` if it is a valid scope name (for markers, and for the records
    insert_proton_records writes); ValueError saying why otherwise."""
    if not name or name != name.strip():
        raise ValueError(f"proton scope name {name!r} must be non-empty without surrounding spaces")
    bad = [c for c in name if not (c.isalnum() and c.isascii()) and c not in _ALLOWED_PUNCTUATION]
    if bad:
        raise ValueError(
            f"proton scope name {name!r} contains {bad[0]!r}; allowed are letters, digits, "
            f"spaces and {''.join(sorted(_ALLOWED_PUNCTUATION))}"
        )
    return name
