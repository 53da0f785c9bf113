#!/usr/bin/env bash
# Starts a one-node Slurm cluster on this machine so the `spu-sweep` Slurm test runs
# against a real slurmctld and slurmd. Installs Slurm and MUNGE from the
# distribution's packages when they are missing (needs root and apt-get), writes a
# minimal slurm.conf that works without systemd or cgroups, and starts munged,
# slurmctld and slurmd. Safe to run again: a cluster that already answers is left as
# it is, and a slurm.conf this script did not write is never touched.
#
#   bash .ci/slurm-up.sh          # install if needed, start, wait until the node is idle
#   bash .ci/slurm-up.sh --down   # stop the daemons this script started
set -euo pipefail

CONF_DIR=/etc/slurm
CONF=$CONF_DIR/slurm.conf
MARK="# written by spu-toolchain .ci/slurm-up.sh"
STATE=/var/spool/slurmctld
SPOOL=/var/spool/slurmd
LOGS=/var/log/slurm
RUN=/run/slurm

say() { echo "slurm-up: $*"; }

if [[ "${1:-}" == "--down" ]]; then
    for pidfile in "$RUN/slurmd.pid" "$RUN/slurmctld.pid"; do
        if [[ -s "$pidfile" ]]; then
            kill "$(cat "$pidfile")" 2>/dev/null || true
        fi
    done
    say "stopped slurmd and slurmctld"
    exit 0
fi

cluster_answers() {
    command -v sinfo >/dev/null && timeout 10 sinfo -h -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'
}

if cluster_answers; then
    say "a cluster already answers: $(sinfo -h -o '%P %D %T' | head -1)"
    exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
    say "needs root to install and start Slurm; run it as root or skip the Slurm test" >&2
    exit 1
fi

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
    || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
    say "installing Slurm and MUNGE from the distribution's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge
fi

# MUNGE: the package creates the key; make one if it did not.
if [[ ! -s /etc/munge/munge.key ]]; then
    mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
mkdir -p /run/munge /var/lib/munge /var/log/munge
chown munge:munge /run/munge /var/lib/munge /var/log/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "starting munged"
    runuser -u munge -- munged --force
fi
for _ in $(seq 50); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
    sleep 0.1
done
munge -n | unmunge >/dev/null || { say "munged does not answer" >&2; exit 1; }

# slurm.conf: one node (this host) in one partition; no cgroups, no accounting
# database, daemons and jobs as root.
if [[ -e "$CONF" ]] && ! grep -qF "$MARK" "$CONF"; then
    say "$CONF exists and was not written by this script; not touching it" >&2
    exit 1
fi
HOST=$(hostname -s)
CPUS=$(nproc)
MEM_MIB=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 512 ))
mkdir -p "$CONF_DIR" "$STATE" "$SPOOL" "$LOGS" "$RUN"
cat > "$CONF" <<EOF
$MARK
ClusterName=spu-local
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE
SlurmdSpoolDir=$SPOOL
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
# Without systemd or cgroups: track processes through /proc, no task containment.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MaxArraySize=100001
MinJobAge=300
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MIB State=UNKNOWN
PartitionName=local Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
chmod 0644 "$CONF"

if ! { [[ -s "$RUN/slurmctld.pid" ]] && kill -0 "$(cat "$RUN/slurmctld.pid")" 2>/dev/null; }; then
    say "starting slurmctld"
    slurmctld -i
fi
if ! { [[ -s "$RUN/slurmd.pid" ]] && kill -0 "$(cat "$RUN/slurmd.pid")" 2>/dev/null; }; then
    say "starting slurmd"
    slurmd
fi

for _ in $(seq 60); do
    if cluster_answers; then
        say "up: $(sinfo -h -o 'partition %P, %D node(s), %T')"
        exit 0
    fi
    state=$(sinfo -h -o '%T' 2>/dev/null | head -1 || true)
    if [[ "$state" == down* || "$state" == drain* ]]; then
        scontrol update NodeName="$HOST" State=RESUME 2>/dev/null || true
    fi
    sleep 0.5
done
say "the node did not become idle; see $LOGS/slurmctld.log and $LOGS/slurmd.log" >&2
sinfo >&2 || true
exit 1
