"""The focus convention's facts, read off the 210 stored numbers, agree with what the
convention bot computes from the full state."""

import numpy as np

from batchrl.games.hanabi import bots
from batchrl.games.hanabi.focus import FACT_NAMES, convention_facts
from batchrl.games.hanabi.knowledge import (
    distributions,
    encode,
    hint_features,
    playable,
    unseen,
    useless,
)
from batchrl.games.hanabi.rules import is_terminal, new_game, step
from batchrl.games.hanabi.symmetry import relabel_state


def _facts(state):
    me = state.current
    x = np.concatenate([encode(state, me), hint_features(state, me)])[None]
    return dict(zip(FACT_NAMES, convention_facts(x)[0].astype(bool), strict=True))


def _states(games, seed):
    rng = np.random.default_rng(seed)
    players = (bots.ConventionBot(), bots.SimpleBot(rng))
    for _ in range(games):
        s = new_game(rng)
        while not is_terminal(s):
            yield s
            s = step(s, players[s.current].act(s))


def test_each_fact_is_what_the_bot_computes_from_the_whole_state():
    teacher = bots.ConventionBot()
    checked = {"focus": 0, "misread": 0, "hintable": 0, "critical": 0, "own": 0}
    for s in _states(12, seed=3):
        f, me, partner = _facts(s), s.current, 1 - s.current
        hand = s.hands[partner]
        play_hints = set(bots._play_hints(s)) if s.hints else set()
        for slot in range(5):
            if slot >= len(hand):
                assert not any(f[f"other{slot}_{n}"] for n in ("plays_now", "chop", "critical"))
                continue
            for kind, hint in zip(("rank", "colour"), bots._hints_touching(s, partner, slot),
                                  strict=True):
                assert f[f"other{slot}_{kind}_hint_focus"] == \
                    (bots._focus_after(s, partner, hint) == slot)
                checked["focus"] += 1
                if s.hints:
                    assert f[f"other{slot}_{kind}_hint_misread"] == \
                        teacher._misread(s, partner, hint)
                    checked["misread"] += 1
            if s.hints:
                assert f[f"other{slot}_hintable_play"] == any(
                    h in play_hints and bots._focus_after(s, partner, h) == slot
                    for h in bots._hints_touching(s, partner, slot))
                checked["hintable"] += 1
        untouched = [i for i, c in enumerate(s.clued[partner]) if not c]
        if untouched:
            c = hand[untouched[0]]
            assert f[f"other{untouched[0]}_chop"]
            last_copy = unseen(s, me)[c // 5, c % 5] - 1 <= 0  # as the bot's save reads it
            assert f[f"other{untouched[0]}_critical"] == \
                (last_copy and not useless(s)[c // 5, c % 5])
            checked["critical"] += 1
        if s.hint_target == me and s.hint_focus:
            assert f[f"current{max(s.hint_focus)}_focus"]
            assert sum(f[f"current{i}_focus"] for i in range(5)) == 1
            checked["own"] += 1
        else:
            assert not any(f[f"current{i}_focus"] for i in range(5))
        _check_the_plain_facts(s, f)
    assert min(checked.values()) > 50, checked


def _check_the_plain_facts(s, f):
    """The facts read off one card or the table: each slot's against the state."""
    me, partner = s.current, 1 - s.current
    play, dead = playable(s), useless(s)
    mine = distributions(unseen(s, me), s.known[me])
    theirs = distributions(unseen(s, None), s.known[partner])
    own_chop = next((i for i, c in enumerate(s.clued[me]) if not c), None)
    their_chop = next((i for i, c in enumerate(s.clued[partner]) if not c), None)
    for i in range(5):
        held = i < len(s.hands[me])
        p = (mine[i] * play).sum() if held else 0.0
        u = (mine[i] * dead).sum() if held else 0.0
        assert f[f"current{i}_maybe_playable"] == (held and p > 1e-6)
        assert f[f"current{i}_known_playable"] == (held and p > 0.999)
        assert f[f"current{i}_known_useless"] == (held and u > 0.999)
        assert f[f"current{i}_chop"] == (i == own_chop)
        hand = s.hands[partner]
        if i >= len(hand):
            assert not any(v for k, v in f.items() if k.startswith(f"other{i}_"))
            continue
        c = hand[i]
        assert f[f"other{i}_plays_now"] == bool(play[c // 5, c % 5])
        assert f[f"other{i}_known_playable"] == ((theirs[i] * play).sum() > 0.999)
        assert f[f"other{i}_touched_copy"] == any(
            hand[j] == c and s.clued[partner][j] for j in range(len(hand)) if j != i)
        assert f[f"other{i}_chop"] == (i == their_chop)
    assert f["no_hints"] == (s.hints == 0) and f["all_hints"] == (s.hints == 8)
    assert f["deck_empty"] == (len(s.deck) == 0)


def test_the_facts_ignore_colour_names():
    rng = np.random.default_rng(9)
    for n, s in enumerate(_states(3, seed=5)):
        if n % 7:
            continue
        sigma = [int(v) for v in rng.permutation(5)]
        assert _facts(s) == _facts(relabel_state(s, sigma))
