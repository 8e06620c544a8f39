"""Interventions: does the model *use* what a probe finds? Concept erasure (LEACE, INLP,
random controls), subject-verb agreement, activation patching and head ablation, each a
forward pass with one tensor replaced (:mod:`probing.interventions.hooks`)."""
