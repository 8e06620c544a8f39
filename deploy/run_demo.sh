#!/usr/bin/env sh
# Launch the shared public demo: demo mode on, and the upload cap enforced by Streamlit's
# own upload endpoint (server.maxUploadSize, in MB; the page's check alone runs only after
# the server has accepted the bytes). Extra arguments go to `streamlit run`, e.g.
#   deploy/run_demo.sh --server.port 8501 --server.address 0.0.0.0
# Settings (environment): CONTEXTLENS_FEATURE_CACHE_MB (feature cache bound, default 2048),
# CONTEXTLENS_JOB_SECONDS / CONTEXTLENS_JOB_MEMORY_MB (heavy-job budget, default 300 s /
# 1536 MB). Keep OMP_WAIT_POLICY=PASSIVE: concurrent torch jobs otherwise spin on the cores.
set -eu
cd "$(dirname "$0")/.."
export CONTEXTLENS_DEMO=1
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"
exec "${PYTHON:-python}" -m streamlit run app.py \
    --server.maxUploadSize 2 \
    --server.headless true \
    --browser.gatherUsageStats false \
    "$@"
