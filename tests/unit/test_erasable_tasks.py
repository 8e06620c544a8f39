"""Which tasks erasure takes is a fact of the task record (issue 47): ``erase --task``, the
erasure data and the Interventions page read ``Task.erasable``, not lists of their own."""

from __future__ import annotations

import pytest

from probing import config
from probing.errors import TaskLabelsMissingError
from probing.interventions.data import ERASABLE, task_field
from probing.probes.tasks import KINDS, TASKS, task_names


def test_erasable_tasks_are_word_labels_read_as_they_are() -> None:
    assert set(ERASABLE) == {"pos", "xpos", "ptb-pos", "deprel", "supersense"}
    for name, task in TASKS.items():
        assert task.erasable == (KINDS[task.kind].word_labels and not task.variant), name
    # deprel-hd probes other inputs for deprel's labels: erasing it is erasing deprel
    assert not TASKS["deprel-hd"].erasable and TASKS["deprel-hd"].kind == "edge"


@pytest.mark.parametrize("name", list(TASKS))
def test_erasure_data_takes_exactly_the_erasable_tasks(name: str) -> None:
    if TASKS[name].erasable:
        dataset, field = task_field(name)
        assert dataset == TASKS[name].default_dataset and field == TASKS[name].fields[dataset]
    else:
        with pytest.raises(TaskLabelsMissingError, match="Erasure needs a word-level label"):
            task_field(name)


def test_the_erase_command_offers_the_erasable_tasks() -> None:
    from probing.cli.main import build_parser

    sub = build_parser("erase")._subparsers._group_actions[0].choices["erase"]
    task = next(a for a in sub._actions if a.dest == "task")
    assert list(task.choices) == task_names(erasable=True)


def test_the_interventions_page_picks_from_the_record_and_finds_the_shipped_sweeps() -> None:
    from ui.views.interventions import TASKS as PAGE_TASKS

    assert list(PAGE_TASKS) == list(ERASABLE)
    assert all(PAGE_TASKS[t] == TASKS[t].default_dataset for t in PAGE_TASKS)
    shipped = config.REPO_ROOT / "results" / "interventions"
    for task in ("pos", "deprel", "supersense"):  # the sweeps the page showed before
        assert (shipped / f"elmo-mini__{PAGE_TASKS[task]}__{task}__erase-leace.json").exists()
