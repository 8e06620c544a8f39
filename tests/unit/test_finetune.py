"""The fine-tuning loop (probing.training.finetune) on a tiny random BERT with minilm-l6's
tokenizer and real UD-EWT / Brown sentences: 0 steps change nothing, steps lower the
training loss, a cut-and-resumed run ends bit-for-bit where an uncut one does."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from probing.models.embedded import minilm_dir
from probing.training.finetune import (
    TOKENIZER_FILES,
    Finetuner,
    FinetuneSettings,
    load_finetuned,
    load_start,
    lr_factor,
)
from probing.training.finetune_data import genre_examples, upos_examples


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    """A 2-layer, 32-wide random BertModel that reads minilm-l6's word pieces."""
    import transformers as tf

    torch.manual_seed(0)
    cfg = tf.BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=48,
        max_position_embeddings=160,
    )
    folder = tmp_path_factory.mktemp("tiny-bert")
    tf.BertModel(cfg).save_pretrained(folder, safe_serialization=True)
    for name in TOKENIZER_FILES:
        if (minilm_dir() / name).is_file():
            shutil.copy2(minilm_dir() / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def upos() -> tuple[list, list]:
    sents = upos_examples("train", 12)
    return sents[:8], sents[8:]


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_zero_steps_leave_the_encoder_bit_for_bit_unchanged(tiny_dir, upos, tmp_path):
    train, dev = upos
    ft = Finetuner(FinetuneSettings(task="upos", epochs=0), tiny_dir, train, dev, tmp_path / "w")
    ft.fit()
    assert ft.done and ft.state["step"] == 0
    out = ft.export(tmp_path / "out")
    start, _ = load_start(tiny_dir)
    exported, _ = load_start(out)
    assert _same(start.state_dict(), ft.model.encoder.state_dict())
    assert _same(start.state_dict(), exported.state_dict())
    # ...and the exported head is the one the run holds
    model, batcher, info = load_finetuned(out)
    assert _same(model.head.state_dict(), ft.model.head.state_dict())
    assert batcher.labels == info["labels"] == ft.labels


@pytest.mark.parametrize("task", ["upos", "genre"])
def test_a_few_steps_lower_the_training_loss(tiny_dir, upos, task, tmp_path):
    if task == "upos":
        train, dev = upos
    else:
        every = genre_examples("dev", 1)
        train, dev = every[:8], every[8:12]
    settings = FinetuneSettings(task=task, epochs=6, batch_size=4, lr=5e-4, patience=100)
    ft = Finetuner(settings, tiny_dir, train, dev, tmp_path / "w")
    before = ft.training_loss()
    ft.fit()
    assert ft.state["step"] == 12
    assert ft.training_loss() < before - 0.05


def test_a_resumed_run_ends_with_the_weights_of_an_uncut_one(tiny_dir, upos, tmp_path):
    train, dev = upos
    settings = FinetuneSettings(task="upos", epochs=2, batch_size=3, eval_every=1, patience=10)
    whole = Finetuner(settings, tiny_dir, train, dev, tmp_path / "a")
    whole.fit()
    first = Finetuner(settings, tiny_dir, train, dev, tmp_path / "b")
    first.fit(max_steps=2)
    assert not first.done and first.state["step"] == 2
    resumed = Finetuner(settings, tiny_dir, train, dev, tmp_path / "b")  # reads the checkpoint
    assert resumed.state["step"] == 2
    resumed.fit()
    assert resumed.state["step"] == whole.state["step"] == 6
    assert _same(whole.model.state_dict(), resumed.model.state_dict())
    assert _same(whole.best, resumed.best)
    assert whole.state["history"] == resumed.state["history"]
    # another seed trains to other weights (the comparison above can fail)
    other = Finetuner(replace(settings, seed=1), tiny_dir, train, dev, tmp_path / "c")
    other.fit()
    assert not _same(whole.model.state_dict(), other.model.state_dict())


def test_a_checkpoint_of_other_settings_is_refused(tiny_dir, upos, tmp_path):
    train, dev = upos
    settings = FinetuneSettings(task="upos", epochs=1, batch_size=4)
    Finetuner(settings, tiny_dir, train, dev, tmp_path / "w").fit(max_steps=1)
    with pytest.raises(ValueError, match="other settings"):
        Finetuner(replace(settings, lr=2e-5), tiny_dir, train, dev, tmp_path / "w")


def test_a_checkpoint_of_other_sentences_is_refused(tiny_dir, upos, tmp_path):
    """Same settings, other training sentences (a run re-made at another size) must not
    resume the old run's checkpoint."""
    train, dev = upos
    settings = FinetuneSettings(task="upos", epochs=1, batch_size=4)
    Finetuner(settings, tiny_dir, train, dev, tmp_path / "w").fit(max_steps=1)
    Finetuner(settings, tiny_dir, train, dev, tmp_path / "w")  # the same data resumes
    with pytest.raises(ValueError, match="other training or dev sentences"):
        Finetuner(settings, tiny_dir, train, dev[::-1], tmp_path / "w")  # same labels


def test_the_cli_sizes_reach_the_data():
    """--train-sentences and --genre-per-doc choose the sentences a run trains on."""
    import argparse

    from probing.training.finetune_data import task_data
    from probing.training.finetune_run import add_train_finetune_arguments, settings_from_args

    parser = add_train_finetune_arguments(argparse.ArgumentParser())
    args = parser.parse_args(
        ["--task", "genre", "--train-sentences", "500", "--genre-per-doc", "2"]
    )
    settings, sizes = settings_from_args(args)
    assert (settings.task, sizes.genre_train, sizes.genre_train_per_doc) == ("genre", 500, 2)
    train, _ = task_data("genre", sizes)
    once, _ = task_data("genre", replace(sizes, genre_train_per_doc=1))
    assert len(train) == 500 and len(once) < 500  # one a document does not reach 500


def test_warm_up_then_linear_decay():
    total = 20  # 10 % warm-up: 2 steps
    f = [lr_factor(k, total, 0.1) for k in range(total + 1)]
    assert f[0] == 0.5 and f[1] == 1.0 and f[2] == 1.0
    assert all(a >= b for a, b in zip(f[1:], f[2:], strict=False))
    assert f[total] == 0.0


@pytest.mark.parametrize("task", ["upos", "genre"])
def test_the_exported_heads_counts_are_its_accuracy(tiny_dir, upos, task, tmp_path):
    """finetuned_counts (what results/finetune stores) agrees with the run's own accuracy."""
    import numpy as np

    from probing.analyses.finetune_effects import finetuned_counts
    from probing.training.finetune import accuracy, predict

    if task == "upos":
        train, dev = upos
        group = None
    else:
        every = genre_examples("dev", 1)
        train, dev = every[:8], every[8:14]
        group = np.array([0, 0, 1, 1, 2, 2])
    settings = FinetuneSettings(task=task, epochs=2, batch_size=4, lr=5e-4, patience=100)
    ft = Finetuner(settings, tiny_dir, train, dev, tmp_path / "w")
    ft.fit()
    out = ft.export(tmp_path / "out")
    counts = finetuned_counts(out, dev, group)
    assert counts.counts.shape[1] == (len(dev) if task == "upos" else 3)
    expected = accuracy(ft.batcher, dev, predict(ft.best_model(), ft.batcher, dev))
    assert counts.points[0] == pytest.approx(expected)
