"""The network's training loop (torch): the split by episode, the epochs, keep-best and
the test figures. Only `batchrl.learners.network.Network.fit` imports it, so torch is
needed to train and never to play."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.learners.base import LearnerError
from batchrl.learners.network.model import SPLIT, Layer, NetworkConfig, widths
from batchrl.store import Transitions

_NEG = -1e9  # a masked logit


def torch_module() -> Any:
    try:
        import torch  # torch: the network extra, loaded only to train
    except ImportError:
        raise LearnerError("the network needs torch to train: pip install -e '.[imitation]' "
                           "(without a GPU, first "
                           "pip install torch --index-url https://download.pytorch.org/whl/cpu"
                           ": docs/interop.md)") from None
    return torch


def split_by_game(episode: NDArray[np.int64], seed: int,
                  fractions: tuple[float, float, float] = SPLIT) -> NDArray[np.int8]:
    """0 train, 1 validation, 2 test for each row, drawn per game (episode or group code).

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


def split_of(rows: Transitions, seed: int) -> NDArray[np.int8]:
    """The 70/20/10 split of ``rows`` by their groups (else episodes)."""
    return split_by_game(rows.group if rows.group is not None else rows.episode, seed)


def network(config: NetworkConfig, inputs: int, outputs: int) -> Any:
    """The untrained torch module ``config`` describes."""
    nn = torch_module().nn
    layers: list[Any] = []
    width = inputs
    hidden = widths(config.hidden)
    for i, h in enumerate(hidden):
        layers += [nn.Linear(width, h), nn.ReLU()]
        if i < len(hidden) - 1 and config.dropout > 0:
            layers.append(nn.Dropout(config.dropout))
        width = h
    if config.batchnorm:
        layers.append(nn.BatchNorm1d(width))
    layers.append(nn.Linear(width, outputs))
    return nn.Sequential(*layers)


def layers_of(model: Any) -> list[Layer]:
    """A torch module of `network`'s as the numpy layers that play it (dropout is the
    identity at play)."""
    out = []
    for module in model:
        kind = type(module).__name__
        if kind == "Dropout":
            continue
        names = {"Linear": "linear", "ReLU": "relu", "BatchNorm1d": "batchnorm"}
        if kind not in names:
            raise LearnerError(f"network: a {kind} layer has no numpy twin")
        arrays = {k: v.detach().cpu().numpy().astype(np.float32)
                  for k, v in module.state_dict().items() if k != "num_batches_tracked"}
        out.append(Layer(names[kind], arrays, float(getattr(module, "eps", 1e-5))))
    return out


def train(config: NetworkConfig, rows: Transitions,
          progress: Callable[[str, int, int], None] | None = None, jobs: int = -1
          ) -> tuple[list[Layer], NDArray[np.float32], NDArray[np.float32], dict[str, Any]]:
    """Train on ``rows`` (states, moves, and ``legal`` where known); the layers, the
    standardisation and the figures (history, best epoch, the split, the test set's
    accuracy and loss)."""
    torch = torch_module()
    if jobs > 0:
        torch.set_num_threads(jobs)
    torch.manual_seed(config.seed)
    x, y = rows.state, rows.action
    part = split_of(rows, config.seed)
    n_moves = len(rows.action_names)
    masked = config.mask and rows.legal is not None
    allowed = rows.legal if masked and rows.legal is not None else \
        np.ones((len(y), n_moves), dtype=bool)
    if masked and not allowed[np.arange(len(y)), y].all():
        bad = int((~allowed[np.arange(len(y)), y]).sum())
        raise LearnerError(f"network: {bad} moves are not among the moves their states allow "
                           "(as the game's view reads them): is this the game's store? "
                           "(--no-mask trains without the mask)")
    train_rows = part == 0
    if not train_rows.any() or not (part == 1).any() or not (part == 2).any():
        groups = rows.group if rows.group is not None else rows.episode
        raise LearnerError(f"network: too few episodes to split 70/20/10 "
                           f"({len(np.unique(groups))} apart, episodes dealt the same cards "
                           "counted once)")
    mean = x[train_rows].mean(axis=0)
    std = x[train_rows].std(axis=0)
    std[std < 1e-6] = 1.0
    xn = ((x - mean) / std).astype(np.float32)
    model = network(config, x.shape[1], n_moves)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    tensors = {k: (torch.from_numpy(xn[part == k]), torch.from_numpy(y[part == k]),
                   torch.from_numpy(allowed[part == k])) for k in range(3)}
    del xn
    history: list[dict[str, Any]] = []
    generator = torch.Generator().manual_seed(config.seed)
    n_train = len(tensors[0][1])
    per_epoch = -(-n_train // config.batch_size)
    best: tuple[float, int, dict[str, Any]] = (-1.0, 0, {})
    for epoch in range(1, config.epochs + 1):
        started = time.perf_counter()

        def batches(done: int, epoch: int = epoch) -> None:
            if progress is not None:
                progress("batches trained", (epoch - 1) * per_epoch + done,
                         config.epochs * per_epoch)

        total_loss, correct = train_epoch(model, optimiser, tensors[0], config.batch_size,
                                          masked, generator, batches)
        val_loss, val_acc, _ = evaluate(model, tensors[1], masked)
        history.append({"epoch": epoch, "train_loss": total_loss / n_train,
                        "train_accuracy": correct / n_train, "val_loss": val_loss,
                        "val_accuracy": val_acc,
                        "seconds": round(time.perf_counter() - started, 3)})
        if config.keep_best and val_acc > best[0]:
            best = (val_acc, epoch, {k: v.detach().clone()
                                     for k, v in model.state_dict().items()})
    if config.keep_best:  # the weights of the best validation epoch, never the test set's
        model.load_state_dict(best[2])
    test_loss, test_acc, _ = evaluate(model, tensors[2], masked)
    figures = {
        "history": history, "best_epoch": best[1] or config.epochs,
        "test_accuracy": test_acc, "test_loss": test_loss, "split": list(SPLIT),
        "split_games": [len(np.unique(rows.episode[part == k])) for k in range(3)],
        "split_rows": [int((part == k).sum()) for k in range(3)],
    }
    return layers_of(model), mean.astype(np.float32), std.astype(np.float32), figures


def train_epoch(model: Any, optimiser: Any, data: tuple[Any, Any, Any], batch_size: int,
                mask: bool, generator: Any,
                progress: Callable[[int], None] | None = None) -> tuple[float, int]:
    """One pass over ``data`` (states, moves, allowed-move masks) in shuffled batches:
    the summed loss and the moves predicted right. ``progress`` hears the batches done."""
    torch = torch_module()
    x, y, allowed = data
    model.train()
    order = torch.randperm(len(y), generator=generator)
    total_loss, correct, done = 0.0, 0, 0
    for start in range(0, len(y), batch_size):
        idx = order[start:start + batch_size]
        done += 1
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
            progress(done)
    return total_loss, correct


def evaluate(model: Any, data: tuple[Any, Any, Any], mask: bool,
             batch: int = 65536) -> tuple[float, float, NDArray[np.int64]]:
    """The mean loss, the accuracy and the predicted moves of ``data``."""
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
