"""batchrl's replay of PHH hands against pokerkit's, hand by hand: shared by
``tests/parsers/test_phh.py`` (one Pluribus session) and ``python
benchmarks/phh_ingest.py --cross-check`` (all 10,000 hands).

For each hand, three results per seat: the log's (``finishing_stacks −
starting_stacks``), batchrl's (the hold'em rules' replay, `check_hands`) and pokerkit's
(its final state's stacks). batchrl must give the log's on every hand; pokerkit is told
apart where it gives another (an odd chip of a split pot, which the logs pay in halves
and pokerkit gives to one seat).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from batchrl.games.holdem.records import LoggedHand
from batchrl.games.holdem.transitions import check_hands
from parsers.phh import phh_files, read_phh


@dataclass
class CrossCheck:
    hands: int = 0
    batchrl_differs: list[str] = field(default_factory=list)  # hand, and why
    pokerkit_differs: list[str] = field(default_factory=list)  # hands pokerkit pays otherwise


def cross_check(folder: Path) -> CrossCheck:
    from pokerkit import HandHistory  # the test extra's: only the cross-check reads it

    out = CrossCheck()
    for path in phh_files(folder):
        (hand,) = read_phh(path)
        assert isinstance(hand, LoggedHand) and hand.game is not None, hand
        out.hands += 1
        _, rejected = check_hands(hand.game, [hand])
        if rejected:
            out.batchrl_differs.append(f"{path}: {rejected[0][1]}")
        with path.open("rb") as f:
            history = HandHistory.load(f)
        final = list(history)[-1].stacks
        theirs = [float(b) - float(a) for a, b in zip(history.starting_stacks, final,
                                                      strict=True)]
        if any(abs(t - p) > 1e-9 for t, p in zip(theirs, hand.payoffs, strict=True)):
            out.pokerkit_differs.append(str(path.relative_to(folder)))
    return out
