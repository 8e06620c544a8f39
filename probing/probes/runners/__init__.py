"""One runner per kind of task, each ``run(task, feats, settings, *, model, dataset,
progress, type_keys, keep_probes) -> ProbeResults`` on extracted features: :mod:`.tagging`
(tagging and edge tasks), :mod:`.wsd`, :mod:`.structural`; :mod:`.sentence` takes the
encoder instead (it pools sentences itself). :mod:`.base` holds their shared bookkeeping.
A task's entry names its runner (:meth:`probing.probes.tasks.Task.runner`).
"""
