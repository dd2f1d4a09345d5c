#!/usr/bin/env bash
# AGNN on the H200 with PyTorch Geometric, after AGNN's floor (checks/tolerance.md, "AGNN's floor"; figures in docs/campaigns.md):
# the two saved false alarms re-run against the torch/PyG adapter on CUDA, then the AGNN slice of the
# torch/PyG false-alarm campaign (suites/torch_campaign.yaml, 10^4 cases each of differential and adjoint).
#
#   scripts/agnn_torch_h200.sh build OUT      # from the project's root; exit 0 when everything passed
#
# Writes OUT/repro.txt and OUT/campaign/ (the report of `gnncheck run`).
set -uo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
build=$1 out=$2
gnncheck=$build/suites/gnncheck
adapter="python3 adapters/python/torch_adapter.py --device cuda"
mkdir -p "$out"
status=0
for dir in properties/tests/data/torch-agnn-*; do
  "$gnncheck" repro "$dir" --adapter "$adapter" >> "$out/repro.txt" 2>&1 || status=1
done
"$gnncheck" run suites/torch_campaign.yaml --entry torch-differential --entry torch-adjoint --target agnn --jobs 4 \
  --report "$out/campaign" --progress plain || status=1
exit $status
