"""One module per log format: text -> hands (or games), nothing else.

``READERS`` is the registry the ingest uses to find a line reader by format name;
Hanabi's formats are whole games per file (``HANABI_FORMATS``).
"""

from collections.abc import Iterable

from parsers.acpc import SNIFF_LINES, read_acpc, read_glassfrog
from parsers.acpc import sniff_format as sniff_acpc
from parsers.sette_mezzo import read_sette_mezzo
from parsers.tressette import read_transcript, read_tressette_for_ingest
from parsers.tressette import sniff as sniff_tressette

READERS = {"acpc": read_acpc, "glassfrog": read_glassfrog, "sette-mezzo": read_sette_mezzo,
           "tressette": read_tressette_for_ingest, "tressette-transcript": read_transcript}
# Hanabi sources are games (a file or a directory each), read by batchrl.games.hanabi.sources
HANABI_FORMATS = ("hanabi-json", "hanabi-eger", "hanablive")
FORMATS = ("auto", *READERS, *HANABI_FORMATS)


def sniff_format(lines: Iterable[str]) -> str | None:
    """The format of a log from its first lines, or None if no reader knows it."""
    head = [t for t in lines if t.strip()][:SNIFF_LINES]
    if head and head[0].lstrip().startswith("{") and '"opponent"' in head[0]:
        return "sette-mezzo"
    if fmt := sniff_tressette(head):
        return fmt
    return sniff_acpc(head)
