"""Permalinks round-trip on every page, for every control the address holds (issue 46),
generated from the app itself rather than listed by hand.

Pages come from :data:`ui.navigation.PAGES`; a page's controls from
:func:`ui.state.linked_widgets`, which :func:`ui.state.persist` fills as the page draws every
widget it binds to a query parameter (plus the sidebar's model picker, ``model``). For each
page: set every such control to a valid value other than the one it has (a control that a
change reveals is set too), take the address the page wrote, open it in a fresh session, and
compare every control the first session shows. A control that a later change hid (another
view) gets a case of its own, so that none goes unchecked. The Probing page also switches
models (minilm-l6 → mpnet-base, and two models), whose layers are derived from the models.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from streamlit.testing.v1 import AppTest

from ui.navigation import PAGES

if TYPE_CHECKING:
    import numpy as np

REPO = Path(__file__).resolve().parents[2]
KINDS = (
    "multiselect",
    "selectbox",
    "radio",
    "select_slider",
    "slider",
    "number_input",
    "toggle",
    "checkbox",
    "text_area",
    "text_input",
)
MODELS = "models"  # the sidebar picker's session key; its query parameter is ``model``
Step = tuple[str, Any]  # (session key, value to set)


def _open(script: str, query: dict[str, str] | None = None) -> AppTest:
    """``script`` in a fresh session, opened at an address with ``query``."""
    at = AppTest.from_file(str(REPO / script), default_timeout=300)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, (script, query, at.exception)
    return at


def _find(at: AppTest, key: str):
    """The widget with session key ``key`` on the page now, or None."""
    for kind in KINDS:
        try:
            return getattr(at, kind)(key=key)
        except KeyError:
            continue
    return None


def _registry(at: AppTest) -> dict:
    """:func:`ui.state.linked_widgets` of the session (empty before the first run)."""
    state = at.session_state  # (no .get: AppTest's session state is a SafeSessionState)
    return state["_linked_widgets"] if "_linked_widgets" in state else {}  # noqa: SIM401


def _linked(at: AppTest) -> list[str]:
    """The controls bound to the address that the page shows now, in drawing order."""
    keys = [MODELS, *_registry(at)]
    return [k for k in keys if _find(at, k) is not None]


def _options(at: AppTest, key: str, widget) -> list:
    """The values the control takes: as the page declared them (``one_of``, a list's
    ``__contains__``), else each shown option read back through the widget's own
    ``format_func`` (an option's index, the text itself, or the text as a number)."""
    entry = _registry(at).get(key)
    if entry is not None and entry.options is not None:
        return list(entry.options)
    values = []
    for i, text in enumerate(widget.options):
        numeric = [int(text)] if text.lstrip("-").isdigit() else []
        candidates = [i, i - 1, None, text, *numeric]  # (a leading "none" shifts indices)
        found = [v for v in candidates if _shows_as(widget, v, text)]
        if not found:
            return []
        values.append(found[0])
    return values


def _shows_as(widget, value: Any, text: str) -> bool:
    try:
        return str(widget.format_func(value)) == text
    except Exception:  # a format_func for other values
        return False


def _other_text(text: str) -> str:
    """A different text that the box still takes: one line fewer for several, else the
    first letter's case changed."""
    lines = text.split("\n")
    if len(lines) > 2:
        return "\n".join(lines[:-1])
    if not text:
        return "cat"
    return text[0].swapcase() + text[1:]


def _new_value(at: AppTest, key: str) -> Any:
    """A valid value for ``key`` other than its current one."""
    widget = _find(at, key)
    kind, value = widget.type, widget.value
    if kind in {"toggle", "checkbox"}:
        return not value
    if kind in {"text_input", "text_area"}:
        return _other_text(value or "")
    if kind in {"slider", "number_input"} and not isinstance(value, list | tuple):
        step = widget.step or 1
        up = value + step
        return up if widget.max is None or up <= widget.max else value - step
    options = _options(at, key, widget)
    assert options, f"no options found for {key} ({kind})"
    if kind == "multiselect":
        chosen = [o for o in options if o not in value][:1] or options[:1]
        picked = options[:2] if len(options) > 2 else chosen
        return picked if sorted(picked, key=str) != sorted(value, key=str) else options[1:2]
    others = [o for o in options if o != value]
    assert others, f"{key} has no other option"
    return others[-1]  # the far end (the default is often the first)


def _set(at: AppTest, key: str, value: Any) -> None:
    """Set control ``key`` as a user would (typing into a text box), and run the page."""
    widget = _find(at, key)
    assert widget is not None, f"{key} is not on the page"
    if widget.type in {"text_input", "text_area"}:
        widget.input(value)
    else:
        widget.set_value(value)
    at.run()
    assert not at.exception, (key, value, at.exception)


def _values(at: AppTest, keys) -> dict[str, Any]:
    return {k: w.value for k in keys if (w := _find(at, k)) is not None}


def _address(at: AppTest) -> dict[str, str]:
    """The address as the last change left it (what a user copies then)."""
    return {k: at.query_params[k] for k in at.query_params}


def _round_trip(
    script: str, steps: list[Step], explore: bool, covered: set[str] | None = None
) -> tuple[AppTest, list[list[Step]]]:
    """Apply ``steps``; with ``explore``, then set every control not ``covered`` yet, one
    after another (those a change reveals too). A change that hides controls (a view control)
    is taken back; each of its values that reveals controls not covered yet becomes a branch
    (``steps`` plus that value) for a case of its own, and so does the change itself. Then
    open the address in a fresh session and compare every control the first shows (added to
    ``covered``). Returns the first session and the branches."""
    covered = set() if covered is None else covered
    at = _open(script)
    done = covered | {key for key, _ in steps}
    for key, value in steps:
        _set(at, key, value)
    branches: list[list[Step]] = []
    while explore:
        todo = [k for k in _linked(at) if k not in done and k != MODELS]
        if not todo:
            break
        key = todo[0]
        done.add(key)
        shown, old = set(_linked(at)), _find(at, key).value
        value = _new_value(at, key)
        _set(at, key, value)
        if shown - set(_linked(at)):  # it hid controls: a view control
            branches += _views(at, key, old, value, steps, done | shown)
            _set(at, key, old)
    link = _address(at)
    shown = _linked(at)
    before = _values(at, shown)
    fresh = _open(script, link)
    after = _values(fresh, shown)
    assert after == before, {
        "page": script,
        "steps": steps,
        "link": link,
        "differ": {k: (before[k], after.get(k)) for k in before if after.get(k) != before[k]},
    }
    covered |= set(shown)
    return at, branches


def _views(
    at: AppTest, key: str, old: Any, new: Any, steps: list[Step], known: set[str]
) -> list[list[Step]]:
    """Branches for view control ``key`` (now at ``new``): ``new`` itself, and each other
    value that reveals controls not ``known`` yet (every view of a page). ``known`` grows."""
    widget = _find(at, key)
    branches = [[*steps, (key, new)]]
    known |= set(_linked(at))
    if widget.type in {"selectbox", "radio", "select_slider"}:
        for value in _options(at, key, widget):
            if value in (old, new):
                continue
            _set(at, key, value)
            if revealed := set(_linked(at)) - known:
                branches.append([*steps, (key, value)])
                known |= revealed
    return branches


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    """Heavy jobs in this process, not a worker's (which would load each model again), and
    UMAP's fit replaced by a PCA: its first fit in a process JIT-compiles numba code (over a
    minute), and the Sense geometry map's permalink needs only the choice."""
    from sklearn.decomposition import PCA

    import probing.analyses.sense_geometry as sense_geometry

    class PlanarMap:
        def __init__(self, x, *args: Any) -> None:
            self.pca = PCA(n_components=2, random_state=0).fit(x)
            self.embedding_ = self.pca.transform(x)

        def transform(self, x: np.ndarray) -> np.ndarray:
            return self.pca.transform(x)

    monkeypatch.setenv("CONTEXTLENS_JOB_WORKERS", "0")
    monkeypatch.setattr(sense_geometry, "_fit_umap", PlanarMap)


@pytest.mark.parametrize("page", [p.script for p in PAGES], ids=[p.url_path for p in PAGES])
def test_every_control_round_trips_through_the_address(page, minilm):
    todo: list[list[Step]] = [[]]
    covered: set[str] = set()
    cases = 0
    while todo:  # the page's first view, then each view that a control opens
        _, branches = _round_trip(page, todo.pop(0), explore=True, covered=covered)
        todo += branches
        cases += 1
        assert cases <= 20, "more views than expected: is a control's change not settling?"
    assert MODELS in covered, covered


PROBING = "pages/4_Probing.py"
MPNET_LAYERS = list(range(13))


@pytest.fixture
def mpnet_available():
    from probing.models.registry import needs_fetch

    if needs_fetch("mpnet-base"):
        pytest.skip("mpnet-base is not fetched here (python -m probing models fetch mpnet-base)")


@pytest.mark.parametrize(
    ("steps", "layers"),
    [
        # all of minilm-l6's layers become all of mpnet-base's (the link said 0-6)
        ([(MODELS, ["mpnet-base"])], MPNET_LAYERS),
        # a chosen subset stays chosen
        ([("probe_layers", [0, 3]), (MODELS, ["mpnet-base"])], [0, 3]),
        # two models, all layers, then the run settings
        (
            [
                (MODELS, ["minilm-l6", "mpnet-base"]),
                ("probe_task", "xpos"),
                ("probe_train", 110.0),
                ("probe_eval", 300.0),
            ],
            MPNET_LAYERS,
        ),
        # two models and layers only one of them has
        ([(MODELS, ["minilm-l6", "mpnet-base"]), ("probe_layers", [0, 9, 12])], [0, 9, 12]),
    ],
    ids=["minilm-to-mpnet", "subset-kept", "two-models", "two-models-deeper-layers"],
)
def test_probing_model_switches_round_trip(steps, layers, minilm, mpnet_available):
    at, _ = _round_trip(PROBING, steps, explore=False)
    assert at.multiselect(key="probe_layers").value == layers
    link = _address(at)
    assert ("layers" in link) == (layers != MPNET_LAYERS), link  # "all" is left out
    if ("probe_train", 110.0) in steps:  # not the shipped xpos run's size, nor on a step
        assert link["train"] == "110" and link["eval"] == "300"


# Controls deliberately not in the address, each with its reason. Every other control a page
# shows (in its first view or in any view its radios open) must be bound to a parameter.
NOT_LINKED = {
    "models": "the sidebar's picker: its parameter is `model`",
    "sweep_folder": "a path on the server, meaningless in a link (and hidden in the demo)",
    "sc_static_": "the GloVe / word2vec file form: a path on the server (local only)",
    "iv_attr_": "the attractor of one typed pair, offered per pair of sentences",
    "sc_picks_": "the occurrences picked among one set of sentences (a new set starts from "
    "its first ten; a link's picks would carry over to the next set)",
}


def _unlinked(at: AppTest) -> set[str]:
    linked = set(_registry(at))
    keys = {w.key for kind in KINDS for w in getattr(at, kind) if w.key}
    return {
        k
        for k in keys - linked
        if not k.startswith("$$") and not any(k.startswith(n) for n in NOT_LINKED)
    }


@pytest.mark.parametrize("page", [p.script for p in PAGES], ids=[p.url_path for p in PAGES])
def test_every_control_is_bound_to_the_address(page, minilm):
    """No control is left out of the permalink by accident: a new widget must be persisted
    with a parameter (and then round-trips, above) or be listed in :data:`NOT_LINKED`."""
    at = _open(page)
    missing = _unlinked(at)
    for key in [k for k in _registry(at) if _find(at, k) is not None]:
        widget = _find(at, key)
        if widget is None or widget.type != "radio":  # (hidden by a view chosen before)
            continue
        for value in _options(at, key, widget):
            _set(at, key, value)
            missing |= _unlinked(at)
    assert not missing, f"{page}: controls not in the address: {sorted(missing)}"
