#!/usr/bin/env bash
# The H200 figures of scale/README.md: `gnncheck scale` on Kronecker graphs generated on the device.
# A benchmark, not a test: it prints one table row per command (verdict, edges, neighbourhood,
# seconds of each part, device peak) and keeps each command's full output in LOG_DIR.
#
#   bash scale/benchmarks/gpu_scale_benchmark.sh GNNCHECK LOG_DIR [GROUP...]
#
# GROUPs (default: all but the single replica groups int32, softmax, race): layers25 (GCN and GAT-1 at scale 25, K = 10^4), scale27 (GCN, K = 100),
# rows (oracle time against K at scale 25: K = 10^5 is left out, its 25,000 hub rows hold about half
# the graph), edges (against E at K = 10^4: scales 21, 23, 25), replicas (the three
# scale-only replicas caught at scale 25/27 and passing on kronecker:16), symmetric (GCN with the
# symmetric norm, whose degree padding reads the 2-hop neighbourhood). Each command runs under
# `timeout ${GNNCHECK_SCALE_TIMEOUT:-150}`; a row that timed out says so.
set -uo pipefail
exe=${1:?usage: gpu_scale_benchmark.sh GNNCHECK LOG_DIR [GROUP...]}
logs=${2:?usage: gpu_scale_benchmark.sh GNNCHECK LOG_DIR [GROUP...]}
shift 2
groups=${*:-"layers25 scale27 rows edges replicas symmetric"}
mkdir -p "$logs"
limit=${GNNCHECK_SCALE_TIMEOUT:-150}
table="$logs/table.md"
echo "| label | verdict | expectation | graph | sampled rows | neighbourhood edges | graph s | system s | oracle part s | compare s | total s | device peak GiB |" >"$table"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |" >>"$table"

n=0
run() {  # run LABEL ARGS...
  local label=$1; shift
  n=$((n + 1))
  local log="$logs/$(printf '%02d' $n)-${label//[^A-Za-z0-9_.-]/_}.log"
  echo "\$ gnncheck scale $*" >"$log"
  timeout "$limit" "$exe" scale "$@" >>"$log" 2>&1
  local rc=$?
  local verdict graph rows nb gs ss os cs total peak held
  verdict=$(grep -m1 -oE '^(PASS|FAIL|ERROR)' "$log" || echo "-")
  [ $rc -eq 124 ] && verdict="timed out (${limit} s)"
  graph=$(grep -m1 -oE '\([0-9]+ × [0-9]+, [0-9]+ edges\)' "$log" | grep -oE '[0-9]+ edges' || echo "-")
  rows=$(grep -m1 -oE 'sampled rows: [0-9]+' "$log" | grep -oE '[0-9]+$' || echo "-")
  nb=$(grep -m1 -oE 'neighbourhood [0-9]+ edges' "$log" | grep -oE '[0-9]+' || echo "-")
  gs=$(grep -m1 -oE 'graph on the device [0-9.]+' "$log" | grep -oE '[0-9.]+$' || echo "-")
  ss=$(grep -m1 -oE 'system [0-9.]+, oracle' "$log" | grep -oE '[0-9.]+' || echo "-")
  os=$(grep -m1 -oE 'oracle part [0-9.]+' "$log" | grep -oE '[0-9.]+$' || echo "-")
  cs=$(grep -m1 -oE 'compare [0-9.]+' "$log" | grep -oE '[0-9.]+$' || echo "-")
  total=$(grep -m1 -oE 'total [0-9.]+ s' "$log" | grep -oE '[0-9.]+' || echo "-")
  peak=$(grep -m1 -oE 'peak [0-9.]+ GiB' "$log" | grep -oE '[0-9.]+' || echo "-")
  held=$(grep -m1 -oE 'expectation (held|NOT held)' "$log" | sed 's/expectation //' || echo "-")
  echo "| $label | $verdict | $held | $graph | $rows | $nb | $gs | $ss | $os | $cs | $total | $peak |" >>"$table"
  echo "$label: $verdict, $held, total ${total} s, oracle part ${os} s (rc $rc)"
}

for group in $groups; do
  case $group in
    layers25)
      run gcn-25-row_mean --system gpu --target gcn --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --norm row_mean
      run gat1-25 --system gpu --target gat --graph kronecker:25 --rows 10000 --features 16 --out-features 16 --heads 1 ;;
    scale27)
      run gcn-27-row_mean --system gpu --target gcn --graph kronecker:27 --rows 100 --features 16 --out-features 16 --norm row_mean ;;
    rows)
      for k in 100 1000 10000; do
        run "spmm-25-K$k" --system gpu --target spmm --graph kronecker:25 --rows $k --features 16
      done ;;
    edges)
      for s in 21 23 25; do
        run "spmm-$s-K10000" --system gpu --target spmm --graph kronecker:$s --rows 10000 --features 16
      done ;;
    int32|replicas)
      run int32-offsets-27 --system gpu_scale_int32_edge_offsets --target spmm --graph kronecker:27 --rows 1000 --expect caught
      run int32-offsets-16 --system gpu_scale_int32_edge_offsets --target spmm --graph kronecker:16 --rows 1000 ;;&
    softmax|replicas)
      run softmax-hubs-25 --system gpu_scale_softmax_no_max_on_hubs --target edge_softmax --graph kronecker:25 --rows 100 --magnitude 100 --expect caught
      run softmax-hubs-16 --system gpu_scale_softmax_no_max_on_hubs --target edge_softmax --graph kronecker:16 --rows 1000 --magnitude 100
      run softmax-reference-25 --system gpu --target edge_softmax --graph kronecker:25 --rows 100 --magnitude 100 ;;&
    race|replicas)
      run race-hubs-25 --system gpu_scale_race_on_hubs --target spmm --graph kronecker:25 --rows 10000 --expect caught
      run race-hubs-16 --system gpu_scale_race_on_hubs --target spmm --graph kronecker:16 --rows 1000 ;;&
    int32|softmax|race|replicas) ;;
    symmetric)
      for s in 21 23; do
        run "gcn-$s-symmetric" --system gpu --target gcn --graph kronecker:$s --rows 10000 --features 16 --out-features 16
      done ;;
    *) echo "unknown group '$group' (layers25 scale27 rows edges replicas int32 softmax race symmetric)" >&2; exit 2 ;;
  esac
done
echo
cat "$table"
