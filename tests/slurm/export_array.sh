#!/bin/bash
# histeq on a Slurm job array: task I exports the I-th file of IN/ (histeq export IN/ -o OUT/ --list,
# line I) into OUT/, and writes its result to REPORTS/JOB_TASK.json. Any further arguments go to
# histeq export (e.g. --resume, -c ffv1).
#
#   n=$(histeq export IN/ -o OUT/ --list | wc -l)
#   sbatch --array=0-$((n - 1)) tests/slurm/export_array.sh IN OUT REPORTS
#   # tasks killed (preempted, a node lost)? Submit the same array again with --resume: complete
#   # outputs are skipped, the rest exported again, and what a killed task left is removed.
#   sbatch --array=0-$((n - 1)) tests/slurm/export_array.sh IN OUT REPORTS --resume
#   python3 tests/slurm/merge_reports.py REPORTS/*.json     # done, skipped, failed over the runs
#
# Exit: 0 written or skipped; 1 the file failed (reported); 143 cancelled (scancel's SIGTERM).
# HISTEQ names the binary (default: histeq on PATH). tests/slurm/test_job_array.py runs this file.
#SBATCH --job-name=histeq-export
#SBATCH --cpus-per-task=1
set -euo pipefail
in=${1:?usage: export_array.sh IN OUT REPORTS [histeq export options]}
out=${2:?} reports=${3:?}
shift 3
mkdir -p "$reports"
exec "${HISTEQ:-histeq}" export "$in/" -o "$out/" --index "$SLURM_ARRAY_TASK_ID" --progress plain \
  --report "$reports/${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}.json" "$@"
