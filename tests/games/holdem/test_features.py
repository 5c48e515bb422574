import numpy as np
from locations import SAMPLES

from batchrl.games.holdem import gamedef
from batchrl.games.holdem.features import betting_code, encode_many, feature_names
from batchrl.games.holdem.rules import deal, legal_actions, new_hand, step
from batchrl.ingest import IngestConfig, ingest
from batchrl.store import Store
from parsers.acpc import LoggedHand, read_acpc


def test_betting_codes_are_distinct_and_grow_with_length():
    sequences = ["", "c", "r", "cc", "cr", "rc", "rr", "crc", "rrr", "crrrc", "rrrrc"]
    codes = [betting_code(s) for s in sequences]
    assert len(set(codes)) == len(codes)
    assert betting_code(None) == 0 and codes[:7] == [1, 2, 3, 4, 5, 6, 7]
    by_length = sorted(zip(map(len, sequences), codes, strict=True))
    assert [c for _, c in by_length] == sorted(codes)


def test_stored_rows_come_from_the_one_encoder(tmp_path):
    """Every stored state equals what ``features.encode`` gives a policy in that spot."""
    log = SAMPLES / "random_vs_random.2p.limit.log"
    ingest(IngestConfig(paths=(log,), store=tmp_path / "s"))
    rows = Store.open(tmp_path / "s").to_pandas()
    game = gamedef.HEADS_UP_LIMIT
    states, seats, keys = [], [], []
    lines = log.read_text().splitlines()
    for hand in (r for r in read_acpc(lines, str(log)) if isinstance(r, LoggedHand)):
        s = deal(game, hand.hole, [c for g in hand.board for c in g])
        counts = [0, 0]
        for ch in hand.betting.replace("/", ""):
            states.append(s)
            seats.append(s.current)
            keys.append((hand.line, s.current, counts[s.current]))
            counts[s.current] += 1
            s = step(s, "fcr".index(ch))
    expected = encode_many(states, seats)
    stored = {(r.line, r.player, r.step): np.asarray(r.state) for r in rows.itertuples()}
    assert len(stored) == len(keys) == len(rows)
    for key, vector in zip(keys, expected, strict=True):
        np.testing.assert_array_equal(stored[key], vector)
    assert feature_names(game)[5] == "pv" and 0 < expected[:, 5].min() < expected[:, 5].max() <= 1


def test_a_heads_up_limit_bettings_features_are_remembered_per_game():
    """The thesis's features, worked out once per (game, betting, seat), are each state's
    own: for hands of two games whose bettings match but whose blinds differ, for every
    seat, dealt other cards, and asked again after the memory was emptied."""
    from batchrl.games.holdem import features  # (its memory is emptied below)

    rng = np.random.default_rng(4)
    games = [gamedef.HEADS_UP_LIMIT, gamedef.GLASSFROG_LIMIT]
    assert games[0].blind != games[1].blind
    asked = 0
    for _ in range(300):
        for game in games:
            state = new_hand(game, rng)
            while not state.finished:
                for seat in (0, 1):
                    fresh = features._thesis_features(state, seat)
                    for _ in range(2):  # the second from the memory
                        row = features.public_features(state, seat)
                        assert np.array_equal(row, fresh, equal_nan=True)
                        asked += 1
                state = step(state, int(rng.choice(legal_actions(state))))
        if len(features._ROWS) and asked % 7 == 0:
            features._forget_bettings()
    assert asked > 1000
    same = [features.public_features(deal(g, ((0, 1), (2, 3)), (4, 5, 6, 7, 8)), 1)
            for g in games]
    assert same[0] != same[1]  # the same (empty) betting, other blinds: another pot


def test_no_limit_bettings_features_are_remembered_per_game():
    """The features of no-limit and three-player games (stacks, all-ins, side pots),
    remembered per (game, betting, seat) as the thesis's are: each state's own, for games
    whose bettings match but whose stacks or seats differ, with raises of every size."""
    import dataclasses

    from batchrl.games.holdem import features  # (its memory is emptied below)
    from batchrl.games.holdem.rules import RAISE, raise_bounds

    rng = np.random.default_rng(5)
    short = dataclasses.replace(gamedef.HEADS_UP_NOLIMIT, name="short", stack=(900, 900))
    games = [gamedef.HEADS_UP_NOLIMIT, short, gamedef.THREE_PLAYER_NOLIMIT]
    asked = 0
    for hand in range(300):
        for game in games:
            state = new_hand(game, rng)
            while not state.finished:
                for seat in range(game.num_players):
                    fresh = features._general(state, seat)
                    for _ in range(2):  # the second from the memory
                        assert np.array_equal(features.public_features(state, seat), fresh,
                                              equal_nan=True)
                        asked += 1
                action = int(rng.choice(legal_actions(state)))
                bounds = raise_bounds(state) if action == RAISE else None
                size = int(rng.integers(bounds[0], bounds[1] + 1)) if bounds else 0
                state = step(state, action, size)
        if hand % 50 == 49:
            features._forget_bettings()
    assert asked > 3000
    opening = [features.public_features(deal(g, ((0, 1), (2, 3)), (4, 5, 6, 7, 8)), 0)
               for g in games[:2]]
    assert opening[0] != opening[1]  # the same (empty) betting, other stacks


def test_what_is_remembered_by_betting_is_each_games_own_and_bounded():
    """`memo.ByBetting`: per game object (two games alike are two games), the game kept
    while its values are (its id is not reused), and emptied whole when full."""
    import dataclasses
    import gc

    from batchrl.games.holdem.memo import ByBetting

    memory: ByBetting[str] = ByBetting(limit=3)
    game = gamedef.HEADS_UP_NOLIMIT
    twin = dataclasses.replace(game)
    assert twin == game and twin is not game
    memory.put(game, ("r300",), "a")
    memory.put(twin, ("r300",), "b")
    assert (memory.get(game, ("r300",)), memory.get(twin, ("r300",))) == ("a", "b")
    kept = id(twin)
    del twin
    gc.collect()
    assert any(g is not game and id(g) == kept  # held: no new game takes the id meanwhile
               for g, _ in memory._values.values())
    memory.put(game, ("c",), "c")
    assert len(memory) == 3
    memory.put(game, ("cc",), "d")  # full: emptied, then this one kept
    assert len(memory) == 1 and memory.get(game, ("r300",)) is None
    assert memory.get(game, ("cc",)) == "d"


def test_what_is_remembered_by_betting_goes_only_to_its_own_game_across_threads():
    """Threads that store and empty one memory at once (a small limit: it empties often)
    never get another game's value, though games come and go and ids are reused."""
    import dataclasses
    import sys
    import threading

    from batchrl.games.holdem.memo import ByBetting

    memory: ByBetting[int] = ByBetting(limit=64)
    wrong: list[tuple[int, int]] = []

    def work(seed: int) -> None:
        for i in range(3000):
            stack = 1000 + (seed * 3000 + i) % 997
            game = dataclasses.replace(gamedef.HEADS_UP_NOLIMIT, stack=(stack, stack))
            for _ in range(2):  # as the memories are used: looked up, stored if missing
                got = memory.get(game, ("c",))
                if got is None:
                    memory.put(game, ("c",), stack)
                elif got != stack:
                    wrong.append((got, stack))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns between any two steps
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert not wrong, wrong[:5]
