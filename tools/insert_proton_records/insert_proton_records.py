#!/usr/bin/env python3
"""insert_proton_records, run from a checkout: inserts proton.record scopes
into dumped TTGIR. The command is the module proton.commands.insert_proton_records
of the installed package (the `insert_proton_records` console script); this
script only runs it, with the same options (--help lists them)."""

from proton.commands.entry_points import insert_proton_records

if __name__ == "__main__":
    insert_proton_records()
