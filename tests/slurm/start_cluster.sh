#!/usr/bin/env bash
# Starts a single-node Slurm cluster on this machine (Debian's slurm-wlm and munge) that belongs to
# this run alone: its own munged (a key, socket and state of its own), slurmctld and slurmd on
# ports that were free, and every file of it in a private folder made for the run (mktemp -d,
# root's, 0711). Nothing under /etc is read or written, and a cluster of another run is never
# reused or stopped. For tests and for trying the README's job-array recipe.
#   bash tests/slurm/start_cluster.sh DIR     start a new cluster; writes DIR/env and DIR/run
#   bash tests/slurm/start_cluster.sh DIR stop
# Then: source DIR/env (it sets SLURM_CONF) and use sbatch, squeue, scancel as usual. DIR/run
# names the private folder (its slurm.conf, logs under log/). A DIR whose cluster is still running
# is refused: stop it first (or use another DIR).
# Needs root (the daemons run as root here; munged as the munge user). Exit 3: cannot start
# (not root, packages missing); 1: started but not working, or DIR's cluster still running.
set -euo pipefail
dir=${1:?usage: start_cluster.sh DIR [stop]}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# The daemon whose pid file is $1, when it is alive and is the process this run started: its
# command line names this run's folder (a pid reused by another process is left alone).
own_pid() {
  local f=$1 pid
  [ -s "$f" ] || return 1
  pid=$(cat "$f")
  [[ $pid =~ ^[0-9]+$ ]] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' < "/proc/$pid/cmdline" | grep -qF -- "$run" || return 1
  echo "$pid"
}

stop() {
  [ -s "$dir/run" ] || return 0
  run=$(cat "$dir/run")
  local p pid
  for p in slurmd slurmctld munged; do
    if pid=$(own_pid "$run/$p.pid"); then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
  done
  case $run in "${TMPDIR:-/tmp}"/histeq-slurm.*) rm -rf -- "$run" ;; esac
  rm -f "$dir/run" "$dir/env"
}
if [ "${2:-}" = stop ]; then stop; exit 0; fi

[ "$(id -u)" = 0 ] || { echo "start_cluster: needs root" >&2; exit 3; }
for t in munged munge unmunge slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v "$t" >/dev/null || [ -x "/usr/sbin/$t" ] || { echo "start_cluster: $t not installed (slurm-wlm, munge: scripts/setup.sh)" >&2; exit 3; }
done
id munge >/dev/null 2>&1 || { echo "start_cluster: no munge user (the munge package makes it)" >&2; exit 3; }
export PATH=$PATH:/usr/sbin

if [ -s "$dir/run" ]; then
  run=$(cat "$dir/run")
  if own_pid "$run/slurmctld.pid" >/dev/null || own_pid "$run/slurmd.pid" >/dev/null; then
    echo "start_cluster: $dir: its cluster is still running ($run); stop it first: start_cluster.sh DIR stop" >&2
    exit 1
  fi
  stop  # what a run that was not stopped left
fi

run=$(mktemp -d "${TMPDIR:-/tmp}/histeq-slurm.XXXXXX")
chmod 0711 "$run"
printf '%s\n' "$run" > "$dir/run"
# A start that fails ends what it started (its logs are shown first).
trap 'rc=$?; if [ $rc != 0 ]; then tail -5 "$run"/log/*.log "$run/munge/munged.log" >&2 2>/dev/null || true; stop; fi' EXIT
conf=$run/slurm.conf

# munge: a key of this run, the daemon as its own user, on a socket of its own.
mkdir -p "$run/munge"
dd if=/dev/urandom of="$run/munge/munge.key" bs=1024 count=1 status=none
chown -R munge:munge "$run/munge"
chmod 0755 "$run/munge" && chmod 0400 "$run/munge/munge.key"
socket=$run/munge/munge.socket
runuser -u munge -- munged --socket="$socket" --key-file="$run/munge/munge.key" --pid-file="$run/munge/munged.pid" \
  --log-file="$run/munge/munged.log" --seed-file="$run/munge/munged.seed"
for _ in $(seq 50); do munge -S "$socket" -n </dev/null 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1 && break; sleep 0.1; done
munge -S "$socket" -n </dev/null | unmunge -S "$socket" >/dev/null || { echo "start_cluster: munged does not answer" >&2; exit 1; }
ln -s munge/munged.pid "$run/munged.pid"

# Two TCP ports nothing listens on now (the kernel's choice), for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("", 0))
print(*(x.getsockname()[1] for x in s))')

host=$(hostname -s)
node=$(slurmd -C | head -1)   # "NodeName=HOST CPUs=... RealMemory=...": this machine as slurmd sees it
mkdir -p "$run/state" "$run/spool" "$run/log"
cat > "$conf" <<CONF
ClusterName=histeq
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$run/state
SlurmdSpoolDir=$run/spool
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
SlurmctldLogFile=$run/log/slurmctld.log
SlurmdLogFile=$run/log/slurmd.log
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
# The file users `source`: every value quoted for the shell (a folder's name is any bytes).
printf 'export SLURM_CONF=%q\nexport PATH="$PATH:/usr/sbin"\n' "$conf" > "$dir/env"
export SLURM_CONF=$conf

slurmctld -f "$conf"
slurmd -f "$conf"
for _ in $(seq 100); do
  state=$(sinfo -h -N -o %t 2>/dev/null | head -1)
  case $state in idle|mix|alloc) echo "start_cluster: node $host $state (SLURM_CONF=$conf, ports $ctld_port/$slurmd_port)"; exit 0 ;; esac
  sleep 0.2
done
echo "start_cluster: the node did not come up (state '${state:-?}')" >&2
exit 1
