"""Replaying recorded Hanabi games through the rules: every move must be legal."""

from __future__ import annotations

from batchrl.games.hanabi.rules import IllegalMove, State, deal, hand_size, step


def replay_live(game: object) -> tuple[list[State], list[int]]:
    """The states of a hanab.live game (``parsers.hanablive.LiveGame``), first to last, and
    the moves between them (one fewer).

    Raises ``parsers.hanablive.HanabLiveError`` naming the action that breaks a rule.
    """
    from parsers.hanablive import HanabLiveError, LiveGame, to_action

    if not isinstance(game, LiveGame):
        raise TypeError("replay_live takes a parsers.hanablive.LiveGame")
    players = len(game.players)
    if not 2 <= players <= 5:
        raise HanabLiveError(f"{game.source}: {players} players: Hanabi is for 2 to 5")
    size = hand_size(players)
    state = deal(game.deck, players)
    # which deck card sits in each slot, in the rules' slot order (a draw goes last)
    slots = [list(range(p * size, (p + 1) * size)) for p in range(players)]
    next_card = players * size
    states, actions = [state], []
    for number, move in enumerate(game.actions, 1):
        seat = state.current
        try:
            action = to_action(move, seat, players, slots[seat])
            after = step(state, action)
        except (HanabLiveError, IllegalMove) as exc:
            raise HanabLiveError(f"{game.source}: action {number} ({move}): {exc}") from None
        if action < 10:
            slots[seat].pop(action % 5)
            if len(after.hands[seat]) > len(slots[seat]):
                slots[seat].append(next_card)
                next_card += 1
        state = after
        states.append(state)
        actions.append(action)
    return states, actions
