"""Fuzzing what a string, a setting or a file on disk can make batchrl do, beyond the
logs (``tests/fuzzing.py``) and the model files (``tests/model_fuzzing.py``): four kinds
of case, each run as a user runs it (the command, in process) and judged alike. Shared by
``tests/test_fuzz_surfaces.py`` (a sample in CI) and ``benchmarks/fuzz_surfaces.py`` (by
the thousand).

- ``search``: a search player's name, ``search[+OPTION=VALUE...]:INNER`` one to three
  levels deep, its options given hostile values (huge, negative, NaN, not numbers, empty),
  played in a two-hand Leduc ``evaluate``;
- ``network``: ``learn network``'s shape and settings given hostile values (widths past
  any bound, NaN and infinite rates, zero and huge epochs and batches), trained on a small
  Leduc store;
- ``rows``: a Leduc store whose part has rows no rule allows (actions past the last or
  below 0, NaN and infinite rewards, seats the game lacks, empty masks, illegal moves),
  its footer's digests kept (the part rewritten under them), dropped (an older
  batchrl's part) or made again (another tool's that digests), read as learners read it;
- ``bench``: a finished bench's output folder and dataset cache, a file of them flipped,
  cut, emptied, deleted, edited or replaced by a pipe, a link or a folder, the bench run
  again.

A case passes when the command ends with exit 0 and a right result (``bench``: the same
table; ``rows``: no row read that breaks a rule), or with exit 1 and the project's
one-line error; within ``CASE_SECONDS``, its process's peak resident memory under
``MEMORY_BYTES``. Anything else escapes: a traceback, a hang, memory past the bound, a
wrong result with exit 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner
from fuzzing import Hang, time_limit
from store_fuzzing import replace_node

from batchrl.cli import main
from batchrl.store import Store, StoreError
from batchrl.store.content import CONTENT_KEY, ContentDigest
from batchrl.store.schema import META_KEY

CASE_SECONDS = 60.0
MEMORY_BYTES = 2 << 30
MAX_LINES = 3
KINDS = ("search", "network", "rows", "bench")
NUMBERS = ("0", "1", "2", "3", "16", "64", "1024", "1025", "4096", "-1", "-0", "1e9", "nan",
           "inf", "-inf", "1.5", "", "abc", "٣", "9" * 400, "0x10", "1_000", " 4", "+2")


@dataclass
class Outcome:
    ok: bool = False  # exit 0 and a right result
    error: str = ""  # the project's one-line error
    escape: str = ""  # a traceback, a hang, memory past the bound, a wrong result
    peak: int = 0  # bytes: the process's peak resident memory during the case


def run(args: Sequence[str], check: Callable[[str], str] | None = None,
        env: dict[str, str] | None = None) -> Outcome:
    """``batchrl ARGS`` in this process, judged: ``check`` says what is wrong with the
    output of a run that exits 0 ("" if nothing)."""
    outcome = Outcome()
    _reset_peak()
    try:
        with time_limit(CASE_SECONDS):
            got = CliRunner().invoke(main, list(args), env=env)
    except Hang as exc:
        outcome.escape = f"hang: {exc}"
        return outcome
    finally:
        outcome.peak = _peak()
    text = got.output
    if isinstance(got.exception, Hang):  # the alarm fired inside the command
        outcome.escape = f"hang: {got.exception}"
    elif got.exception is not None and not isinstance(got.exception, SystemExit):
        outcome.escape = f"{type(got.exception).__name__}: {str(got.exception)[:300]}"
    elif "Traceback" in text:
        outcome.escape = f"a traceback in the output: {text[-300:]}"
    elif got.exit_code == 0:
        outcome.ok = True
        if check is not None and (wrong := check(text)):
            outcome.escape, outcome.ok = f"wrong result with exit 0: {wrong}", False
    elif got.exit_code in (1, 2):
        lines = [line for line in text.splitlines() if line.startswith("Error")]
        outcome.error = lines[-1] if lines else text[-300:]
        if not lines or len(lines[-1]) > 1_500:
            outcome.escape = f"exit {got.exit_code} without a one-line error: {text[-300:]}"
    else:
        outcome.escape = f"exit {got.exit_code}: {text[-300:]}"
    if outcome.peak > MEMORY_BYTES and not outcome.escape:
        outcome.escape = f"peak memory {outcome.peak / 2**20:,.0f} MB"
    return outcome


def _reset_peak() -> None:
    """The process's peak resident memory set back to what it holds now (Linux)."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _peak() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


