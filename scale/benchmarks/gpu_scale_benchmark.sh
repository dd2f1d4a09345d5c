#!/usr/bin/env bash
# The H200 figures of docs/scale-figures.md: `gnncheck scale` on Kronecker graphs generated on the device.
# A benchmark, not a test: it writes every command's full output, one after the other, and then one
# table row per command (verdict, edges, neighbourhood, seconds of each part and of the oracle
# part's pieces, device peak) into ONE file.
#
#   bash scale/benchmarks/gpu_scale_benchmark.sh GNNCHECK OUTPUT_FILE [GROUP...]
#
# GROUPs (default: acceptance):
#   acceptance  the issue's figures, ~120 s expected, ≤ 420 s of timeouts: GCN (row_mean) and
#               GAT-1 at scale 25, K = 10^4, 16 → 16; spmm at scale 25 for K = 10^3, 10^4, 10^5
#               (oracle time against K); spmm at K = 10^4 on scales 21 and 23 (against E, with the
#               scale-25 row above); GCN (row_mean) at scale 27, K = 1000 (a correct system there)
#   replicas    the three scale-only replicas caught at scale 25/27 and passing on kronecker:16
#               (int32, softmax, race: one of them)
#   symmetric   GCN with the symmetric norm, whose degree padding reads the 2-hop neighbourhood
#   flat        run E of docs/scale-figures.md, ~60 s expected, run with GNNCHECK_SCALE_BUDGET=150: GAT-1
#               and GCN (row_mean) at scale 25, K = 10^4, 16 → 16 (the oracle part ≤ 10 s), then
#               spmm at K = 10^4 on scales 21, 23 and 25 (the oracle part against E at fixed K)
#   flat-sources  run H of docs/scale-figures.md, ~240 s expected: spmm at K = 10^4 on scales 21, 23 and
#               25, each with the default hub source budget and with one that never binds
#               (--hub-sources 2^24), alternating, twice; spmm at scale 27; GAT-1 and GCN (row_mean)
#               at scale 25; the race and softmax replicas caught at scale 25
#   hugepages   GAT-1 and GCN (row_mean) at scale 25, K = 10^4, each twice with glibc's heap on 4 KiB
#               pages and twice on transparent huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1),
#               alternating; ~150 s expected from run E's totals (docs/scale-figures.md, "Huge pages for the heap")
#   layers-25   GAT-1 and GCN (row_mean) at scale 25, K = 10^4, 16 → 16, once each (~40 s): the
#               issue's two figures, for comparing binaries or settings call by call
#   oracle-evaluations  GAT-1 at scale 25, K = 10^4, with 3 (the default) and 6 oracle evaluations
#               side by side, alternating, twice; 6 with OMP_NUM_THREADS=4; GCN (row_mean) with 3 and
#               6; ~200 s expected (docs/scale-figures.md, "Oracle evaluations side by side")
# Each command runs under `timeout` (its own limit, in the table; GNNCHECK_SCALE_TIMEOUT overrides
# them all); a row that timed out says so. The whole script keeps to GNNCHECK_SCALE_BUDGET seconds
# (default 480): a command gets at most what is left, and one with less than 10 s left is not run
# (its row says so), so one device session holds every figure that fits.
set -uo pipefail
exe=${1:?usage: gpu_scale_benchmark.sh GNNCHECK OUTPUT_FILE [GROUP...]}
out=${2:?usage: gpu_scale_benchmark.sh GNNCHECK OUTPUT_FILE [GROUP...]}
shift 2
groups=${*:-acceptance}
mkdir -p "$(dirname "$out")"
table=$(mktemp)
echo "| label | verdict | expectation | graph | sampled rows | highest in-degree rows | neighbourhood | graph s | system s | oracle part s (sampling, neighbourhood, exact, bounds) | compare s | total s | device peak GiB | host peak GiB | limit s |" >"$table"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |" >>"$table"
echo "# gpu_scale_benchmark.sh $exe $groups — $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), $(nproc) cores, transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)" >"$out"

