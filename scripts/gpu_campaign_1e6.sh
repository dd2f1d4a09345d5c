#!/usr/bin/env bash
# The gpu system's float32 false-alarm campaign at 10^6 cases per (target, check)
# (suites/gpu_campaign_1e6.yaml) as 16 processes on one GPU machine, merged into one report:
#
#   scripts/gpu_campaign_1e6.sh GNNCHECK OUT_DIR [RUN_OPTION...]     e.g. --entry gpu-differential-adjoint
#
# which runs (scripts/suite_shards.sh, JOBS = 16 at a time)
#   GNNCHECK run suites/gpu_campaign_1e6.yaml --share 1/16 --report OUT_DIR/shard-1 --jobs 1 --progress plain
#   …
#   GNNCHECK run suites/gpu_campaign_1e6.yaml --share 16/16 --report OUT_DIR/shard-16 --jobs 1 --progress plain
#   GNNCHECK report merge OUT_DIR/shard-1 … OUT_DIR/shard-16 --output OUT_DIR/merged
# and exits with the merged run's status. The shards may as well run on 16 machines or CI jobs (the
# same `run` line each, its report copied back) and be merged anywhere (examples/ci/). DEADLINE_S,
# SHARD_TIMEOUT_S and MIN_SHARD_S pass through to suite_shards.sh; a shard cut short is `not tested`
# in the merged report; run the missing ones later with SHARE_PARTS and merge all 16 shard folders.
set -uo pipefail
if [[ $# -lt 2 ]]; then echo "usage: $0 GNNCHECK OUT_DIR [RUN_OPTION...]" >&2; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
gnncheck=$1 out=$2
shift 2
exec "$here/suite_shards.sh" "$gnncheck" "$here/../suites/gpu_campaign_1e6.yaml" 16 16 "$out" "$@"
