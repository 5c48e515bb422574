"""One module per log format: text -> records (hands, games), nothing else.

Each module registers its formats with ``batchrl.games.register_format`` when it is
imported, naming the game the records are of; importing this package imports every
module in it, so adding a format is adding a module. Parsers import batchrl, never the
other way round (``batchrl.ingest``, on top of both, imports this package).
"""

import importlib
import pkgutil

__lazy_imports__ = ("parsers.*",)  # every module below, imported here by name

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
