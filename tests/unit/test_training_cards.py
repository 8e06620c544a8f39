"""Model cards of the embedded models: the reproducing command and the schedule history."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from probing.training.cards import reproducing_command
from probing.training.mlm_head import LOG_NAME, write_model_card

ROOT = Path(__file__).resolve().parents[2]


def test_reproducing_command_drops_only_where_files_went():
    cmd = (
        "OMP_WAIT_POLICY=PASSIVE python -m probing.training.elmo_lm --data-dir ../shared/data "
        "--checkpoint-dir /root/.cache/x --export-dir=/tmp/y --lr 0.002"
    )
    assert reproducing_command(cmd) == (
        "OMP_WAIT_POLICY=PASSIVE python -m probing.training.elmo_lm --data-dir ../shared/data "
        "--lr 0.002"
    )
    assert reproducing_command("python -m x --data-dir 'a b'") == "python -m x --data-dir 'a b'"


def test_mlm_card_replays_a_moved_schedule_step_by_step(tmp_path):
    folder = tmp_path / "card"
    shutil.copytree(ROOT / "models" / "minilm-l6-mlm", folder)
    log = json.loads((folder / LOG_NAME).read_text(encoding="utf-8"))
    log["command"] = (
        "python -m probing.training.mlm_head --data-dir d --max-tokens 11000000 "
        "--export-dir /somewhere"
    )
    log["schedule"] = [
        {"from_step": 0, "from_tokens": 0, "max_tokens": 30_000_000},
        {"from_step": 1461, "from_tokens": 5_463_237, "max_tokens": 11_000_000},
    ]
    write_model_card(folder, log)
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "at 5,463,237 pieces (step 1,461) it was moved to 11,000,000" in card
    assert "--max-tokens 30000000 --max-steps 1461\n" in card
    assert "--data-dir d --max-tokens 11000000\n" in card
    assert "/somewhere" not in card


def test_committed_mlm_card_states_its_log():
    folder = ROOT / "models" / "minilm-l6-mlm"
    log = json.loads((folder / LOG_NAME).read_text(encoding="utf-8"))
    card = (folder / "README.md").read_text(encoding="utf-8")
    ex = log["exported"]
    assert f"{ex['tokens_seen']:,} word pieces seen" in card
    assert f"**{100 * ex['eval']['top5']:.1f} %**" in card
    assert "--export-dir" not in card and "--checkpoint-dir" not in card


def test_the_ui_provenance_quotes_the_committed_training_logs():
    from probing.models.registry import entry

    elmo = json.loads((ROOT / "models" / "elmo-mini" / "training_log.json").read_text())
    last = elmo["heldout"][-1]
    text = entry("elmo-mini").provenance
    assert f"{last['tokens_seen'] / 1e6:.1f}M tokens" in text
    assert f"{last['ppl_forward']:.0f} forward / {last['ppl_backward']:.0f} backward" in text
    mlm = json.loads((ROOT / "models" / "minilm-l6-mlm" / LOG_NAME).read_text())
    text = entry("minilm-l6-mlm").provenance
    assert f"{100 * mlm['exported']['eval']['top5']:.0f} %" in text
    assert f"{mlm['exported']['tokens_seen'] / 1e6:.1f}M word pieces" in text
