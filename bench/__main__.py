"""Run every benchmark; print each one's figures, then all of them as one JSON line.

The last line is a single JSON object (the figures ``make bench`` promises).
A benchmark that fails is reported and left out; the others still run.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import traceback
from pathlib import Path


def main() -> int:
    here = Path(__file__).resolve().parent
    figures: dict = {}
    failed = []
    for mod in sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_")):
        module = importlib.import_module(f"bench.{mod}")
        print(f"== {mod}", flush=True)
        doc = (module.__doc__ or "").strip().splitlines()
        if doc:
            print(f"   {doc[0]}")
        try:
            result = module.run()
        except Exception:  # a broken benchmark must not hide the others' figures
            traceback.print_exc()
            failed.append(mod)
            continue
        for key, value in result.items():
            print(f"   {key}: {value}")
        figures.update(result)
    if failed:
        figures["failed_benchmarks"] = failed
    print(json.dumps(figures, sort_keys=True))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
