"""Shared by the Hanabi tests."""

from dataclasses import replace

from batchrl.games.hanabi.rules import is_terminal, new_game, step


def midgame_states(rng, bot, games, most_moves):
    """One state per game, ``bot`` having played a random number (< ``most_moves``) of
    moves of it; games over by then give none."""
    for _ in range(games):
        s = new_game(rng)
        for _ in range(int(rng.integers(0, most_moves))):
            if is_terminal(s):
                break
            s = step(s, bot.act(s))
        if not is_terminal(s):
            yield s


def swap_unseen_own_cards(state):
    """``state`` with two cards of the player to act swapped where nothing it may know
    (hints, touches) tells them apart; None when no such pair exists. A player's
    decisions and features must not change under this swap."""
    me = state.current
    hand, known, clued = list(state.hands[me]), state.known[me], state.clued[me]
    pairs = [(i, j) for i in range(len(hand)) for j in range(i + 1, len(hand))
             if known[i] == known[j] and clued[i] == clued[j] and hand[i] != hand[j]]
    if not pairs:
        return None
    i, j = pairs[0]
    hand[i], hand[j] = hand[j], hand[i]
    return replace(state, hands=tuple(tuple(hand) if q == me else h
                                      for q, h in enumerate(state.hands)))
