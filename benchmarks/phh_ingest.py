"""PHH ingest against pokerkit's own reader, as whole processes, side by side.

    python benchmarks/phh_ingest.py [--hands PATH] [--repeat 3] [--quick]
    python benchmarks/phh_ingest.py --cross-check   # every hand's results, against pokerkit

The baseline is pokerkit (the format's own implementation, ``pip install pokerkit``)
loading every hand of the folder and replaying it through its states
(``HandHistory.load``, then iterating it): what reading the hands takes there, before
any features. Against it, ``batchrl ingest`` of the same folder into a fresh store:
read, replayed, every result checked, features (equities included) computed and
written; and the same with ``--no-pv``, the equities left out. And the floors:
reading their bytes, parsing them with Python's own TOML parser and with batchrl's
(``parsers/toml_lines.py``, what the ingest reads them with), and batchrl's start-up
(the modules a PHH ingest imports).
Each run is a fresh process, timed whole (start-up and imports included), in turn; the
median of ``--repeat`` runs is printed with hands/s and the ratio to pokerkit's. The
default folder is the 10,000 hands Pluribus played (``../shared/data/phh/pluribus``);
``--quick``: one session of it.

``--cross-check`` replays every hand with batchrl's rules and with pokerkit instead,
and prints the hands where either pays otherwise than the log (``tests/phh_crosscheck.py``).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))  # the cross-check: tests/phh_crosscheck.py

import _args  # noqa: E402  (benchmarks/, the script's own folder)

PLURIBUS = ROOT.parent / "shared" / "data" / "phh" / "pluribus"
POKERKIT = """
import sys
from pathlib import Path
from pokerkit import HandHistory
n = 0
for path in sorted(Path(sys.argv[1]).rglob("*.phh")):
    with path.open("rb") as f:
        history = HandHistory.load(f)
    for _ in history:
        pass
    n += 1
print(n)
"""


# The floors, each a whole process over the same files: Python reading their bytes,
# Python's own TOML parser (tomllib) reading their syntax, and batchrl's reader of
# one-value-a-line TOML (parsers/toml_lines.py, what the ingest reads them with); and
# batchrl's start-up, the modules a PHH ingest imports, loaded and nothing run.
FLOOR = """
import importlib.util, os, sys, tomllib
# the module alone, not its package (which imports every format and game)
spec = importlib.util.spec_from_file_location("toml_lines", sys.argv[3])
toml_lines = importlib.util.module_from_spec(spec)
spec.loader.exec_module(toml_lines)
parse = {"bytes": None, "toml": tomllib.loads, "toml_lines": toml_lines.loads}[sys.argv[2]]
n = 0
for root, _, names in os.walk(sys.argv[1]):
    for name in names:
        if name.endswith(".phh"):
            with open(os.path.join(root, name), "rb") as f:
                raw = f.read()
            if parse is not None:
                assert parse(raw.decode()) is not None
            n += 1
print(n)
"""
START_UP = ("import batchrl.cli.main, batchrl.ingest, parsers.phh, "
            "batchrl.games.holdem.ingest, batchrl.games.holdem.transitions, batchrl.store")


def timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode:
        sys.exit(f"{' '.join(command[:4])} …: exit {done.returncode}: {done.stderr[-400:]}")
    return seconds, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hands", type=Path, default=None, help="a folder of .phh files")
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--cross-check", action="store_true",
                        help="every hand's results against pokerkit's and the log's")
    args = _args.parse(parser, defaults={"repeat": 3}, quick={"repeat": 1})
    folder = args.hands or (PLURIBUS / "100" if args.quick else PLURIBUS)
    if not folder.is_dir():
        sys.exit(f"{folder} is absent: give --hands a folder of .phh files")
    if args.cross_check:
        from phh_crosscheck import cross_check  # tests/: pokerkit beside batchrl

        got = cross_check(folder)
        print(f"{got.hands:,} hands of {folder}: batchrl pays {len(got.batchrl_differs)} "
              f"otherwise than the log, pokerkit {len(got.pokerkit_differs)}")
        for line in [*got.batchrl_differs, *got.pokerkit_differs]:
            print(f"  {line}")
        return 1 if got.batchrl_differs else 0
    hands = sum(1 for _ in folder.rglob("*.phh"))
    times: dict[str, list[float]] = {"pokerkit": [], "batchrl": [], "no-pv": [], "bytes": [],
                                     "toml": [], "toml_lines": [], "start-up": []}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.repeat):
            for floor in ("bytes", "toml", "toml_lines"):
                seconds, out = timed([sys.executable, "-c", FLOOR, str(folder), floor,
                                      str(ROOT / "parsers" / "toml_lines.py")])
                assert int(out) == hands, out
                times[floor].append(seconds)
            times["start-up"].append(timed([sys.executable, "-c", START_UP])[0])
            seconds, out = timed([sys.executable, "-c", POKERKIT, str(folder)])
            assert int(out) == hands, out
            times["pokerkit"].append(seconds)
            store = Path(tmp) / f"store-{k}"
            seconds, out = timed([sys.executable, "-m", "batchrl", "ingest", str(folder),
                                  "--store", str(store)])
            assert f"{hands:,} hands" in out, out
            times["batchrl"].append(seconds)
            seconds, out = timed([sys.executable, "-m", "batchrl", "ingest", str(folder),
                                  "--store", str(store) + "-no-pv", "--no-pv"])
            assert f"{hands:,} hands" in out, out
            times["no-pv"].append(seconds)
    base = statistics.median(times["pokerkit"])
    print(f"{hands:,} hands of {folder}, median of {args.repeat} whole processes each\n")
    print(f"{'run':<50}{'seconds':>9}{'hands/s':>10}{'x pokerkit':>12}")
    for name, label in (("pokerkit", "pokerkit: load and replay (baseline)"),
                        ("batchrl", "batchrl ingest: replay, check, features, store"),
                        ("no-pv", "batchrl ingest --no-pv (no equities)"),
                        ("bytes", "floor: Python reading the files' bytes"),
                        ("toml", "floor: Python's tomllib parsing them"),
                        ("toml_lines", "floor: batchrl's TOML reader parsing them"),
                        ("start-up", "batchrl's start-up: its modules imported")):
        median = statistics.median(times[name])
        print(f"{label:<50}{median:>9.2f}{hands / median:>10,.0f}{base / median:>12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
