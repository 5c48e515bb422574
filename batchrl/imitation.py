"""Imitation: a network that learns which move a player makes in a state, from a store.

The loop is any game's; what is a game's comes from the object its
``Game.imitation(options)`` gives (an ``ImitationSpec``): the feature columns the
network reads, the moves a state can allow, a transform of states and moves (and
its inverse for the moves), the default hidden widths and the network itself.
Hanabi's is ``batchrl.games.hanabi.network`` (the report's network, its Figure 3).

Games are split 70/20/10 into training, validation and test sets by episode,
never by row: two moves of one game are never on both sides, nor two games dealt
the same cards (a store's ``deal`` column; Eger et al.'s seeds repeat). Inputs
are standardised with the training set's mean and deviation (kept in the saved
file). Training is cross-entropy with Adam, the moves a state cannot allow masked
out of the softmax (``mask``). The network kept is the one of the epoch with the
best validation accuracy (``keep_best``); the test games are scored once, at the
end, on the moves as played (the spec's inverse transform).

The saved file is torch's weights, the standardisation and a JSON string (the
settings, the game's settings from ``spec.record()``, the names, the figures):
``torch.load(weights_only=True)`` reads it and runs no code.

torch is an optional extra (``pip install -e '.[imitation]'``, or
``pip install torch==2.13.0``); this module imports it only when it trains.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from batchrl.filenames import inside, safe_name
from batchrl.store import Store
from batchrl.store.place import outputs_beside, recorded

SPLIT = (0.7, 0.2, 0.1)
_NEG = -1e9  # a masked logit


class ImitationError(ValueError):
    """Training cannot go on; the message says why."""


class ImitationSpec(Protocol):
    """What a game's ``Game.imitation(options)`` gives the loop (duck-typed).

    ``encode`` maps a store's states (``columns``, in that order) and moves to the
    network's inputs and targets; ``possible`` gives the moves each encoded state
    can allow (or None: every move); ``played`` maps the network's moves back to the
    store's, given the store's states (the identity where ``encode`` renames none).
    ``network(config, inputs, outputs)`` is the untrained torch module from
    ``config``'s ``hidden``, ``dropout`` and ``batchnorm``; the game's player builds it
    again from the saved file. ``record()`` is written into the saved file's
    ``config`` (what the game's player needs to play it, e.g. a transform's switch).
    """

    @property
    def columns(self) -> tuple[str, ...]: ...
    @property
    def hidden(self) -> tuple[int, ...]: ...  # the default hidden widths
    @property
    def tag(self) -> str: ...  # the default file name's suffix, e.g. "-colour"
    @property
    def store_kind(self) -> str: ...  # "two-player Hanabi store", for messages
    @property
    def inputs(self) -> str: ...  # what the network reads, for a refusal

    def record(self) -> dict[str, Any]: ...

    def encode(self, states: NDArray[np.float32], moves: NDArray[np.int64]
               ) -> tuple[NDArray[np.float32], NDArray[np.int64]]: ...

    def possible(self, x: NDArray[np.float32]) -> NDArray[np.bool_] | None: ...

    def played(self, states: NDArray[np.float32], moves: NDArray[np.int64]
               ) -> NDArray[np.int64]: ...

    def network(self, config: Any, inputs: int, outputs: int) -> Any: ...


@dataclass(frozen=True)
class NetworkConfig:
    hidden: tuple[int, ...] | None = None  # None: the game's (``spec.hidden``)
    dropout: float = 0.1
    batchnorm: bool = True  # before the output layer
    epochs: int = 100
    batch_size: int = 256
    learning_rate: float = 1e-3
    seed: int = 0
    mask: bool = True  # mask impossible moves out of the softmax
    threads: int | None = None  # torch threads (None: torch's default, one per core)
    keep_best: bool = True  # end with the weights of the epoch best on the validation games


@dataclass
class Epoch:
    epoch: int
    train_loss: float
    train_accuracy: float
    val_loss: float
    val_accuracy: float
    seconds: float


@dataclass
class TrainResult:
    path: Path
    config: NetworkConfig
    history: list[Epoch]
    test_accuracy: float
    test_loss: float
    report: list[dict[str, Any]]  # per class: name, precision, recall, f1, support
    confusion: NDArray[np.int64]
    split_games: tuple[int, int, int]
    split_rows: tuple[int, int, int]
    players: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    recorded: dict[str, Any] = field(default_factory=dict)  # the game's ``spec.record()``

    def settings(self) -> dict[str, Any]:
        """The config as saved: the loop's settings and the game's."""
        return asdict(self.config) | self.recorded

    def table(self) -> str:
        """The per-class report, as the report's Figure 5."""
        lines = [f"{'':>14} {'precision':>9} {'recall':>7} {'f1-score':>8} {'support':>8}"]
        for r in self.report:
            lines.append(f"{r['name']:>14} {r['precision']:>9.2f} {r['recall']:>7.2f} "
                         f"{r['f1']:>8.2f} {r['support']:>8,}")
        total = sum(r["support"] for r in self.report)
        macro = [np.mean([r[k] for r in self.report]) for k in ("precision", "recall", "f1")]
        weighted = [sum(r[k] * r["support"] for r in self.report) / max(total, 1)
                    for k in ("precision", "recall", "f1")]
        lines.append(f"{'accuracy':>14} {'':>9} {'':>7} {self.test_accuracy:>8.3f} {total:>8,}")
        lines.append(f"{'macro avg':>14} {macro[0]:>9.2f} {macro[1]:>7.2f} {macro[2]:>8.2f} "
                     f"{total:>8,}")
        lines.append(f"{'weighted avg':>14} {weighted[0]:>9.2f} {weighted[1]:>7.2f} "
                     f"{weighted[2]:>8.2f} {total:>8,}")
        return "\n".join(lines)


