"""``python -m probing report --executor ray`` on the tiny random BERT checkpoint of
``test_report``: the parts computed as Ray tasks (a local instance, 2 CPUs) equal those
computed in-process, timings aside; a run stopped between parts resumes from the parts it
wrote; without Ray, or with ``--address`` and the local executor, one typed line, exit 2."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from probing.cli.main import main
from probing.report import run as report_run
from tests.library import test_report as base
from tests.library.test_report import PARTS, reading

# test_report's fixtures (this module makes its own: the checkpoint, the cut-short data
# folder and the in-process report)
checkpoint, small_data, report = base.checkpoint, base.small_data, base.report
RAN = [p for p in PARTS if p != "supersense"]  # no SemCor in the small data folder


def drop_ud_manifest() -> None:
    """Ray workers' set-up: read the cut-short UD-EWT files as :func:`reading` lets the
    driver (the manifest's entries set aside)."""
    from probing.datasets.manifest import MANIFEST

    MANIFEST.pop("ud-ewt", None)


@pytest.fixture(scope="module")
def ray_instance():
    """A local Ray instance of 2 CPUs that the report joins (so the test can give its
    workers :func:`drop_ud_manifest`); shut down after the module."""
    ray = pytest.importorskip("ray")
    from probing import config
    from probing.sweep.adapter import WORKER_ENV

    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={
            "env_vars": {**WORKER_ENV, "PYTHONPATH": str(config.REPO_ROOT)},
            "worker_process_setup_hook": f"{__name__}.drop_ud_manifest",
        },
    )
    yield ray
    ray.shutdown()


def argv(checkpoint: Path, out: Path, *extra: str) -> list[str]:
    return ["report", "--model", str(checkpoint), "--budget", "10m", "--out", str(out), *extra]


def parts_of(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((out / "parts").glob("*.json"))}


def untimed(record: dict) -> dict:
    """A part's record without what differs between runs: when and how long."""
    result = json.loads(json.dumps(record["result"]))
    (result.get("meta") or {}).pop("timing_s", None)
    return {"key": record["key"], "settings": record["settings"], "result": result}


@pytest.mark.slow  # Ray's start-up and two reports of the tiny checkpoint: ~1 min
def test_ray_tasks_give_the_parts_the_local_run_gives(
    ray_instance, report, checkpoint, small_data, tmp_path
):
    out = tmp_path / "ray"
    out.mkdir()
    shutil.copy(report / "plan.json", out / "plan.json")  # the same plan, not a new calibration
    with reading(small_data):
        assert main(argv(checkpoint, out, "--executor", "ray")) == 0
    local, ray = parts_of(report), parts_of(out)
    assert sorted(ray) == sorted(local) == sorted(RAN)
    for part in RAN:
        assert untimed(ray[part]) == untimed(local[part]), part
        csv = f"parts/{part}.csv"
        assert (out / csv).read_text() == (report / csv).read_text(), part
    a, b = (json.loads((d / "report.json").read_text()) for d in (report, out))
    assert b["plan_reused"] and a["plan"]["parts"] == b["plan"]["parts"]
    assert a["claims"] == b["claims"] and a["model"] == b["model"]
    assert list(a["timings"]) == list(b["timings"]) == RAN  # the report's order, not arrival's
    assert a["executor"]["name"] == "local"
    assert b["executor"] == {"name": "ray", "workers": 2, "gpu": False}
    page = (out / "report.html").read_text()
    for part in RAN:
        assert f"<section id='part-{part}'>" in page


@pytest.mark.slow
def test_a_ray_report_stopped_between_parts_resumes(
    ray_instance, checkpoint, small_data, tmp_path, monkeypatch
):
    # three one-part tasks on two CPUs: stopped when the first arrives, one runs, one waits
    out, written, asked = tmp_path / "out", [], ["cka", "contextuality", "attention-stats"]
    real = report_run.write_part

    def stop_after_one(*args, **kwargs):
        record = real(*args, **kwargs)
        written.append(record["part"])
        raise KeyboardInterrupt  # as Ctrl-C while the other tasks run

    monkeypatch.setattr(report_run, "write_part", stop_after_one)
    cli = argv(checkpoint, out, "--executor", "ray", "--tasks", ",".join(asked))
    with reading(small_data), pytest.raises(KeyboardInterrupt):
        main(cli)
    monkeypatch.setattr(report_run, "write_part", real)
    before = parts_of(out)
    assert list(before) == written and not (out / "report.json").exists()
    with reading(small_data):
        assert main(cli) == 0
    after = parts_of(out)
    assert sorted(after) == sorted(asked)
    assert after[written[0]] == before[written[0]]  # kept as written, not recomputed
    record = json.loads((out / "report.json").read_text())
    assert record["plan_reused"] and list(record["timings"]) == asked


def test_without_ray_the_report_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    out = tmp_path / "out"
    assert main(["report", "--model", "minilm-l6", "--out", str(out), "--executor", "ray"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "pip install" in err and "\n" not in err
    assert not out.exists()


@pytest.mark.parametrize("flag", [["--address", "auto"], ["--workers", "2"]])
def test_ray_options_without_ray_are_refused(flag, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["report", "--model", "minilm-l6", "--out", str(out), *flag]) == 2
    err = capsys.readouterr().err.strip()
    assert f"{flag[0]} is for --executor ray" in err and "\n" not in err
    assert not out.exists()
