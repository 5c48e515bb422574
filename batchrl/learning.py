"""Any learner on a store: what ``batchrl learn NAME`` runs, callable from a notebook.

`settings` picks the learner's config and the features it reads: each setting as given,
else the one the store's game recommends for this learner (``LearnFace.recommended``), else
the learner's default. `learn` reads the store's rows, fits, records what the policy was
made from (game, features, store and its digest, settings, times) and saves the model
file, named by everything that changes it.

>>> from batchrl.learners import get_learner
>>> bc = get_learner("bc")
>>> default_out("s", bc, bc.config(trees=10), ("hand_*",), (), ()).as_posix()
's/models/bc-trees10-features-hand_any.npz'
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import time
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from batchrl import __version__
from batchrl.filenames import inside, safe_name
from batchrl.games import GameError, game_for, seats_of
from batchrl.learners import Learner, LearnerError, get_learner
from batchrl.policy import FeatureView, ModelError, ViewedPolicy, policy_meta, renamed
from batchrl.records import check_writable
from batchrl.store import Store, Transitions
from batchrl.store.place import outputs_beside, recorded


def snapshot(opened: Store) -> tuple[Any, str]:
    """The store as a learner reads it (its summary and its data's digest), taken before
    the rows are read: an ingest that lands meanwhile is not recorded as read."""
    return opened.info(), store_digest(opened)


def model_meta(opened: Store, store: Path | str, *, feature_names: Sequence[str],
               action_names: Sequence[str], rows: int, params: Mapping[str, Any],
               history: Sequence[Any], started: float, learner: str | None = None,
               seen: tuple[Any, str] | None = None) -> dict[str, Any]:
    """What a model file records of how it was made: the store's game (``store`` as given,
    ``opened`` read; ``seen``, its `snapshot` when the rows were read), the features and
    actions, the data (its digest, rows and episodes), the settings, the learner's
    history and when and how long it took."""
    info, digest = seen if seen is not None else snapshot(opened)
    return {
        "game": info.game,
        "game_params": dict(opened.schema.game_params),
        **({"learner": learner} if learner is not None else {}),
        "feature_names": list(feature_names),
        "action_names": list(action_names),
        "store": recorded(store),
        "store_digest": digest,
        "rows": rows,
        "episodes": info.episodes,
        "params": dict(params),
        "history": list(history),
        "seconds": round(time.perf_counter() - started, 3),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "batchrl_version": __version__,
    }


def store_digest(store: Store) -> str:
    """One digest for the data a model saw: its sources' digests (their logs') and their
    parts' content digests (the rows themselves, checked as they are read), sorted."""
    joined = "\n".join(sorted(" ".join(filter(None, (s.digest, s.content_digest)))
                              for s in store.sources()))
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Settings:
    """A learner's config and the features it reads, with the line that says whose."""

    config: Any
    features: tuple[str, ...] | None
    drop: tuple[str, ...]
    said: str
    view: Mapping[str, Any] | None = None  # the game's view of the features (LearnFace.view)


def recommended_learner(store: Path | str) -> tuple[str, str]:
    """The learner the store's game recommends (`LearnFace.learner`) and the game's name;
    FQI for a store of a game this batchrl does not have."""
    schema = Store.open(store).schema
    try:
        game = game_for(schema.game, schema.game_params)
    except GameError:
        return "fqi", schema.game
    return game.learn.learner, game.name


def settings(learner: Learner, store: Path | str, given: Mapping[str, Any],
             features: tuple[str, ...] | None = None, drop: tuple[str, ...] | None = None,
             view: Mapping[str, Any] | None = None, views: bool = True) -> Settings:
    """The config for ``learner`` on ``store``: each of ``given`` (None: not given) as
    given, else the store's game's recommendation, else the learner's default.
    ``features`` and ``drop`` go together: either given, both are the user's. ``view``:
    the game's view options given (`batchrl.policy.FeatureView`), over the game's
    recommended view for the learner; columns the user chose read no recommended view,
    and ``views`` False reads none (ablation drops stored columns)."""
    opened = Store.open(store)
    opened.check(pages=False)
    schema = opened.schema
    game = params = None
    try:
        game = game_for(schema.game, schema.game_params)
        params = game.log.params_from_store(schema.game, schema.game_params)
        recommended, name = game.learn.settings_for(learner.name, params), game.name
    except GameError:
        recommended, name = {}, schema.game
    whose = f"{name}'s recommended settings" if recommended else f"{learner.name}'s defaults"
    if not recommended and game is not None and learner.settings_from is not None:
        recommended = game.learn.settings_for(learner.settings_from, params)
        if recommended:
            whose = f"{name}'s recommended settings for {learner.settings_from}"
    values = {k: v for k, v in recommended.items() if learner.takes(k)}
    asked = {k: v for k, v in given.items() if v is not None}  # EXPLICIT_NONE kept
    config = learner.config(**{**values, **asked})
    chosen = features is not None or drop is not None
    if chosen:
        features, drop = features or None, tuple(drop or ())
    else:
        features = tuple(recommended["features"]) if recommended.get("features") else None
        drop = tuple(recommended.get("drop") or ())
    record = _view(game, params, name, recommended.get("view"), view, chosen, views)
    shown = learner.describe(config)
    shown += f", features {','.join(features)}" if features else ""
    shown += f", drop {','.join(drop)}" if drop else ""
    shown += f", view {_said(record)}" if record else ""
    named = sorted([*asked, *(["features/drop"] if chosen else []),
                    *(["view"] if view else [])])
    source = whose if not named else f"{whose}, with {', '.join(named)} as given"
    return Settings(config, features, drop, f"settings: {shown} ({source})", record)


