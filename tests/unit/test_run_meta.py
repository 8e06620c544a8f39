"""RunMeta carries the run's one ProbeSettings (issue 26): the settings a stored ``meta``
shows as flat keys are read back into it, and written back as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probing.probes.meta import FROM_SETTINGS, RunMeta
from probing.probes.results import ProbeResults
from probing.probes.settings import ProbeSettings

RESULTS = Path(__file__).resolve().parents[2] / "results"
RUNS = sorted(p for p in RESULTS.glob("*.json") if "__" in p.stem)


@pytest.mark.parametrize("path", RUNS, ids=[p.stem for p in RUNS])
def test_a_committed_run_reads_back_into_its_settings(path: Path) -> None:
    stored = json.loads(path.read_text(encoding="utf-8"))
    if not (isinstance(stored, dict) and {"model", "task", "results", "meta"} <= set(stored)):
        pytest.skip("not a probe run's results")
    meta = ProbeResults.from_json(path).meta
    assert meta.settings is not None
    assert (meta.settings.model, meta.settings.task) == (stored["model"], stored["task"])
    for key in FROM_SETTINGS:
        if key in stored["meta"]:
            assert getattr(meta.settings, key) == stored["meta"][key] == meta[key]
    # and every key the file has is written back with its value
    written = meta.to_dict()
    assert {k: written.get(k, "absent") for k in stored["meta"]} == stored["meta"]


def test_a_run_shows_only_the_settings_it_recorded() -> None:
    meta = RunMeta(settings=ProbeSettings.of("pos", seed=3, pooling="mean"))
    assert meta.seed is None and "seed" not in meta.to_dict()
    meta.record(seed=3)
    meta["n_boot"] = 50  # the dict-style form older code writes
    assert meta.settings.n_boot == 50 and meta.settings.pooling == "mean"
    assert meta.to_dict() == {
        "max_train_sentences": None,
        "seed": 3,
        "n_boot": 50,
        "bootstrap_unit": "word",
        "max_train_words": None,
    }
    again = RunMeta.from_dict(meta.to_dict(), model="minilm-l6", task="pos")
    assert again.to_dict() == meta.to_dict() and again.settings.n_boot == 50