# ---- the seeds: a small Leduc store, a finished bench ----------------------------------


def leduc_store(folder: Path, hands: int = 300) -> Path:
    runner = CliRunner()
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "leduc.log"
    for args in (["generate", "--game", "leduc", "--players", "rule,random", "--hands",
                  str(hands), "--seed", "5", "-o", str(log)],
                 ["ingest", str(log), "--store", str(folder / "store")]):
        got = runner.invoke(main, args)
        assert got.exit_code == 0, got.output
    return folder / "store"


BENCH = ("bench", "--quick", "--seeds", "1", "--games", "sette-mezzo", "--tiers", "random",
         "--learners", "bc", "-j", "1")


def bench_seed(folder: Path) -> tuple[Path, list[str]]:
    """A finished bench (``OUT`` and ``CACHE`` under ``folder``) and its table."""
    got = CliRunner().invoke(main, [*BENCH, "-o", str(folder / "out"), "--cache",
                                    str(folder / "cache")])
    assert got.exit_code == 0, got.output
    return folder, bench_table(got.output)


def bench_table(output: str) -> list[str]:
    """The table's lines, each without its CPU seconds (a row trained again measures its
    own)."""
    return [re.sub(r"\s+[0-9.]+$", "", line.rstrip()) for line in output.splitlines()
            if line.startswith("sette-mezzo ")]


# ---- the cases -----------------------------------------------------------------------


def search_spec(rng: random.Random) -> str:
    """A search player's name, hostile."""
    options = ("worlds", "more", "top", "depth", "seed", "margin", "z", "opponent", "bogus")
    levels = []
    for _ in range(rng.choice((1, 1, 2, 2, 3))):
        pieces = [f"{rng.choice(options)}={rng.choice((*NUMBERS, 'rule', 'model', 'x.npz'))}"
                  for _ in range(rng.randrange(4))]
        head = "+".join(["search", *pieces])
        if rng.random() < 0.1:
            head = head.replace("=", rng.choice(("", "==", "=+")), 1)
        levels.append(head)
    inner = rng.choice(("rule", "random", "rule", "model:missing.npz", "", "bogus",
                        "python:nowhere:f", "search"))
    spec = ":".join([*levels, inner])
    if rng.random() < 0.05:
        spec = spec.replace(":", "", 1)
    return spec


def search_case(spec: str) -> Outcome:
    return run(["evaluate", "--game", "leduc", "--players", f"{spec},rule", "--hands", "2",
                "--seed", "1"])


def network_args(rng: random.Random) -> list[str]:
    """``learn network`` settings, each hostile a third of the time (else one it takes:
    the widest shapes it takes are among them)."""
    choices = {
        # the widest shapes it takes (16.8M and 27M weights) a tenth of the time: each
        # is seconds of training where the others are a fraction of one
        "--hidden": (("8", "64,64", "1", "32,16", "8,8,8", "64", "16", "128,2", "4,4",
                      rng.choice(("4096,4096,2", "3000,3000,3000,3000"))),
                     ("0", "4097", "30000", "100000,100000", "-5", "1.5", "", "x", ",",
                      "8," * 300, "5000,5000,5000")),
        "--epochs": (("1",), ("0", "-1", "1000000000", "10**9", "nan")),
        "--learning-rate": (("1e-3", "1", "1e-300"), ("0", "-1", "nan", "inf", "1e300",
                                                      "2", "x")),
        "--batch-size": (("2", "64", "16384"), ("1", "0", "-3", "16385", "1000000000",
                                                "nan")),
        "--dropout": (("0", "0.5"), ("1", "1.5", "-0.1", "nan"))}
    args = []
    for flag, (taken, hostile) in choices.items():
        if flag in ("--hidden", "--epochs") or rng.random() < 0.6:
            args += [flag, rng.choice(hostile if rng.random() < 1 / 3 else taken)]
    return args


