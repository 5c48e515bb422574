"""batchrl's replay of PHH hands against pokerkit's, hand by hand: shared by
``tests/parsers/test_phh.py`` (one Pluribus session) and ``python
benchmarks/phh_ingest.py --cross-check`` (all 10,000 hands).

For each no-limit hold'em hand (other variants passed over), three results per seat:
the log's (``finishing_stacks − starting_stacks``), batchrl's (the hold'em rules'
replay, `check_hands`) and pokerkit's (its final state's stacks). batchrl must give the
log's on every hand; pokerkit is told apart where it gives another (an odd chip of a
split pot, which the logs pay in halves and pokerkit gives to one seat). A hand that logs
no result is batchrl's replay against pokerkit's.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def cross_check(folder: Path, files: Sequence[Path] | None = None) -> CrossCheck:
    """The hands of ``folder``'s PHH files (its subfolders' too), or of ``files`` in it."""
    from pokerkit import HandHistory  # the test extra's: only the cross-check reads it

    out = CrossCheck()
    for path in phh_files(folder) if files is None else files:
        hands = [r for r in read_phh(path) if isinstance(r, LoggedHand)]
        if not hands:  # another variant
            continue
        (hand,) = hands
        assert hand.game is not None, hand
        out.hands += 1
        accepted, rejected = check_hands(hand.game, [hand])
        if rejected:
            out.batchrl_differs.append(f"{path}: {rejected[0][1]}")
            continue
        ours = accepted[0][0].payoffs  # the log's, or the rules' where it logs none
        with path.open("rb") as f:
            history = HandHistory.load(f)
        final = list(history)[-1].stacks
        theirs = [float(b) - float(a) for a, b in zip(history.starting_stacks, final,
                                                      strict=True)]
        if any(abs(t - p) > 1e-9 for t, p in zip(theirs, ours, strict=True)):
            out.pokerkit_differs.append(str(path.relative_to(folder)))
    return out
