"""Probes: what each layer of an encoder knows, measured with simple classifiers.

scikit-learn-style estimators (constructor = configuration, ``fit / predict / score``):

- :class:`LinearProbe`: multinomial logistic regression on one layer (C chosen on dev);
- :class:`ControlTask` and :func:`selectivity`: Hewitt & Liang's control tasks;
- :class:`MajorityBaseline`, :class:`WordTypeBaseline`: the baselines a probe must beat;
- :class:`NearestSenseClassifier`, :class:`MostFrequentSense`: WSD by 1-NN to SemCor sense
  centroids with WordNet first-sense backoff;
- :class:`ScalarMixProbe`: ELMo's learned softmax layer weighting + a linear classifier.

Metrics: :func:`bootstrap_ci` (accuracy, macro-F1, WSD precision/recall/F1),
:func:`centre_of_gravity` (Tenney et al. 2019), :func:`expected_layer`.

Orchestration: :func:`probe_layers` runs a task on every layer and returns
:class:`ProbeResults` (a tidy DataFrame plus scalar-mix weights and centre of gravity).
"""

from __future__ import annotations

from probing.probes.baselines import MajorityBaseline, WordTypeBaseline
from probing.probes.control import ControlTask, selectivity
from probing.probes.linear import LinearProbe
from probing.probes.metrics import (
    ABSTAIN,
    Estimate,
    accuracy,
    bootstrap_ci,
    centre_of_gravity,
    expected_layer,
    macro_f1,
    precision_recall_f1,
)
from probing.probes.mix import ScalarMixProbe
from probing.probes.run import COLUMNS, ProbeResults, probe_layers
from probing.probes.tasks import TASKS, Task, get_task
from probing.probes.wsd import (
    MostFrequentSense,
    NearestSenseClassifier,
    first_sense_backoff,
    lemma_key,
)

__all__ = [
    "ABSTAIN",
    "COLUMNS",
    "TASKS",
    "ControlTask",
    "Estimate",
    "LinearProbe",
    "MajorityBaseline",
    "MostFrequentSense",
    "NearestSenseClassifier",
    "ProbeResults",
    "ScalarMixProbe",
    "Task",
    "WordTypeBaseline",
    "accuracy",
    "bootstrap_ci",
    "centre_of_gravity",
    "expected_layer",
    "first_sense_backoff",
    "get_task",
    "lemma_key",
    "macro_f1",
    "precision_recall_f1",
    "probe_layers",
    "selectivity",
]