def network_case(store: Path, args: Sequence[str], out: Path) -> Outcome:
    """``learn network`` with ``args`` on ``store``, its model then loaded (torch on one
    thread: its threads spin on a machine another case loads)."""
    import torch  # the test extra's: only the network cases need it

    torch.set_num_threads(1)
    def loads(_: str) -> str:
        shown = CliRunner().invoke(main, ["policy", "show", str(out)])
        return "" if shown.exit_code == 0 else f"its model does not load: {shown.output[-200:]}"

    return run(["learn", "network", "--store", str(store), "--out", str(out), *args], loads)


ROW_VALUES: dict[str, tuple[Any, ...]] = {
    "action": (3, 100, 127, -1, -128), "player": (2, 5, 127, -1, -128),
    "reward": (float("nan"), float("inf"), -float("inf"), 1e308),
    "terminal": (True, False)}


def crafted_rows(seed: Path, case: Path, rng: random.Random) -> str:
    """A copy of the store ``seed`` at ``case``, a part's rows crafted; what was done."""
    shutil.copytree(seed, case)
    part = rng.choice(sorted((case / "parts").glob("*.parquet")))
    f = pq.ParquetFile(part)
    footer = json.loads(f.metadata.metadata[META_KEY])
    table = f.read()
    rows = rng.sample(range(table.num_rows), rng.choice((1, 1, 3)))
    columns = [*ROW_VALUES, "legal", "next_legal", "feature"]
    column = rng.choice(columns)
    if column in ("legal", "next_legal"):  # a row's mask emptied, or its move made illegal
        prefix = "legal_" if column == "legal" else "next_legal_"
        names = [n for n in table.schema.names if n.startswith(prefix)]
        action = table.column("action").to_numpy()
        for name in names:
            values = table.column(name).to_numpy(zero_copy_only=False).copy()
            for row in rows:
                if rng.random() < 0.5 or names.index(name) == action[row]:
                    values[row] = False
            table = table.set_column(table.schema.get_field_index(name), name,
                                     pa.array(values))
        what = f"{column} masks of rows {rows} emptied or their move made illegal"
    else:
        name = rng.choice(list(footer["feature_names"])) if column == "feature" else column
        kind = table.schema.field(name).type
        values = table.column(name).to_numpy(zero_copy_only=False).copy()
        whole = pa.types.is_integer(kind)
        value = rng.choice(ROW_VALUES.get(column, (127, -128, 100, -1) if whole else
                                          (float("nan"), float("inf"), 1e30, -7.0)))
        for row in rows:
            values[row] = value
        table = table.set_column(table.schema.get_field_index(name), name,
                                 pa.array(values, kind))
        what = f"{name} of rows {rows} set to {value}"
    how = rng.choice(("kept", "dropped", "made again"))
    if how == "dropped":
        del footer["source"][CONTENT_KEY]
    elif how == "made again":
        digest = ContentDigest(table.schema.names)
        digest.update(table)
        footer["source"][CONTENT_KEY] = digest.hexdigests()
    with pq.ParquetWriter(part, table.schema, write_page_checksum=True) as w:
        w.write_table(table)
        w.add_key_value_metadata({META_KEY: json.dumps(footer).encode()})
    return f"{what}, digests {how}"


