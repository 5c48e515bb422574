"""batchrl: offline reinforcement learning from card-game logs."""

__version__ = "0.1.0"
