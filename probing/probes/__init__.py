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
:class:`ProbeResults` (a tidy DataFrame plus scalar-mix weights and centre of gravity); a
run's settings are one :class:`ProbeSettings`, its task one registry entry
(:mod:`probing.probes.tasks`) whose runner (:mod:`probing.probes.runners`) does the work.
"""

from __future__ import annotations

import importlib

# Names are imported on first use (PEP 562): ``from probing.probes.tasks import TASKS`` must not
# load scikit-learn, which made ``python -m probing probe --help`` take seconds.
_WHERE = {
    "MajorityBaseline": "baselines",
    "WordTypeBaseline": "baselines",
    "ControlTask": "control",
    "selectivity": "control",
    "LinearProbe": "linear",
    "ABSTAIN": "metrics",
    "Estimate": "metrics",
    "accuracy": "metrics",
    "bootstrap_ci": "metrics",
    "centre_of_gravity": "metrics",
    "expected_layer": "metrics",
    "macro_f1": "metrics",
    "precision_recall_f1": "metrics",
    "ScalarMixProbe": "mix",
    "COLUMNS": "results",
    "ProbeResults": "results",
    "probe_layers": "run",
    "ProbeSettings": "settings",
    "TASKS": "tasks",
    "Task": "tasks",
    "get_task": "tasks",
    "MostFrequentSense": "wsd",
    "NearestSenseClassifier": "wsd",
    "first_sense_backoff": "wsd",
    "lemma_key": "wsd",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(f"probing.probes.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'probing.probes' has no attribute {name!r}")


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
    "ProbeSettings",
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
