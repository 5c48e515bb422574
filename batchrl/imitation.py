"""Imitation: a network that learns which move a player makes in a state, from a store.

The report's network by default (its Figure 3): Dense 195 -> 195 -> 128 -> 64 -> 32
(ReLU, dropout 0.1 after the first three), batch normalisation, Dense -> 20 with
a softmax, trained with cross-entropy and Adam. Games are split 70/20/10 into
training, validation and test sets by episode, never by row: two moves of one
game are never on both sides, nor two games dealt the same cards (Eger et al.'s
seeds repeat). Inputs are standardised with the training set's
mean and deviation (kept in the artifact). The network kept is the one of the
epoch with the best validation accuracy (``keep_best``); the test games are
scored once, at the end.

Moves a state cannot allow (a slot the hand no longer has, a hint that touches
no card, a hint with no token left) are masked out of the softmax, in training
as in play, as the rules give them from the 195 numbers; at play time
``NetworkBot`` masks with the rules' exact legal moves, so it never plays an
illegal one. ``colour_order`` trains on the colour-ordered states (see
``batchrl.games.hanabi.symmetry``): each state's colours sorted, hint-colour
moves renamed, and renamed back at play time. ``features="hints"`` adds the 15
public hint facts the store keeps after the report's 195 numbers (which cards
hints touched; the focus of the partner's hint just before), which the
conventions of the bots that make the data read and the report's state lacks.

torch is an optional extra (``pip install -e '.[imitation]'``, or
``pip install torch==2.13.0``); this module imports it only when it trains or
plays.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from batchrl.games.hanabi.network import (
    ImitationError,
    feature_set,
    network,
    possible_moves,
    prepare,
    torch_module,
)
from batchrl.store import Store

if TYPE_CHECKING:
    pass

SPLIT = (0.7, 0.2, 0.1)
_NEG = -1e9  # a masked logit


@dataclass(frozen=True)
class NetworkConfig:
    hidden: tuple[int, ...] = (195, 128, 64, 32)
    dropout: float = 0.1
    batchnorm: bool = True  # before the output layer
    epochs: int = 100
    batch_size: int = 256
    learning_rate: float = 1e-3
    seed: int = 0
    colour_order: bool = False
    mask: bool = True  # mask impossible moves out of the softmax
    threads: int | None = None  # torch threads (None: torch's default, one per core)
    keep_best: bool = True  # end with the weights of the epoch best on the validation games
    features: str = "report"  # or "hints": the report's 195 and the public hint facts


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


def split(store: Path, t: Any, players: Sequence[str], seed: int) -> NDArray[np.int8]:
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


def load_rows(store: Path, players: Sequence[str] = (),
              features: str = "report") -> Any:
    """A store's states (the named feature set), moves and episodes (only ``players``'
    moves if given)."""
    opened = Store.open(store)
    wanted = feature_set(features)
    have = opened.schema.feature_names
    if not set(wanted) <= set(have):
        raise ImitationError(f"{store}: the network reads two-player Hanabi stores (the "
                             f"report's 195 numbers and 20 moves), not a {opened.schema.game} "
                             f"store of {len(have)} features")
    t = opened.arrays(features=wanted, players=players)
    if len(t) == 0:
        raise ImitationError(f"{store}: no rows" + (f" of {', '.join(players)}" if players
                                                     else ""))
    return t


def train(store: Path, out: Path, config: NetworkConfig = NetworkConfig(),
          players: Sequence[str] = (),
          progress: Callable[[int], None] | None = None,
          on_epoch: Callable[[Epoch], None] | None = None) -> TrainResult:
    """Train on ``store``'s states and moves; save the artifact at ``out``.

    ``progress`` is told of each batch trained; ``on_epoch`` gets each epoch's figures.
    """
    torch = torch_module()
    if config.threads:
        torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    t = load_rows(store, players, config.features)
    part = split(store, t, players, config.seed)
    x, y, _ = prepare(t.state, t.action, config.colour_order)
    assert y is not None
    allowed = possible_moves(x)  # reordered states: the hints of the reordered colours
    if config.mask and not allowed[np.arange(len(y)), y].all():
        bad = int((~allowed[np.arange(len(y)), y]).sum())
        raise ImitationError(f"{store}: {bad} moves are impossible in their own states: "
                             "is this a two-player Hanabi store?")
    train_rows = part == 0
    mean = x[train_rows].mean(axis=0)
    std = x[train_rows].std(axis=0)
    std[std < 1e-6] = 1.0
    xn = ((x - mean) / std).astype(np.float32)
    model = network(config, x.shape[1], 20)
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
    truth = tensors[2][1].numpy()
    if config.colour_order:  # score the moves as played: rename hint colours back
        from batchrl.games.hanabi import symmetry

        perm = symmetry.colour_order(t.state[part == 2][:, :195])
        predicted = symmetry.original_actions(predicted, perm)
        truth = t.action[part == 2]
    confusion = np.zeros((20, 20), dtype=np.int64)
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
        players=tuple(players), extra=extra | {"best_epoch": best[1] or config.epochs})
    _save(out, model, config, mean, std, t.feature_names, t.action_names, result, store)
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


def batches_per_epoch(store: Path, players: Sequence[str], config: NetworkConfig) -> int:
    """About how many batches an epoch trains (for a progress bar), without reading rows."""
    opened = Store.open(store)
    rows = sum(opened.names().get(p, 0) for p in players) if players else opened.info().rows
    return max(1, int(np.ceil(rows * SPLIT[0] / config.batch_size)))


def write_figures(result: TrainResult) -> tuple[Path, Path]:
    """The loss and accuracy curves (PNG) and every figure (JSON) beside the network."""
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
    figures = result.path.with_suffix(".json")
    figures.write_text(json.dumps({
        "network": str(result.path), "config": asdict(result.config),
        "players": list(result.players), "test_accuracy": result.test_accuracy,
        "test_loss": result.test_loss, "split_games": list(result.split_games),
        "split_rows": list(result.split_rows), "history": [asdict(e) for e in result.history],
        "report": result.report, "confusion": result.confusion.tolist(), **result.extra,
    }, indent=1))
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


def _save(out: Path, model: Any, config: NetworkConfig, mean: NDArray[np.float32],
          std: NDArray[np.float32], features: Sequence[str], actions: Sequence[str],
          result: TrainResult, store: Path) -> None:
    torch = torch_module()
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "kind": "imitation", "game": Store.open(store).schema.game, "config": asdict(config),
        "feature_names": list(features), "action_names": list(actions),
        "store": str(store), "players": list(result.players),
        "test_accuracy": result.test_accuracy, "test_loss": result.test_loss,
        "split_games": list(result.split_games), "split_rows": list(result.split_rows),
        "history": [asdict(e) for e in result.history],
    }
    tmp = out.with_name(f".{out.name}.tmp")
    torch.save({"state_dict": model.state_dict(), "mean": torch.from_numpy(mean),
                "std": torch.from_numpy(std), "meta": json.dumps(meta)}, tmp)
    tmp.replace(out)