def _view(game: Any, params: Any, name: str, recommended: Any,
          given: Mapping[str, Any] | None, columns: bool, views: bool
          ) -> dict[str, Any] | None:
    """The view's record: the options given over the recommended ones, checked by the
    game (None: no view)."""
    if given and (columns or not views):
        raise LearnerError("a view of the game's features reads its own columns: give "
                           "either its options or --features/--drop" if views else
                           "ablation drops stored features, which a view reads whole: "
                           "give no view options")
    if not given and (columns or not views):
        return None
    options = {**(dict(recommended) if isinstance(recommended, Mapping) else {}),
               **dict(given or {})}
    if not options:
        return None
    if game is None:
        raise LearnerError(f"{name} is not a game this batchrl knows: it has no views")
    try:
        made = game.learn.view(options, params)
    except GameError as exc:
        raise LearnerError(str(exc)) from None
    return None if made is None else dict(made.record())


def _said(record: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in record.items())


def default_out(store: Path | str, learner: Learner, config: Any,
                features: Sequence[str] | None, drop: Sequence[str],
                players: Sequence[str], view: str = "") -> Path:
    """``STORE/models/NAME.npz``: the learner's own name for the model
    (`Learner.file_name`), else its name and every setting that is not the learner's
    default, and the features, view (its tag) and players chosen, so two runs that make
    different models never share a file."""
    named = learner.file_name(config, features, drop, players, view)
    if named is None:
        named = settings_name(learner, config, features, drop, players, view)
    return inside(outputs_beside(store) / "models", named + ".npz")


def settings_name(learner: Learner, config: Any, features: Sequence[str] | None,
                  drop: Sequence[str], players: Sequence[str], view: str = "") -> str:
    """A name that differs wherever the model would: the learner's, each setting that is
    not its default, the features, view and players chosen (``bc-trees10-drop-pv``).
    What a caller that makes many models at once (an ablation's heroes) names them by.

    >>> from batchrl.learners import get_learner
    >>> fqi = get_learner("fqi")
    >>> settings_name(fqi, fqi.config(trees=3, fast=True), None, ("pv",), ())
    'fqi-trees3-freeze_after0-drop-pv'
    """
    parts = [learner.name]
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if value != f.default:
            parts.append(f"{f.name}{safe_name(str(value).replace(',', 'x'))}")
    parts += [f"features-{safe_name(','.join(features))}"] if features else []
    parts += [f"drop-{safe_name(','.join(drop))}"] if drop else []
    parts += [safe_name(view)] if view else []
    parts += [f"player-{safe_name(p)}" for p in players]
    return "-".join(parts)