def split_by_game(episode: NDArray[np.int64], seed: int,
                  fractions: tuple[float, float, float] = SPLIT) -> NDArray[np.int8]:
    """0 train, 1 validation, 2 test for each row, drawn per game (episode code).

    >>> codes = np.repeat(np.arange(100), 3)
    >>> part = split_by_game(codes, seed=0)
    >>> np.bincount(part).tolist(), bool((part.reshape(100, 3) == part[::3, None]).all())
    ([210, 60, 30], True)
    """
    games = np.unique(episode)
    order = np.random.default_rng(seed).permutation(len(games))
    cuts = np.round(np.cumsum(fractions)[:2] * len(games)).astype(int)
    part_of_game = np.zeros(len(games), dtype=np.int8)
    part_of_game[order[cuts[0]:cuts[1]]] = 1
    part_of_game[order[cuts[1]:]] = 2
    return part_of_game[np.searchsorted(games, episode)]


def split(store: Path | str, t: Any, players: Sequence[str], seed: int) -> NDArray[np.int8]:
    """The 70/20/10 split of ``t`` (``store.arrays(players=players)``) by game; games that
    share a deal (the store's ``deal`` column) stay on one side together."""
    opened = Store.open(store)
    if "deal" not in opened.schema.audit_columns:
        return split_by_game(t.episode, seed)
    deal = opened.audit("deal", players)
    own = np.char.add("game:", t.episode.astype(str)).astype(object)
    groups = np.where(deal == "", own, deal)
    _, codes = np.unique(groups.astype(str), return_inverse=True)
    return split_by_game(codes.astype(np.int64), seed)


def load_rows(store: Path | str, spec: ImitationSpec, players: Sequence[str] = ()) -> Any:
    """A store's states (the spec's columns), moves and episodes (only ``players``' moves
    if given)."""
    opened = Store.open(store)
    opened.check()  # each page is checked as it is read
    have = opened.schema.feature_names
    if not set(spec.columns) <= set(have):
        raise ImitationError(f"{store}: the network reads {spec.store_kind}s ({spec.inputs}), "
                             f"not a {opened.schema.game} store of {len(have)} features")
    t = opened.arrays(features=spec.columns, players=players)
    if len(t) == 0:
        raise ImitationError(f"{store}: no rows" + (f" of {', '.join(players)}" if players
                                                     else ""))
    return t


