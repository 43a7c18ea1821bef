#!/usr/bin/env bash
# The MPI path of `inflect scan`: 2 ranks under mpirun must write exactly what one process writes.
# Usage: check_mpi_scan.sh INFLECT_BINARY MPIEXEC [SCAN_FILE]
set -euo pipefail
inflect=$1
mpiexec=$2
scan=${3:-workloads/scans/llama3-70b-h100-scaling.yaml}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Open MPI refuses root unless told; CI containers run as root.
extra=(--oversubscribe)
if [ "$(id -u)" -eq 0 ]; then extra+=(--allow-run-as-root); fi

"$inflect" scan "$scan" --jobs 2 --quiet --out "$work/one" > "$work/one.log"
"$mpiexec" "${extra[@]}" -np 2 "$inflect" scan "$scan" --jobs 1 --quiet --out "$work/two" > "$work/two.log"

grep -q "over 2 MPI ranks" "$work/two.log" || { echo "mpi: the 2-rank run did not run over 2 ranks:"; cat "$work/two.log"; exit 1; }
for f in results.jsonl results.csv scan.json report.md report.html; do
  cmp "$work/one/$f" "$work/two/$f" || { echo "mpi: $f differs between 1 process and 2 ranks"; exit 1; }
done
# One summary, from rank 0 only.
[ "$(grep -c '^scan ' "$work/two.log")" -eq 1 ] || { echo "mpi: expected one summary line:"; cat "$work/two.log"; exit 1; }
echo "mpi: 2 ranks wrote the same results.jsonl, results.csv, scan.json and reports as 1 process ($(wc -l < "$work/one/results.jsonl") rows)"
