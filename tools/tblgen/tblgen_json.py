"""The command line both generators of this folder share: read the records
`llvm-tblgen --dump-json` wrote, turn them into C++ with the generator's
`generate(records, source)`, and write the result; an `errors` exception
(what the records cannot say) exits 1 naming the .td file, writing nothing.

Usage: <generator>.py RECORDS.json -o OUT.h.inc [--source FILE.td]
"""

import argparse
import json


def main(generate, description: str, errors: tuple = ()) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("records", help="llvm-tblgen --dump-json output")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--source", default="the .td file", help="the .td file, named in the output's header")
    args = parser.parse_args()
    with open(args.records) as f:
        records = json.load(f)
    try:
        text = generate(records, args.source)
    except errors as error:
        parser.exit(1, f"{args.source}: {error}\n")
    with open(args.output, "w") as f:
        f.write(text)