def default_out(store: Path | str, spec: ImitationSpec, players: Sequence[str] = ()) -> Path:
    """Where ``batchrl imitate`` saves by default: STORE/models/imitation[-PLAYER...][tag].pt.

    >>> from types import SimpleNamespace
    >>> default_out(Path("s"), SimpleNamespace(tag="-colour"), ["human"]).as_posix()
    's/models/imitation-human-colour.pt'
    """
    who = "".join(f"-{safe_name(p)}" for p in players)  # a name from a log: never a path
    return inside(outputs_beside(store) / "models", f"imitation{who}{spec.tag}.pt")


def train(store: Path | str, out: Path, config: NetworkConfig, spec: ImitationSpec,
          players: Sequence[str] = (),
          progress: Callable[[int], None] | None = None,
          on_epoch: Callable[[Epoch], None] | None = None) -> TrainResult:
    """Train on ``store``'s states and moves as ``spec`` (the store's game's
    ``Game.imitation(options)``) reads them; save the network at ``out``.

    ``progress`` is told of each batch trained; ``on_epoch`` gets each epoch's figures.
    """
    torch = torch_module()
    if config.hidden is None:
        config = replace(config, hidden=tuple(spec.hidden))
    if config.threads:
        torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    t = load_rows(store, spec, players)
    part = split(store, t, players, config.seed)
    x, y = spec.encode(t.state, t.action)
    n_moves = len(t.action_names)
    possible = spec.possible(x)
    allowed = np.ones((len(y), n_moves), dtype=bool) if possible is None else possible
    if config.mask and not allowed[np.arange(len(y)), y].all():
        bad = int((~allowed[np.arange(len(y)), y]).sum())
        raise ImitationError(f"{store}: {bad} moves are impossible in their own states: "
                             f"is this a {spec.store_kind}?")
    train_rows = part == 0
    mean = x[train_rows].mean(axis=0)
    std = x[train_rows].std(axis=0)
    std[std < 1e-6] = 1.0
    xn = ((x - mean) / std).astype(np.float32)
    model = spec.network(config, x.shape[1], n_moves)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    tensors = {k: (torch.from_numpy(xn[part == k]), torch.from_numpy(y[part == k]),
                   torch.from_numpy(allowed[part == k])) for k in range(3)}
    history: list[Epoch] = []
    generator = torch.Generator().manual_seed(config.seed)
    n_train = len(tensors[0][1])
    if n_train == 0 or len(tensors[1][1]) == 0 or len(tensors[2][1]) == 0:
        raise ImitationError(f"{store}: too few games ({len(np.unique(t.episode))}) to split "
                             f"70/20/10 by game")
    best: tuple[float, int, dict[str, Any]] = (-1.0, 0, {})
    for epoch in range(1, config.epochs + 1):
        started = time.perf_counter()
        total_loss, correct = train_epoch(model, optimiser, tensors[0], config.batch_size,
                                          config.mask, generator, progress)
        val_loss, val_acc, _ = _evaluate(model, tensors[1], config.mask)
        history.append(Epoch(epoch, total_loss / n_train, correct / n_train, val_loss, val_acc,
                             time.perf_counter() - started))
        if config.keep_best and val_acc > best[0]:
            best = (val_acc, epoch, {k: v.detach().clone()
                                     for k, v in model.state_dict().items()})
        if on_epoch is not None:
            on_epoch(history[-1])
    if config.keep_best:  # the weights of the best validation epoch, never the test set's
        model.load_state_dict(best[2])
    test_loss, test_acc, predicted = _evaluate(model, tensors[2], config.mask)
    # score the moves as played (a transform's renamed moves renamed back)
    predicted = np.asarray(spec.played(t.state[part == 2], predicted), dtype=np.int64)
    truth = t.action[part == 2]
    confusion = np.zeros((n_moves, n_moves), dtype=np.int64)
    np.add.at(confusion, (truth, predicted), 1)
    extra: dict[str, Any] = {}
    opened = Store.open(store)
    if "partner" in opened.schema.audit_columns:  # e.g. a human's accuracy per AI partner
        partner = opened.audit("partner", players)[part == 2]
        extra["accuracy_by_partner"] = {
            str(p): {"accuracy": float((predicted == truth)[partner == p].mean()),
                     "moves": int((partner == p).sum())} for p in sorted(set(partner))}
    result = TrainResult(
        path=out, config=config, history=history, test_accuracy=test_acc, test_loss=test_loss,
        report=class_report(confusion, t.action_names), confusion=confusion,
        split_games=tuple(len(np.unique(t.episode[part == k])) for k in range(3)),  # type: ignore[arg-type]
        split_rows=tuple(int((part == k).sum()) for k in range(3)),  # type: ignore[arg-type]
        players=tuple(players), extra=extra | {"best_epoch": best[1] or config.epochs},
        recorded=dict(spec.record()))
    _save(out, model, mean, std, t.feature_names, t.action_names, result, store, opened)
    return result