def model_params(chosen: Settings, players: Sequence[str],
                 view: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a model file records of the settings that made it (``meta["params"]``)."""
    return {**dataclasses.asdict(chosen.config),
            "features": list(chosen.features) if chosen.features else None,
            "drop": list(chosen.drop), "players": list(players), "view": view}


def refuse_other_model(out: Path, params: Mapping[str, Any]) -> None:
    """A `ValueError` where the model at ``out`` (a default name: it may not hold every
    setting) was made with other settings than ``params``: a run must not replace a
    model it did not make again, and that model's name would then lie."""
    if not out.is_file():
        return
    try:
        made = policy_meta(out).get("params") or {}
    except (ModelError, ValueError, OSError):
        return  # not a model this reads: replaced, as before

    def same(value: Any) -> Any:
        return list(value) if isinstance(value, (list, tuple)) else value

    other = [f"{k} {made.get(k)!r} (this run: {params[k]!r})" for k in params
             if k in made and same(made[k]) != same(params[k])]
    if other:
        raise ValueError(f"{out} holds a model made with other settings: "
                         f"{'; '.join(other)}. Give --out for this one, or remove that "
                         "model first")


def checkpoint_record(store: Store, players: Sequence[str]) -> dict[str, Any]:
    """What a learner's checkpoint records of the data beyond the rows it sees: the store's
    game and sources (each log's sha256, rows and ingest time: a log added, removed or
    re-ingested changes it) and the players chosen; a resume on other data is refused."""
    return {"game": store.schema.game, "game_params": dict(store.schema.game_params),
            "sources": {s.path: {"sha256": s.digest[:16], "rows": s.rows,
                                 "ingested_at": s.ingested_at} for s in store.sources()},
            "players": list(players)}


def checkpoints_of(out: Path) -> Path:
    """Where a learner with checkpoints keeps them for the model ``out``."""
    return out.with_name(out.name + ".ckpt")


def view_of(opened: Store, chosen: Settings) -> FeatureView | None:
    """The game's view of the store's features the settings name (None: none)."""
    if chosen.view is None:
        return None
    game = game_for(opened.schema.game, opened.schema.game_params)
    return game.learn.view(chosen.view, game.log.params_from_store(opened.schema.game,
                                                         opened.schema.game_params))


def model_path(learner: Learner, store: Path | str, chosen: Settings,
               players: Sequence[str] = (), out: Path | str | None = None) -> Path:
    """Where `learn` puts the model of these settings (``out``, else `default_out`, the
    view's tag included)."""
    view = None if out is not None else view_of(Store.open(store), chosen)
    return _placed(learner, store, chosen, players, view, out)


def _placed(learner: Learner, store: Path | str, chosen: Settings, players: Sequence[str],
            view: FeatureView | None, out: Path | str | None) -> Path:
    """``out``, else the default name of the settings and the view's tag."""
    if out is not None:
        return Path(out)
    return default_out(store, learner, chosen.config, chosen.features, chosen.drop, players,
                       view.tag if view is not None else "")


def learn(learner: Learner, store: Path | str, chosen: Settings, *,
          players: tuple[str, ...] = (), jobs: int = -1, out: Path | str | None = None,
          progress: Callable[[str, int, int], None] | None = None,
          on_iteration: Callable[[dict[str, Any]], None] | None = None,
          **run: Any) -> tuple[Path, Any]:
    """Fit ``learner`` on the store's rows and save its policy.

    Args:
        learner: the learner (`batchrl.learners.get_learner`).
        store: the store's directory or URL.
        chosen: its config and the features it reads (`settings`).
        players: learn from these players' decisions only (() all).
        jobs: worker threads (-1: every core).
        out: the model file (None: `default_out`; a model there made with other
            settings is refused, not replaced).
        progress: hears how far the fit is, ``(what, done, of)``.
        on_iteration: hears each entry of a learner's history as it is made (a learner
            with a ``history_header``).
        **run: the learner's run-time options (`batchrl.learners.RunOption`), as given.

    Returns:
        Where the model went, and the policy (playing through the game's view, if the
        settings name one: `batchrl.policy.ViewedPolicy`).
    """
    resume = bool(run.get("resume"))
    if resume and not learner.checkpoints:
        raise LearnerError(f"{learner.name} keeps no checkpoints: there is nothing to resume")
    opened = Store.open(store)
    opened.check()  # every part sound and of store.json's game; each page checked as read
    view = view_of(opened, chosen)
    record = None if view is None else dict(view.record())
    params = model_params(chosen, players, record)
    named = out is None
    out = check_writable(_placed(learner, store, chosen, players, view, out), "--out")
    if named and not resume:  # before the rows are read: at once
        refuse_other_model(out, params)
    seen = snapshot(opened)  # the store as read: an ingest landing meanwhile is not it
    seats = seats_of(opened.schema.game, opened.schema.game_params)
    if view is not None:
        held = [opened.arrays(features=view.columns, players=players, seats=seats)]
    else:
        held = [opened.arrays(features=chosen.features, drop=chosen.drop, players=players,
                              seats=seats)]
    rows = len(held[0])
    if not rows:
        raise ValueError(f"store {store} has no rows: ingest logs first")
    if learner.holds_out:
        held[0] = dataclasses.replace(held[0], group=deal_groups(opened, held[0], players))
    if view is not None:
        held.append(through_view(view, held.pop(), learner.uses_next_state))
    extra = dict(run)
    checkpoints = checkpoints_of(out)
    if learner.checkpoints:
        if resume and not checkpoints.exists() and out.exists():
            raise ValueError(f"--resume: the run is finished, its model is {out}; run "
                             "without --resume to train it again")
        extra.update(checkpoints=checkpoints,
                     checkpoint_data=checkpoint_record(opened, players))
    if on_iteration is not None and learner.history_header is not None:
        extra["on_iteration"] = on_iteration
    started = time.perf_counter()
    # the learner takes the rows from ``held``: they can go before the fit ends
    policy = learner.fit(chosen.config, held.pop, progress=progress, jobs=jobs, **extra)
    if not isinstance(policy.meta, MutableMapping):
        raise LearnerError(f"{learner.name}: its policy's meta is a "
                           f"{type(policy.meta).__name__}; a learned policy keeps its metadata "
                           "in a dict that its save writes")
    policy.meta.update(model_meta(
        opened, store, learner=learner.name, feature_names=policy.feature_names,
        action_names=policy.action_names, rows=rows, params=params,
        history=policy.meta.get("history", []), started=started, seen=seen))
    if record is not None:
        policy.meta["view"] = record
    if policy.meta.get("store") != recorded(store):
        raise LearnerError(f"{learner.name}: its policy's meta did not keep what was recorded "
                           "(a learned policy's meta must be the dict its save writes)")
    path: Path = policy.save(out)
    if learner.checkpoints:
        shutil.rmtree(checkpoints, ignore_errors=True)
    return path, policy if view is None else ViewedPolicy(policy, view)


def train(learner: str | Learner, store: Path | str, *,
          features: tuple[str, ...] | None = None, drop: tuple[str, ...] | None = None,
          players: tuple[str, ...] = (), jobs: int = -1, out: Path | None = None,
          progress: Callable[[str, int, int], None] | None = None,
          on_iteration: Callable[[dict[str, Any]], None] | None = None,
          **given: Any) -> tuple[Path, Any]:
    """`settings` and `learn` in one call: what ``batchrl learn NAME`` runs, for a notebook
    (``train("fqi", "datasets/store", trees=50, fast=True)``).

    Args:
        learner: the learner or its name.
        store: the store's directory or URL.
        features: the features it reads (shell patterns; None: the game's
            recommendation).
        drop: the features it leaves out (None: the game's recommendation).
        players: learn from these players' decisions only (() all).
        jobs: worker threads (-1: every core).
        out: the model file (None: `default_out`).
        progress: hears how far the fit is, ``(what, done, of)``.
        on_iteration: hears each entry of the learner's history as it is made.
        **given: its settings (the others: the game's recommendation, else the
            learner's defaults) and its run-time options (FQI's ``resume``,
            ``scheduler``).

    Returns:
        Where the model went, and the policy.
    """
    chosen_learner = get_learner(learner) if isinstance(learner, str) else learner
    run_names = {option.name for option in chosen_learner.run_options}
    run = {k: v for k, v in given.items() if k in run_names}
    chosen = settings(chosen_learner, store, {k: v for k, v in given.items()
                                              if k not in run_names}, features, drop)
    return learn(chosen_learner, store, chosen, players=players, jobs=jobs, out=out,
                 progress=progress, on_iteration=on_iteration, **run)


def deal_groups(opened: Store, t: Transitions, players: Sequence[str]
                ) -> NDArray[np.int64] | None:
    """One code per row for its episode's group: episodes dealt the same cards (a
    store's ``deal`` column; Eger et al.'s seeds repeat) share one, so a held-out split
    never has a deal on both sides. None for a store that records no deals."""
    if "deal" not in opened.schema.audit_columns:
        return None
    deal = opened.audit("deal", players)
    own = np.char.add("game:", t.episode.astype(str)).astype(object)
    groups = np.where(deal == "", own, deal)
    _, codes = np.unique(groups.astype(str), return_inverse=True)
    return codes.astype(np.int64)


def through_view(view: FeatureView, t: Transitions, next_states: bool = True) -> Transitions:
    """``t`` as ``view`` reads it: its inputs for the states, the moves (and legal masks)
    renamed into the view's numbering, ``legal`` the moves each state could allow (the
    view's reading of them, else the store's record). Without
    ``next_states`` (a learner that reads none) the next states are left out (no columns).
    """
    stored = t.state if tuple(t.feature_names) == tuple(view.columns) else \
        t.state[:, [t.feature_names.index(c) for c in view.columns]]
    inputs, order = view.read(stored)
    possible = view.possible(stored)  # the view's reading; else the store's record
    if possible is None and t.legal is not None:
        possible = t.legal
    action = t.action if order is None else \
        np.take_along_axis(order, t.action[:, None], axis=1)[:, 0].astype(np.int64)
    if next_states:
        following = np.asarray(t.next_state, dtype=np.float32)
        if stored is not t.state:
            following = following[:, [t.feature_names.index(c) for c in view.columns]]
        next_state, next_order = view.read(following)
        next_legal = renamed(t.next_legal, next_order)
    else:
        next_state, next_legal = np.zeros((len(t), 0), dtype=np.float32), t.next_legal
    return dataclasses.replace(
        t, state=inputs, action=action, next_state=next_state,
        next_legal=next_legal, legal=None if possible is None else renamed(possible, order),
        feature_names=tuple(view.input_names))
