"""The imitation loop, for any game's store: split by game, the class report, keep-best,
a store that lacks the spec's features refused, and a toy spec on a hold'em store (the
loop knows no game). Hanabi's network: tests/games/hanabi/test_network.py."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from batchrl.imitation import (
    ImitationError,
    NetworkConfig,
    class_report,
    default_out,
    split_by_game,
    train,
)
from batchrl.ingest import IngestConfig, ingest
from batchrl.store import Store

torch = pytest.importorskip("torch", reason="the imitation network needs torch (the "
                            "'imitation' or 'test' extra)")


@dataclass(frozen=True)
class FirstColumns:
    """A spec of no game: the store's first ``n`` features, every move allowed but the
    last (``mask_last``), moves renamed by a swap of 0 and 1 and back."""

    columns: tuple[str, ...]
    swap: bool = False
    mask_last: bool = False
    hidden: ClassVar[tuple[int, ...]] = (16,)
    tag: ClassVar[str] = "-toy"
    store_kind: ClassVar[str] = "toy store"
    inputs: ClassVar[str] = "a few numbers"

    def record(self) -> dict[str, Any]:
        return {"swap": self.swap}

    def encode(self, states, moves):
        return states, self._swap(moves)

    def possible(self, x):
        if not self.mask_last:
            return None
        out = np.ones((len(x), 3), dtype=bool)
        out[:, 2] = False
        return out

    def played(self, states, moves):
        return self._swap(moves)

    def _swap(self, moves):
        if not self.swap:
            return moves
        return np.where(moves == 0, 1, np.where(moves == 1, 0, moves)).astype(np.int64)

    def network(self, config, inputs, outputs):
        layers: list[Any] = []
        for h in config.hidden:
            layers += [torch.nn.Linear(inputs, h), torch.nn.ReLU()]
            inputs = h
        return torch.nn.Sequential(*layers, torch.nn.Linear(inputs, outputs))


@pytest.fixture(scope="module")
def holdem_store(tmp_path_factory):
    from batchrl.games.holdem.logs import generate as holdem

    root = tmp_path_factory.mktemp("imitation")
    holdem(root / "h.log", ["random", "random"], 120, 1, "acpc", None, None)
    ingest(IngestConfig(paths=(root / "h.log",), store=root / "store", options={"pv": False}))
    return root / "store"


def test_the_split_never_puts_one_game_on_two_sides():
    rng = np.random.default_rng(0)
    episode = np.sort(rng.integers(0, 500, 20_000))
    part = split_by_game(episode, seed=3)
    for k in range(3):
        for j in range(k + 1, 3):
            assert not set(episode[part == k]) & set(episode[part == j])
    share = np.bincount(part, minlength=3) / len(part)
    assert np.allclose(share, (0.7, 0.2, 0.1), atol=0.05)
    assert not np.array_equal(part, split_by_game(episode, seed=4))


def test_class_report_matches_a_hand_count():
    confusion = np.array([[5, 0, 1], [2, 3, 0], [0, 0, 0]])
    r = class_report(confusion, ["a", "b", "c"])
    assert r[0]["precision"] == pytest.approx(5 / 7) and r[0]["recall"] == pytest.approx(5 / 6)
    assert r[1]["f1"] == pytest.approx(2 * 1.0 * 0.6 / 1.6) and r[2]["support"] == 0


def test_the_loop_trains_any_games_store_through_its_spec(holdem_store, tmp_path):
    names = Store.open(holdem_store).schema.feature_names
    spec = FirstColumns(tuple(names[:6]), swap=True)
    out = default_out(tmp_path, spec)
    result = train(holdem_store, out, NetworkConfig(epochs=4, batch_size=32, threads=1), spec)
    assert out == tmp_path / "models" / "imitation-toy.pt" and out.exists()
    assert result.config.hidden == (16,)  # the spec's default widths
    assert result.settings()["swap"] is True  # the spec's record, saved with the config
    assert result.confusion.shape == (3, 3) and result.confusion.sum() == result.split_rows[2]
    # the test moves are scored as played: the swap is undone, so the truth is the store's
    t = Store.open(holdem_store).arrays(features=spec.columns)
    assert result.confusion.sum(axis=1).tolist() == np.bincount(
        t.action[np.isin(t.episode, _test_episodes(holdem_store, t))], minlength=3).tolist()
    val = [e.val_accuracy for e in result.history]
    assert result.extra["best_epoch"] == int(np.argmax(val)) + 1
    saved = torch.load(out, weights_only=True)
    assert set(saved) == {"state_dict", "mean", "std", "meta"}


def _test_episodes(store, t):
    from batchrl.imitation import split

    return np.unique(t.episode[split(store, t, (), 0) == 2])


def test_a_move_the_spec_calls_impossible_is_refused(holdem_store, tmp_path):
    names = Store.open(holdem_store).schema.feature_names
    spec = FirstColumns(tuple(names[:6]), mask_last=True)  # raises are move 2
    with pytest.raises(ImitationError, match="impossible in their own states: is this a toy"):
        train(holdem_store, tmp_path / "n.pt", NetworkConfig(epochs=1), spec)


def test_a_store_without_the_specs_features_is_refused(holdem_store, tmp_path):
    spec = FirstColumns(("no_such_feature",))
    with pytest.raises(ImitationError, match=r"reads toy stores \(a few numbers\), not a "):
        train(holdem_store, tmp_path / "n.pt", NetworkConfig(epochs=1), spec)


def test_a_store_of_another_game_is_refused_by_hanabis_spec(holdem_store, tmp_path):
    from batchrl.games.hanabi.network import imitation_spec

    with pytest.raises(ImitationError, match="two-player Hanabi stores"):
        train(holdem_store, tmp_path / "n.pt", NetworkConfig(epochs=1), imitation_spec({}))


def test_the_loop_imports_no_game():
    import ast

    import batchrl.imitation

    tree = ast.parse(Path(batchrl.imitation.__file__).read_text())
    named = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names} | \
        {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "batchrl.store" in named  # the check reads the imports: it can fail
    assert not [m for m in named if m.startswith("batchrl.games")]
