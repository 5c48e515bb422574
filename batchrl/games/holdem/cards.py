"""Cards as small integers, in the ACPC server's numbering.

A card is ``rank * 4 + suit`` with ranks ``23456789TJQKA`` (0..12) and suits
``cdhs`` (0..3), so ``2c`` is 0 and ``As`` is 51.

>>> parse_card("As"), card_str(0)
(51, '2c')
>>> parse_cards("8hTd")
(26, 33)
"""

from __future__ import annotations

from batchrl.records import shown

RANKS = "23456789TJQKA"
SUITS = "cdhs"
N_CARDS = 52

_RANK_OF = {c: i for i, c in enumerate(RANKS)}
_SUIT_OF = {c: i for i, c in enumerate(SUITS)}
_CARD_OF = {r + s: _RANK_OF[r] * 4 + _SUIT_OF[s] for r in RANKS for s in SUITS}
_STR_OF = {v: k for k, v in _CARD_OF.items()}


def parse_card(text: str) -> int:
    """One card, such as ``"Td"``; raises ``ValueError`` on anything else."""
    try:
        return _CARD_OF[text]
    except KeyError:
        raise ValueError(f"not a card: {shown(text)} (want rank {RANKS} then suit "
                         f"{SUITS})") from None


def parse_cards(text: str) -> tuple[int, ...]:
    """A run of cards written together, such as ``"KsJcJh"``."""
    if len(text) % 2:
        raise ValueError(f"not a run of cards: {shown(text)} (odd length)")
    try:
        return tuple([_CARD_OF[text[i : i + 2]] for i in range(0, len(text), 2)])
    except KeyError as exc:
        raise ValueError(f"not a card: {exc.args[0]!r} (want rank {RANKS} then suit {SUITS})"
                         ) from None


def card_str(card: int) -> str:
    return _STR_OF[card]


def cards_str(cards: tuple[int, ...] | list[int]) -> str:
    return "".join(_STR_OF[c] for c in cards)
