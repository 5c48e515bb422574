"""The learners: one package each under ``batchrl/learners/``, registered by name.

A learner turns a store's transitions into a policy (`batchrl.policy.Policy`). It is a
`Learner` object, exported by its package as ``LEARNER``:

- ``name``: what ``batchrl learn NAME`` calls it; ``kind``: what its model files say they
  are (the loader, `batchrl.policy.load_policy`, hands a file of that kind to it);
- ``Config``: a frozen dataclass of hyperparameters only, each field's ``metadata["help"]``
  its command-line help (``batchrl learn NAME --help`` is made from it);
- ``fit(config, data, progress=…, jobs=…)``: the policy learned from ``data`` (a
  `batchrl.store.Transitions`); run-time things (progress, threads, checkpoints, a
  cluster) are arguments, never config;
- ``read(path)``: a policy back from one of its model files (no pickles: arrays and JSON,
  `batchrl.modelfile`), and ``meta_of(path)`` its metadata alone.

A game says which settings suit it as data (``LearnFace.recommended[NAME]``) and holds no
learner code; a learner never imports a game package. Another package, a notebook or a
test adds a learner with `register_learner`; nothing else in batchrl changes.

>>> "bc" in LEARNERS and LEARNERS["bc"].kind == "bc"
True
>>> get_learner("sarsa")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
batchrl.learners.base.LearnerError: no learner 'sarsa': the learners are bc, d3rlpy, fqi...
"""

from __future__ import annotations

from pathlib import Path

from batchrl import modelfile
from batchrl.learners.base import (
    EXPLICIT_NONE,
    Learner,
    LearnerError,
    RunOption,
    ScoredPolicy,
)
from batchrl.registry import Registry

__all__ = ["EXPLICIT_NONE", "LEARNERS", "Learner", "LearnerError", "RunOption", "ScoredPolicy",
           "get_learner", "learner_for_kind", "register_learner", "unregister_learner"]


def _same_kind(held: Learner, new: Learner) -> str | None:
    """Two learners may not read the same kind of model file."""
    return (f"a learner whose model files are of kind {new.kind!r} is registered already "
            f"({held.name})") if held.kind == new.kind else None


# the registry imports each learner package below on first use
__lazy_imports__ = ("batchrl.learners.*",)
LEARNERS: Registry[Learner] = Registry(Learner, "LEARNER", __name__, __path__, "learner",
                                        LearnerError, _same_kind)


def register_learner(learner: Learner, replace: bool = False) -> Learner:
    """Add ``learner`` to ``LEARNERS``: ``batchrl learn`` offers it, and its model files play
    wherever a model does (``model:PATH``). `LearnerError` for a config the command line
    could not give, or a name or kind taken."""
    if isinstance(learner, Learner):
        learner.settings()  # refused here, not when a command lists the learners
    return LEARNERS.add(learner, replace)


def unregister_learner(name: str) -> None:
    LEARNERS.remove(name)


def get_learner(name: str) -> Learner:
    try:
        return LEARNERS[name]
    except KeyError:
        raise LearnerError(f"no learner {name!r}: the learners are "
                           f"{', '.join(LEARNERS)}") from None


def learner_for_kind(kind: str, path: str | Path = "a model file") -> Learner:
    """The learner whose model files are of ``kind``; `batchrl.modelfile.ModelError` (naming
    ``path``) when none is registered."""
    for learner in LEARNERS.values():
        if learner.kind == kind:
            return learner
    raise modelfile.ModelError(f"{path} is a {kind!r} model, which no registered learner "
                               f"reads (the learners: {', '.join(LEARNERS)})")
