"""Findings as data: every comparative sentence is a :class:`~probing.claims.claim.Claim`
made by the comparison engine from committed per-item data, with its numbers, its family
and its correction; docs and pages render claims (:mod:`probing.claims.render`) and
:mod:`probing.claims.unbacked` finds comparative sentences that no claim made."""
