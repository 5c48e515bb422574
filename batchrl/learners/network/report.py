"""What ``batchrl imitate`` shows of a trained network: the test set's per-move
precision, recall and F1 (the report's Figure 5), the curves of its epochs (PNG, where
matplotlib is installed) and every figure (JSON) beside the model file."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl.records import check_writable


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


def confusion(truth: NDArray[np.int64], predicted: NDArray[np.int64],
              n: int) -> NDArray[np.int64]:
    """The (truth, predicted) table of ``n`` classes."""
    out = np.zeros((n, n), dtype=np.int64)
    np.add.at(out, (truth, predicted), 1)
    return out


def table(report: Sequence[Mapping[str, Any]], accuracy: float) -> str:
    """The per-class report as the report's Figure 5, with the averages."""
    lines = [f"{'':>14} {'precision':>9} {'recall':>7} {'f1-score':>8} {'support':>8}"]
    for r in report:
        lines.append(f"{r['name']:>14} {r['precision']:>9.2f} {r['recall']:>7.2f} "
                     f"{r['f1']:>8.2f} {r['support']:>8,}")
    total = sum(r["support"] for r in report)
    macro = [np.mean([r[k] for r in report]) for k in ("precision", "recall", "f1")]
    weighted = [sum(r[k] * r["support"] for r in report) / max(total, 1)
                for k in ("precision", "recall", "f1")]
    lines.append(f"{'accuracy':>14} {'':>9} {'':>7} {accuracy:>8.3f} {total:>8,}")
    lines.append(f"{'macro avg':>14} {macro[0]:>9.2f} {macro[1]:>7.2f} {macro[2]:>8.2f} "
                 f"{total:>8,}")
    lines.append(f"{'weighted avg':>14} {weighted[0]:>9.2f} {weighted[1]:>7.2f} "
                 f"{weighted[2]:>8.2f} {total:>8,}")
    return "\n".join(lines)


def epochs_table(history: Sequence[Mapping[str, Any]]) -> str:
    """Each epoch's loss and accuracy, training and validation."""
    lines = [f"{'epoch':>5} {'train loss':>10} {'train acc':>9} {'val loss':>9} "
             f"{'val acc':>8} {'seconds':>8}"]
    for e in history:
        lines.append(f"{e['epoch']:>5} {e['train_loss']:>10.4f} {e['train_accuracy']:>9.2%} "
                     f"{e['val_loss']:>9.4f} {e['val_accuracy']:>8.2%} {e['seconds']:>8.1f}")
    return "\n".join(lines)


def can_plot() -> bool:
    """Whether matplotlib is there to draw the curves (the imitation extra brings it)."""
    return importlib.util.find_spec("matplotlib") is not None


def write_figures(model: Path, figures: Mapping[str, Any]) -> tuple[Path | None, Path]:
    """Every figure (JSON) and the loss and accuracy curves (PNG; None where matplotlib is
    missing: `can_plot`) beside the model file."""
    out = check_writable(model.with_suffix(".json"))
    out.write_text(json.dumps({"model": str(model), **figures}, indent=1))
    if not can_plot():
        return None, out
    import matplotlib  # matplotlib: optional, loaded only to draw

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after use("Agg"): no display needed

    history = figures["history"]
    epochs = [e["epoch"] for e in history]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    left.plot(epochs, [e["train_loss"] for e in history], label="training")
    left.plot(epochs, [e["val_loss"] for e in history], label="validation")
    left.set(xlabel="epoch", ylabel="cross-entropy", title="loss")
    right.plot(epochs, [e["train_accuracy"] for e in history], label="training")
    right.plot(epochs, [e["val_accuracy"] for e in history], label="validation")
    right.axhline(figures["test_accuracy"], color="grey", ls=":",
                  label=f"test {figures['test_accuracy']:.1%}")
    right.set(xlabel="epoch", ylabel="accuracy", title="accuracy (split by episode)")
    for ax in (left, right):
        ax.legend()
        ax.grid(alpha=0.3)
    fig.tight_layout()
    plot = check_writable(model.with_suffix(".png"))
    fig.savefig(plot, dpi=110)
    plt.close(fig)
    return plot, out
