#!/usr/bin/env bash
# Regenerates every committed result in results/ (the numbers in docs/results.md).
#
#   bash results/regenerate.sh            # resumes: finished steps are skipped
#   FORCE=1 bash results/regenerate.sh    # everything again
#   ONLY=elmo-mini bash results/regenerate.sh   # only steps whose name matches (a second
#                                               # worker; steps are marked done when finished)
#
# Each step is one CLI run that writes its own files, so a step is the unit of
# checkpointing: a step whose marker exists in $STATE is skipped on a re-run.
# TRAIN_SENTENCES / TRAIN_WORDS cap the training split ("all" = the whole split, what the
# issue asks for; docs/results.md states what the committed files used and why).
set -euo pipefail
cd "$(dirname "$0")/.."

export OMP_NUM_THREADS="${THREADS:-2}" MKL_NUM_THREADS="${THREADS:-2}" OMP_WAIT_POLICY=PASSIVE
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
STATE="${STATE:-${CONTEXTLENS_CACHE_DIR:-$HOME/.cache/contextlens}/regenerate-state}"
UD_SENTENCES="${UD_SENTENCES:-all}"          # UD-EWT train sentences (all: 12,544)
SEMCOR_SENTENCES="${SEMCOR_SENTENCES:-all}"  # SemCor train sentences (all: 15,947)
TRAIN_WORDS="${TRAIN_WORDS:-all}"            # training words per probe fit
DEV_SENTENCES="${DEV_SENTENCES:-all}"        # dev sentences (C and best layer are chosen on them)
UD_TEST="${UD_TEST:-all}"                    # UD-EWT test sentences (all: 2,077)
SEMCOR_TEST="${SEMCOR_TEST:-all}"            # SemCor test sentences (all: 2,555)
SEEDS="${SEEDS:-3}"
OUT=results
mkdir -p "$STATE" "$OUT"
[[ "${FORCE:-0}" == 1 ]] && rm -f "$STATE"/*.done

step() {  # step NAME COMMAND...: run once, then mark done
  local name=$1; shift
  if [[ -e "$STATE/$name.done" ]]; then echo "skip $name (done)"; return; fi
  if [[ -n "${ONLY:-}" && ! "$name" =~ $ONLY ]]; then return; fi
  if [[ -e "$STATE/$name.running" ]]; then echo "skip $name (another worker runs it)"; return; fi
  touch "$STATE/$name.running"
  echo "=== $name: $* ($(date -u +%H:%M:%S))"
  local t0=$SECONDS
  "$@" || { rm -f "$STATE/$name.running"; return 1; }
  echo "=== $name finished in $((SECONDS - t0)) s"
  touch "$STATE/$name.done"
  rm -f "$STATE/$name.running"
}

probe() {  # probe MODEL TASK DATASET TRAIN_SENTENCES TEST_SENTENCES
  step "$1__$3__$2" python -m probing probe --model "$1" --task "$2" --dataset "$3" \
    --max-train-sentences "$4" --max-train-words "$TRAIN_WORDS" --max-dev-sentences \
    "$DEV_SENTENCES" --max-test-sentences "$5" --seeds "$SEEDS" --mdl --n-boot 1000 \
    --plotlyjs cdn --quiet --overwrite --out "$OUT"
}

# Cheap analyses first.
step contextuality python -m probing contextuality --model minilm-l6 --model elmo-mini \
  --dataset ud-ewt --n-sentences 500 --overwrite --out "$OUT/contextuality"
step head-statistics python -m probing attention-stats --model minilm-l6 --dataset ud-ewt \
  --split dev --n-sentences 200 --out "$OUT/head-statistics" --quiet

# Probes: both models, each task (POS first: the headline numbers).
for model in minilm-l6 elmo-mini; do probe "$model" pos ud-ewt "$UD_SENTENCES" "$UD_TEST"; done
for task in supersense wsd ptb-pos; do
  for model in minilm-l6 elmo-mini; do
    probe "$model" "$task" semcor "$SEMCOR_SENTENCES" "$SEMCOR_TEST"
  done
done
echo "all done ($(date -u +%H:%M:%S))"
