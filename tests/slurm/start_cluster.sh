#!/usr/bin/env bash
# Starts a single-node Slurm cluster on this machine (Debian's slurm-wlm and munge): munged,
# slurmctld and slurmd on localhost, configured in a folder of their own, so nothing under
# /etc/slurm is touched. For tests and for trying the README's job-array recipe.
#   bash tests/slurm/start_cluster.sh DIR     start (or reuse) the cluster; writes DIR/env
#   bash tests/slurm/start_cluster.sh DIR stop
# Then: source DIR/env (it sets SLURM_CONF) and use sbatch, squeue, scancel as usual.
# Needs root (the daemons run as root here; munged as the munge user). Exit 3: cannot start
# (not root, packages missing); 1: started but not working.
set -euo pipefail
dir=${1:?usage: start_cluster.sh DIR [stop]}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
conf=$dir/slurm.conf

stop() {
  for p in slurmd slurmctld; do
    if [ -f "$dir/$p.pid" ]; then kill "$(cat "$dir/$p.pid")" 2>/dev/null || true; rm -f "$dir/$p.pid"; fi
  done
}
if [ "${2:-}" = stop ]; then stop; exit 0; fi

[ "$(id -u)" = 0 ] || { echo "start_cluster: needs root" >&2; exit 3; }
for t in munged slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] || { echo "start_cluster: $t not installed (slurm-wlm, munge: scripts/setup.sh)" >&2; exit 3; }
done
export PATH=$PATH:/usr/sbin

# munge: the key the package made (or a new one), the daemon as its own user.
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown -R munge:munge /etc/munge && chmod 0700 /etc/munge && chmod 0400 /etc/munge/munge.key
mkdir -p /run/munge /var/lib/munge /var/log/munge && chown munge:munge /run/munge /var/lib/munge /var/log/munge
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  runuser -u munge -- munged
  for _ in $(seq 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi
munge -n </dev/null | unmunge >/dev/null || { echo "start_cluster: munged does not answer" >&2; exit 1; }

host=$(hostname -s)
node=$(slurmd -C | head -1)   # "NodeName=HOST CPUs=... RealMemory=...": this machine as slurmd sees it
mkdir -p "$dir/state" "$dir/spool" "$dir/log"
cat > "$conf" <<CONF
ClusterName=histeq
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
# No cgroups (a container may not delegate them): processes tracked by their parents.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
# A cancelled task gets SIGTERM, then SIGKILL 5 s later.
KillWait=5
SchedulerParameters=batch_sched_delay=0
MessageTimeout=20
$node State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
echo "export SLURM_CONF=$conf PATH=\$PATH:/usr/sbin" > "$dir/env"
export SLURM_CONF=$conf

if ! scontrol ping 2>/dev/null | grep -q UP; then
  stop
  slurmctld -f "$conf"
  slurmd -f "$conf"
fi
for _ in $(seq 100); do
  state=$(sinfo -h -N -o %t 2>/dev/null | head -1)
  case $state in idle|mix|alloc) echo "start_cluster: node $host $state (SLURM_CONF=$conf)"; exit 0 ;; esac
  sleep 0.2
done
echo "start_cluster: the node did not come up (state '${state:-?}'); logs in $dir/log" >&2
tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
exit 1
