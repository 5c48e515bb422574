"""The play wing: what measures learned policies by playing them, above the policies and
the learners and below the command line.

- `batchrl.play.ablation`: which features a hero needs (``batchrl ablate``);
- `batchrl.play.experiments`: the thesis's experiments as library calls (the notebooks'
  data, heroes and sweeps);
- `batchrl.play.bench`: every learner on every game's datasets, normalized between
  random play and the best (``batchrl bench``).

Nothing under ``batchrl/games`` imports it: a game's own play face (its bots, its
evaluation) lives in its package.
"""
