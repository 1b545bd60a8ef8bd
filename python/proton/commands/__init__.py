"""The command-line tools (console entry points in entry_points.py)."""