n=0
budget=${GNNCHECK_SCALE_BUDGET:-480}
run() {  # run LIMIT_SECONDS LABEL ARGS...
  local limit=${GNNCHECK_SCALE_TIMEOUT:-$1} label=$2; shift 2
  n=$((n + 1))
  local left=$((budget - SECONDS))
  if [ $left -lt 10 ]; then
    echo "| $label | not run: ${left} s of the ${budget} s budget left | | | | | | | | | | | | | |" >>"$table"
    { echo; echo "## $n. $label: not run (${left} s of the ${budget} s budget left): gnncheck scale $*"; } >>"$out"
    echo "$label: not run (budget)"
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  local log
  log=$(mktemp)
  echo "\$ gnncheck scale $*   (timeout $limit s)" >"$log"
  timeout "$limit" "$exe" scale "$@" >>"$log" 2>&1
  local rc=$?
  local verdict graph rows hubs nb gs ss os parts cs total peak host held
  verdict=$(grep -m1 -oE '^(PASS|FAIL|ERROR)' "$log" || echo "-")
  [ $rc -eq 124 ] && verdict="timed out (${limit} s)"
  graph=$(grep -m1 -oE '\([0-9]+ × [0-9]+, [0-9]+ edges\)' "$log" | grep -oE '[0-9]+ edges' || echo "-")
  rows=$(grep -m1 -oE 'sampled rows: [0-9]+ \([^)]*\)' "$log" | sed 's/sampled rows: //' || echo "-")
  hubs=$(grep -m1 -oE 'highest in-degree rows: [0-9]+ rows, in-degree [0-9]+ … [0-9]+, [0-9]+ edges' "$log" | sed 's/highest in-degree rows: //' || echo "-")
  nb=$(grep -m1 -oE 'neighbourhood [0-9]+ edges, [0-9]+ sources' "$log" | sed 's/neighbourhood //' || echo "-")
  gs=$(grep -m1 -oE 'graph on the device [0-9.]+' "$log" | grep -oE '[0-9.]+$' || echo "-")
  ss=$(grep -m1 -oE 'system [0-9.]+, oracle' "$log" | grep -oE '[0-9.]+' || echo "-")
  os=$(grep -m1 -oE 'oracle part [0-9.]+' "$log" | grep -oE '[0-9.]+$' || echo "-")
  parts=$(grep -m1 -oE 'sampling [0-9.]+, neighbourhood [0-9.]+, exact [0-9.]+, bounds [0-9.]+' "$log" | grep -oE '[0-9.]+' | paste -sd, - || echo "-")
  cs=$(grep -m1 -oE 'compare [0-9.]+' "$log" | grep -oE '[0-9.]+$' || echo "-")
  total=$(grep -m1 -oE 'total [0-9.]+ s' "$log" | grep -oE '[0-9.]+' || echo "-")
  peak=$(grep -m1 -oE 'device memory: peak [0-9.]+ GiB' "$log" | grep -oE '[0-9.]+' || echo "-")
  host=$(grep -m1 -oE 'host memory: peak [0-9.]+ GiB' "$log" | grep -oE '[0-9.]+' || echo "-")
  held=$(grep -m1 -oE 'expectation (held|NOT held)' "$log" | sed 's/expectation //' || echo "-")
  echo "| $label | $verdict | $held | $graph | $rows | $hubs | $nb | $gs | $ss | $os ($parts) | $cs | $total | $peak | $host | $limit |" >>"$table"
  { echo; echo "## $n. $label (rc $rc)"; cat "$log"; } >>"$out"
  rm -f "$log"
  echo "$label: $verdict, $held, total ${total} s, oracle part ${os} s (rc $rc)"
}

