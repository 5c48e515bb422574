"""batchrl: offline reinforcement learning from card-game logs."""

from typing import Any

__version__ = "0.1.0"


def env(name: str, **kwargs: Any) -> Any:
    """The registered game ``name`` as a PettingZoo AEC environment, or with
    ``opponents=[...]`` one seat of it as a Gymnasium environment (a one-player game:
    ``gym=True``; see ``batchrl.envs``; needs the ``envs`` extra)."""
    from batchrl.envs import make  # here: `import batchrl` loads no game until asked

    return make(name, **kwargs)