def train_epoch(model: Any, optimiser: Any, data: tuple[Any, Any, Any], batch_size: int,
                mask: bool, generator: Any,
                progress: Callable[[int], None] | None = None) -> tuple[float, int]:
    """One pass over ``data`` (states, moves, allowed-move masks) in shuffled batches:
    the summed loss and the moves predicted right."""
    torch = torch_module()
    x, y, allowed = data
    model.train()
    order = torch.randperm(len(y), generator=generator)
    total_loss, correct = 0.0, 0
    for start in range(0, len(y), batch_size):
        idx = order[start:start + batch_size]
        if len(idx) < 2:
            continue  # batch norm needs two rows
        logits = model(x[idx])
        if mask:
            logits = logits.masked_fill(~allowed[idx], _NEG)
        loss = torch.nn.functional.cross_entropy(logits, y[idx])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        total_loss += float(loss.detach()) * len(idx)
        correct += int((logits.argmax(1) == y[idx]).sum())
        if progress is not None:
            progress(1)
    return total_loss, correct


def batches_per_epoch(store: Path | str, players: Sequence[str], config: NetworkConfig) -> int:
    """About how many batches an epoch trains (for a progress bar), without reading rows."""
    opened = Store.open(store)
    rows = sum(opened.names().get(p, 0) for p in players) if players else opened.info().rows
    return max(1, int(np.ceil(rows * SPLIT[0] / config.batch_size)))


