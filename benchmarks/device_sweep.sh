#!/usr/bin/env bash
# The timed k = 4, seed 0 sweep on a GPU machine, as one prepared script: the CUDA tests, the sweep, its wall
# time (to set beside the CPU's).
#
#   HPSTRAT_COMMIT=<commit> benchmarks/device_sweep.sh DATA.tar.xz OUT_CSV [LOG_DIR] [SECONDS]
#
# DATA.tar.xz  the dataset mirror's twelve folders, packed here beforehand, since the GPU machine
#              reaches no network and the mirror beside the checkout does not travel with it:
#                tar -C ../shared/datasets -cJf DATA.tar.xz Cora CiteSeer Computers Photo CS Physics \
#                    cornell texas wisconsin Actor chameleon_filtered squirrel_filtered
# OUT_CSV      the results file `hpstrat experiment` writes (rows as runs finish; resumable)
# LOG_DIR      where a copy of OUT_CSV (refreshed every 20 s, so a killed call keeps its rows) and the
#              log go (default: OUT_CSV's folder)
# SECONDS      wall-clock limit for the whole script (default 570); a sweep still running then gets
#              SIGINT (finished pairs' rows are kept), and a rerun with the same arguments resumes it
#
# Steps: unpack the data, print the GPU and the package versions, run the CUDA tests of
# tests/engine/test_train.py (a run in a batch equals the run alone on the GPU; GPU against CPU), run the
# sweep on device="cuda" (one process: a fresh process per pair would pay CUDA's start-up 96 times),
# print the sweep's wall time from the rows. DATASETS, DEVICE (default: the twelve, cuda) and SWEEP_ARGS (extra
# `hpstrat experiment` options, default none) make a short rehearsal on a CPU possible
# (tests/experiments/test_experiment.py runs one):
#   DATASETS=Texas DEVICE=cpu SWEEP_ARGS="--max-epochs 5 --patience 5" benchmarks/device_sweep.sh ...
# WORKDIR (default /tmp/hpstrat_device) holds the unpacked data and the dataset cache.
set -u
data=$1 out=$2 logdir=${3:-$(dirname "$2")} limit=${4:-570}
start=$(date +%s)
py=${PYTHON:-python3}
work=${WORKDIR:-/tmp/hpstrat_device}
export PYTHONUNBUFFERED=1 HPSTRAT_DATA=$work/data HPSTRAT_CACHE=$work/cache
mkdir -p "$HPSTRAT_DATA" "$logdir" "$(dirname "$out")"
log=$logdir/device_sweep.log
exec > >(tee -a "$log") 2>&1

echo "== $(date -u +%FT%TZ) commit ${HPSTRAT_COMMIT:-unknown}"
tar -C "$HPSTRAT_DATA" -xJf "$data" && ls "$HPSTRAT_DATA"
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
$py -c "import torch, torch_geometric, numpy, numba; print('torch', torch.__version__, 'cuda', torch.version.cuda,
'pyg', torch_geometric.__version__, 'numpy', numpy.__version__, 'numba', numba.__version__,
'gpu', torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)"

echo "== CUDA tests"
timeout 120 $py -m pytest -q -p no:cacheprovider -o addopts="" tests/engine/test_train.py -k cuda

echo "== sweep"
( while sleep 20; do [ -f "$out" ] && cp "$out" "$logdir/" 2>/dev/null; done ) &
copier=$!
left=$(( limit - ($(date +%s) - start) - 20 ))
datasets=${DATASETS:-Cornell Texas Wisconsin Chameleon Squirrel Cora CiteSeer Actor Photo CS Computers Physics}
timeout --signal=INT "$left" $py -m hpstrat_lite.cli experiment --datasets $datasets \
    --k 4 --seeds 0 --device "${DEVICE:-cuda}" --out "$out" ${SWEEP_ARGS:-}
echo "sweep exit code $?"
kill "$copier" 2>/dev/null
[ "$(cd "$(dirname "$out")" && pwd)" = "$(cd "$logdir" && pwd)" ] || cp "$out" "$logdir/"

$py - "$out" <<'EOF'
import sys
from hpstrat_book.hpstrat import sweep_wall_time
from hpstrat_lite.experiments.results import read_rows

rows = read_rows(sys.argv[1])
t = sweep_wall_time(rows)
print({k: v for k, v in t.items() if not hasattr(v, "shape")})
print(rows.groupby("dataset", sort=False)["seconds"].sum().div(60).round(2).to_string())
EOF
echo "== $(date -u +%FT%TZ) done in $(( $(date +%s) - start )) s"
