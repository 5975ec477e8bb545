"""Run the gate's parser and schema validation over a directory of contracts.

    python benchmarks/corpus_validate.py DIR [DIR ...] [--formats odcs,dcs] [--verbose]

For every ``*.yaml``/``*.yml`` file below each DIR, the file is read as the gate
reads a changed HEAD contract (``gate.formats.parse_contract`` with the schema
check on) and classified as:

- ``compared``: the gate would compare it (its schema warnings, if any, are counted
  and, with ``--verbose``, printed);
- ``refused``: exit 2, with the one-line reason;
- ``other``: no format in ``--formats`` claims it (dbt, Soda, unrelated YAML),
  left out of the counts.

It copies nothing and writes nothing: point it at a checkout of a public
repository (the ODCS examples, datacontract-cli's ``tests/fixtures``) and it
prints the per-file verdicts and a total line, the measurement docs/formats/
validation.md quotes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gate.formats import FORMATS, parse_contract  # noqa: E402
from gate.model import ContractError  # noqa: E402
from gate.yaml_load import load_yaml  # noqa: E402


def fmt_of(data: bytes, path: str) -> str | None:
    """The format whose ``detect`` claims the document, or None."""
    try:
        doc = load_yaml(data, path)
    except ContractError:
        return "unparseable"
    if not isinstance(doc, dict):
        return None
    for module in FORMATS:
        if module.detect(doc):
            return str(module.FORMAT)
    return None


def classify(path: Path, shown: str, formats: set[str]) -> tuple[str, str, list[str]]:
    """(verdict, reason, warnings) for one file."""
    data = path.read_bytes()
    fmt = fmt_of(data, shown)
    if fmt is None or (fmt not in formats and fmt != "unparseable"):
        return "other", fmt or "-", []
    try:
        contract = parse_contract(data, shown)
    except ContractError as exc:
        return "refused", str(exc), []
    warnings = [str(w) for w in getattr(contract, "warnings", ())]
    return "compared", contract.format, warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--formats", default="odcs,dcs")
    parser.add_argument("--verbose", action="store_true", help="print every warning")
    args = parser.parse_args(argv)
    formats = set(args.formats.split(","))
    counts = {"compared": 0, "refused": 0, "other": 0}
    warned = 0
    for folder in args.dirs:
        files = sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml"))
        for path in files:
            shown = str(path.relative_to(folder.parent))
            verdict, reason, warnings = classify(path, shown, formats)
            counts[verdict] += 1
            warned += bool(warnings)
            if verdict == "other":
                continue
            if verdict == "refused":
                print(f"REFUSED  {reason}")
            else:
                extra = f" ({len(warnings)} warnings)" if warnings else ""
                print(f"compared {shown} [{reason}]{extra}")
                if args.verbose:
                    for warning in warnings:
                        print(f"         warning: {warning}")
    print(
        f"total: {counts['compared']} compared ({warned} with warnings), "
        f"{counts['refused']} refused, {counts['other']} not {'/'.join(sorted(formats))}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
