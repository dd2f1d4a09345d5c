#!/usr/bin/env python3
"""Validates report.json files against reports/report.schema.json (JSON Schema draft 2020-12).

usage: validate_report.py SCHEMA REPORT...   exit 0 when every report is valid, 1 otherwise.
Needs the `jsonschema` Python package (Debian: python3-jsonschema).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    sys.exit("validate_report.py: the Python package 'jsonschema' is missing (apt-get install python3-jsonschema)")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in sys.argv[2:]:
        with open(path) as f:
            report = json.load(f)
        errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
        for e in errors:
            print(f"{path}: {'/'.join(str(p) for p in e.path) or '(top)'}: {e.message}")
        bad += bool(errors)
        if not errors:
            print(f"{path}: valid ({len(report['results'])} results)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
