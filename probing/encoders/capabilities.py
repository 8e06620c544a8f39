"""What each encoder family can do, as :class:`~probing.encoding.ModelInfo` fields.

The one place that turns a family name into capabilities: an encoder fills its info from
here when it loads (then corrects what its weights decide: a loaded MLM head, a surface
for hooks), and the registry asks here for a model not loaded yet (pickers and messages).
Everything else reads the fields.
"""

from __future__ import annotations

from dataclasses import replace

from probing.encoding import ModelInfo

ELMO_NO_HEADS = (
    "is an LSTM (ELMo): it has no attention heads, so head hooks, head ablation and "
    "norm-weighted attention do not apply"
)


def family_capabilities(family: str) -> dict[str, object]:
    """The fields every model of ``family`` ("bert": any `transformers` encoder; "elmo")
    has before its weights are looked at: the weights may only take some away (no MLM head
    in the checkpoint, no known hook points)."""
    if family == "elmo":
        return {
            "objective": "bidirectional-lm",
            "has_attention": False,
            "has_cls_token": False,
            "has_layer_hooks": True,  # its LSTM layers are re-run (interventions.recompute)
            "has_head_hooks": False,
            "has_value_norms": False,
            "direction_blocks": 2,
        }
    return {
        "objective": "masked",
        "has_attention": True,
        "has_cls_token": True,
        "direction_blocks": 1,
    }


def declared(info: ModelInfo) -> ModelInfo:
    """``info`` with its family's capabilities (for a model not loaded yet)."""
    out = replace(info, **family_capabilities(info.family))  # type: ignore[arg-type]
    if info.family == "elmo":
        out = replace(out, no_hooks_reason=f"{info.name} {ELMO_NO_HEADS}.")
    return out