def can_plot() -> bool:
    """Whether matplotlib is there to draw the curves (the imitation extra brings it)."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def write_figures(result: TrainResult) -> tuple[Path | None, Path]:
    """Every figure (JSON) and the loss and accuracy curves (PNG; None where matplotlib
    is missing: `can_plot`) beside the network."""
    figures = result.path.with_suffix(".json")
    figures.write_text(json.dumps({
        "network": str(result.path), "config": result.settings(),
        "players": list(result.players), "test_accuracy": result.test_accuracy,
        "test_loss": result.test_loss, "split_games": list(result.split_games),
        "split_rows": list(result.split_rows), "history": [asdict(e) for e in result.history],
        "report": result.report, "confusion": result.confusion.tolist(), **result.extra,
    }, indent=1))
    if not can_plot():
        return None, figures
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = [e.epoch for e in result.history]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    left.plot(epochs, [e.train_loss for e in result.history], label="training")
    left.plot(epochs, [e.val_loss for e in result.history], label="validation")
    left.set(xlabel="epoch", ylabel="cross-entropy", title="loss")
    right.plot(epochs, [e.train_accuracy for e in result.history], label="training")
    right.plot(epochs, [e.val_accuracy for e in result.history], label="validation")
    right.axhline(result.test_accuracy, color="grey", ls=":",
                  label=f"test {result.test_accuracy:.1%}")
    right.set(xlabel="epoch", ylabel="accuracy", title="accuracy (split by game)")
    for ax in (left, right):
        ax.legend()
        ax.grid(alpha=0.3)
    fig.tight_layout()
    plot = result.path.with_suffix(".png")
    fig.savefig(plot, dpi=110)
    plt.close(fig)
    return plot, figures


def _evaluate(model: Any, data: tuple[Any, Any, Any], mask: bool,
              batch: int = 65536) -> tuple[float, float, NDArray[np.int64]]:
    torch = torch_module()
    x, y, allowed = data
    model.eval()
    loss, predicted = 0.0, []
    with torch.no_grad():
        for start in range(0, len(y), batch):
            logits = model(x[start:start + batch])
            if mask:
                logits = logits.masked_fill(~allowed[start:start + batch], _NEG)
            loss += float(torch.nn.functional.cross_entropy(
                logits, y[start:start + batch], reduction="sum"))
            predicted.append(logits.argmax(1).numpy())
    guess = np.concatenate(predicted) if predicted else np.zeros(0, dtype=np.int64)
    n = max(len(y), 1)
    return loss / n, float((guess == y.numpy()).sum()) / n, guess.astype(np.int64)


def class_report(confusion: NDArray[np.int64], names: Sequence[str]) -> list[dict[str, Any]]:
    """Precision, recall, F1 and support per class from a (truth, predicted) table.

    >>> c = np.array([[3, 1], [0, 4]])
    >>> [(r["name"], round(r["precision"], 2), round(r["recall"], 2)) for r in
    ...  class_report(c, ["a", "b"])]
    [('a', 1.0, 0.75), ('b', 0.8, 1.0)]
    """
    tp = np.diag(confusion).astype(float)
    predicted, actual = confusion.sum(axis=0), confusion.sum(axis=1)
    precision = np.divide(tp, predicted, out=np.zeros_like(tp), where=predicted > 0)
    recall = np.divide(tp, actual, out=np.zeros_like(tp), where=actual > 0)
    both = precision + recall
    f1 = np.divide(2 * precision * recall, both, out=np.zeros_like(tp), where=both > 0)
    return [{"name": n, "precision": float(p), "recall": float(r), "f1": float(f),
             "support": int(s)} for n, p, r, f, s in zip(names, precision, recall, f1, actual,
                                                         strict=True)]


def torch_module() -> Any:
    try:
        import torch
    except ImportError:
        raise ImitationError("the imitation network needs torch: pip install -e "
                             "'.[imitation]' (or pip install torch==2.13.0)") from None
    return torch


def _save(out: Path, model: Any, mean: NDArray[np.float32], std: NDArray[np.float32],
          features: Sequence[str], actions: Sequence[str], result: TrainResult,
          store: Path | str, opened: Store) -> None:
    """The weights, the standardisation and the JSON the game's player reads back
    (``torch.load(weights_only=True)``: tensors and a string, no code)."""
    torch = torch_module()
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "kind": "imitation", "game": opened.schema.game,
        "game_params": dict(opened.schema.game_params), "config": result.settings(),
        "feature_names": list(features), "action_names": list(actions),
        "store": recorded(store), "players": list(result.players),
        "test_accuracy": result.test_accuracy, "test_loss": result.test_loss,
        "split_games": list(result.split_games), "split_rows": list(result.split_rows),
        "history": [asdict(e) for e in result.history],
    }
    tmp = out.with_name(f".{out.name}.tmp")
    torch.save({"state_dict": model.state_dict(), "mean": torch.from_numpy(mean),
                "std": torch.from_numpy(std), "meta": json.dumps(meta)}, tmp)
    tmp.replace(out)