for group in $groups; do
  case $group in
    acceptance)
      run 70 gcn-25-row_mean --system gpu --target gcn --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --norm row_mean
      run 70 gat1-25 --system gpu --target gat --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --heads 1
      for k in 1000 10000 100000; do
        run 40 "spmm-25-K$k" --system gpu --target spmm --graph kronecker:25 --rows $k --features 16
      done
      run 25 spmm-21-K10000 --system gpu --target spmm --graph kronecker:21 --rows 10000 --features 16
      run 35 spmm-23-K10000 --system gpu --target spmm --graph kronecker:23 --rows 10000 --features 16
      run 100 gcn-27-row_mean --system gpu --target gcn --graph kronecker:27 --rows 1000 --features 16 --out-features 16 --norm row_mean ;;
    int32|replicas)
      run 80 int32-offsets-27 --system gpu_scale_int32_edge_offsets --target spmm --graph kronecker:27 --rows 1000 --expect caught
      run 30 int32-offsets-16 --system gpu_scale_int32_edge_offsets --target spmm --graph kronecker:16 --rows 1000 ;;&
    softmax|replicas)
      run 60 softmax-hubs-25 --system gpu_scale_softmax_no_max_on_hubs --target edge_softmax --graph kronecker:25 --rows 100 --magnitude 100 --expect caught
      run 30 softmax-hubs-16 --system gpu_scale_softmax_no_max_on_hubs --target edge_softmax --graph kronecker:16 --rows 1000 --magnitude 100
      run 60 softmax-reference-25 --system gpu --target edge_softmax --graph kronecker:25 --rows 100 --magnitude 100 ;;&
    race|replicas)
      run 60 race-hubs-25 --system gpu_scale_race_on_hubs --target spmm --graph kronecker:25 --rows 10000 --expect caught
      run 30 race-hubs-16 --system gpu_scale_race_on_hubs --target spmm --graph kronecker:16 --rows 1000 ;;&
    int32|softmax|race|replicas) ;;
    symmetric)
      for s in 21 23; do
        run 150 "gcn-$s-symmetric" --system gpu --target gcn --graph kronecker:$s --rows 10000 --features 16 --out-features 16
      done ;;
    flat)
      run 60 gat1-25 --system gpu --target gat --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --heads 1
      run 40 gcn-25-row_mean --system gpu --target gcn --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --norm row_mean
      for s in 21 23 25; do
        run 30 "spmm-$s-K10000" --system gpu --target spmm --graph kronecker:$s --rows 10000 --features 16
      done ;;
    flat-sources)
      for i in 1 2; do
        for s in 21 23 25; do
          run 40 "spmm-$s-K10000" --system gpu --target spmm --graph kronecker:$s --rows 10000 --features 16
          run 40 "spmm-$s-K10000-wide" --system gpu --target spmm --graph kronecker:$s --rows 10000 --features 16 --hub-sources 16777216
        done
      done
      run 120 spmm-27-K10000 --system gpu --target spmm --graph kronecker:27 --rows 10000 --features 16
      run 60 gat1-25 --system gpu --target gat --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --heads 1
      run 40 gcn-25-row_mean --system gpu --target gcn --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --norm row_mean
      run 60 race-hubs-25 --system gpu_scale_race_on_hubs --target spmm --graph kronecker:25 --rows 10000 --expect caught
      run 60 softmax-hubs-25 --system gpu_scale_softmax_no_max_on_hubs --target edge_softmax --graph kronecker:25 --rows 100 --magnitude 100 --expect caught ;;
    hugepages)
      for i in 1 2; do
        run 60 gat1-25-4k --system gpu --target gat --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --heads 1
        GLIBC_TUNABLES=glibc.malloc.hugetlb=1 run 60 gat1-25-huge --system gpu --target gat --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --heads 1
        run 40 gcn-25-row_mean-4k --system gpu --target gcn --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --norm row_mean
        GLIBC_TUNABLES=glibc.malloc.hugetlb=1 run 40 gcn-25-row_mean-huge --system gpu --target gcn --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --norm row_mean
      done ;;
    layers-25)
      run 60 gat1-25 --system gpu --target gat --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --heads 1
      run 40 gcn-25-row_mean --system gpu --target gcn --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --norm row_mean ;;
    oracle-evaluations)
      for i in 1 2; do
        for e in 3 6; do
          run 60 "gat1-25-oe$e" --system gpu --target gat --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --heads 1 --oracle-evaluations $e
        done
      done
      OMP_NUM_THREADS=4 run 60 gat1-25-oe6-omp4 --system gpu --target gat --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --heads 1 --oracle-evaluations 6
      for e in 3 6; do
        run 40 "gcn-25-row_mean-oe$e" --system gpu --target gcn --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --norm row_mean --oracle-evaluations $e
      done ;;
    *) echo "unknown group '$group' (acceptance replicas int32 softmax race symmetric flat flat-sources hugepages layers-25 oracle-evaluations)" >&2; exit 2 ;;
  esac
done
{ echo; echo "## table"; cat "$table"; } >>"$out"
rm -f "$table"
echo
tail -n $((n + 2)) "$out"