def rows_case(case: Path) -> Outcome:
    """The store read as a learner reads it: a clean `StoreError`, or rows that keep the
    rules (the crafting can leave a row legal: a terminal flag set where the episode may
    end, a value equal to what it was)."""
    outcome = Outcome()
    _reset_peak()
    try:
        with time_limit(CASE_SECONDS):
            store = Store.open(case)
            store.check()
            t = store.arrays(seats=2)
        wrong = [name for name, bad in (
            ("action", (t.action < 0) | (t.action >= len(t.action_names))),
            ("player", (t.player < 0) | (t.player >= 2)),
            ("reward", ~np.isfinite(t.reward)),
            ("state", ~np.isfinite(t.state).all(axis=1))) if bad.any()]
        if t.legal is not None and ((~t.legal.any(axis=1)).any() or \
                    (~t.legal[np.arange(len(t.action)), t.action]).any()):
            wrong.append("legal")
        if wrong:
            outcome.escape = f"wrong result: rows read that break the rules ({wrong})"
        else:
            outcome.ok = True
    except StoreError as exc:
        outcome.error = str(exc)
        if len(outcome.error) > 1_500 or "\n" in outcome.error:
            outcome.escape = f"a message of {len(outcome.error):,} characters"
    except Hang as exc:
        outcome.escape = f"hang: {exc}"
    except Exception as exc:  # the judge: anything else escaped
        outcome.escape = f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        outcome.peak = _peak()
    return outcome


BENCH_MUTATIONS = ("flip bytes", "truncate", "empty", "delete", "fifo", "link out",
                   "directory", "edit row", "nan scores", "swap tier store", "garbage")


def damaged_bench(seed: Path, case: Path, rng: random.Random) -> str:
    """A copy of the finished bench ``seed`` at ``case``, one file of it damaged."""
    shutil.copytree(seed, case, symlinks=True)
    files = sorted(p for p in case.rglob("*") if p.is_file() and p.name != ".bench.lock")
    target = rng.choice(files)
    mutation = rng.choice(BENCH_MUTATIONS)
    if mutation == "flip bytes":
        data = bytearray(target.read_bytes())
        for _ in range(rng.randrange(1, 8)):
            if data:
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        target.write_bytes(bytes(data))
    elif mutation == "truncate":
        target.write_bytes(target.read_bytes()[:rng.randrange(max(1, target.stat().st_size))])
    elif mutation == "empty":
        target.write_bytes(b"")
    elif mutation == "delete":
        target.unlink()
    elif mutation in ("fifo", "link out", "directory"):
        replace_node(target, mutation.split()[0], case.parent / f"{case.name}-outside")
    elif mutation == "edit row":
        target = case / "out" / "results.jsonl"
        row = json.loads(target.read_text().splitlines()[0])
        key = rng.choice(list(row))
        row[key] = rng.choice((None, True, -1, 1e308, float("nan"), "x", 99.95, [], {}))
        target.write_text(json.dumps(row) + "\n")
    elif mutation == "nan scores":
        target = rng.choice(sorted((case / "out" / "scores").glob("*.npz")))
        with np.load(target) as held:
            arrays = {k: held[k] for k in held.files}
        arrays["values"] = np.where(np.arange(len(arrays["values"])) % 2, np.nan, 1.0)
        np.savez(target.with_suffix(".tmp.npz"), **arrays)
        os.replace(target.with_suffix(".tmp.npz"), target)
    elif mutation == "swap tier store":  # another store of the same game in its place
        store = next((case / "cache" / "bench" / "sette-mezzo").glob("random-*")) / "store"
        other = case.parent / f"{case.name}-other"
        leduc_store(other, 40)
        shutil.rmtree(store)
        shutil.copytree(other / "store", store)
        target = store
    else:
        target.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))))
    return f"{mutation} {target.relative_to(case)}"


def bench_case(case: Path, table: list[str]) -> Outcome:
    def same(output: str) -> str:
        got = bench_table(output)
        return "" if got == table else f"the table is {got}, not {table}"

    return run([*BENCH, "-o", str(case / "out"), "--cache", str(case / "cache")], same)


def clear(case: Path) -> None:
    """A case's files gone, links and pipes too."""
    for path in (case, case.with_name(f"{case.name}-outside"),
                 case.with_name(f"{case.name}-other")):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        elif path.exists() or path.is_symlink():
            path.unlink()
