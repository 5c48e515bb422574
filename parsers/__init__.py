"""One module per log format: text -> hands, nothing else.

``READERS`` is the registry the ingest uses to find a reader by format name.
"""

from parsers.acpc import read_acpc, read_glassfrog

READERS = {"acpc": read_acpc, "glassfrog": read_glassfrog}
FORMATS = ("auto", *READERS)
