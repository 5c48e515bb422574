"""The ``batchrl`` command: a click group (`main`) whose commands are thin layers over the
library, one module per family — ``main`` (ingest, info, policy, the fqi alias), ``learn``
(learn, ablate, imitate), ``play`` (generate, evaluate, solve), ``export`` — sharing ``common``
(the store and worker-count options, each game's own options, progress). Nothing below the
commands imports them."""

from batchrl.cli.main import main

__all__ = ["main"]
