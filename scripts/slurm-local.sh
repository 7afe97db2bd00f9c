#!/usr/bin/env bash
# A real single-node Slurm on this machine, from Debian's packages: munge, slurmctld, slurmd,
# and slurmdbd on a local MariaDB so that `sacct` answers too. For trying `--executor slurm`
# and for tests/slurm; not a production setup (no cgroups, everything runs as root).
#
#   sudo bash scripts/slurm-local.sh      # then: sinfo; sbatch --wrap hostname; sacct
#
# Idempotent: what is installed is not reinstalled, a daemon that runs is left alone, and a
# configuration that this script did not write is never overwritten.
# Exit status: 0 the node is idle and takes jobs; 3 the packages could not be installed
# (no package registry, or not Debian); anything else: installed but Slurm did not come up.
set -euo pipefail

MARK="# written by aorta scripts/slurm-local.sh"
CONF=/etc/slurm/slurm.conf
DBD_CONF=/etc/slurm/slurmdbd.conf
CLUSTER=aorta-local
NODE=$(hostname -s)
LOGS=/var/log/slurm
PACKAGES=(munge slurmctld slurmd slurm-client slurmdbd mariadb-server)

say() { echo "slurm-local: $*" >&2; }
die() { say "error: $*"; for f in "$LOGS"/*.log; do [ -f "$f" ] && tail -n 20 "$f" >&2; done; exit 1; }

# shellcheck source=debian-packages.sh
source "$(dirname "$0")/debian-packages.sh"

node_state() { timeout 10 sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null | head -n 1; }
node_idle() { [[ "$(node_state)" =~ ^(idle|mixed|allocated)$ ]]; }
running() { pgrep -x "$1" >/dev/null; }

# `write_conf PATH MODE < TEXT`: write our config, unless someone else's is already there.
write_conf() {
    local text; text=$(cat)
    if [ -f "$1" ] && ! grep -qF "$MARK" "$1"; then
        die "$1 exists and was not written by this script; move it away to use this script"
    fi
    printf '%s\n%s\n' "$MARK" "$text" >"$1.new" && chmod "$2" "$1.new" && mv "$1.new" "$1"
}

configure() {
    local cpus mem_mib
    cpus=$(nproc)
    # RealMemory must not exceed what slurmd finds, or the node is drained: leave a margin.
    mem_mib=$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)
    mkdir -p /etc/slurm "$LOGS" /var/spool/slurmctld /var/spool/slurmd
    write_conf "$CONF" 644 <<EOF
ClusterName=$CLUSTER
SlurmctldHost=$NODE
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobCompType=jobcomp/none
ReturnToService=2
MpiDefault=none
SlurmdTimeout=60
NodeName=$NODE CPUs=$cpus RealMemory=$mem_mib State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
    # root reaches MariaDB through its socket (unix_socket authentication): no password to keep.
    write_conf "$DBD_CONF" 600 <<EOF
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
PidFile=/run/slurmdbd.pid
LogFile=$LOGS/slurmdbd.log
EOF
}

start_daemons() {
    if ! running munged; then
        say "starting munged"
        # --force: a munged killed earlier leaves its socket behind.
        install -d -o munge -g munge -m 0755 /run/munge
        timeout 30 runuser -u munge -- munged --force || die "munged did not start"
    fi
    until_true 20 timeout 10 munge -n || die "munge does not answer"
    if ! running mariadbd && ! running mysqld; then
        say "starting MariaDB"
        mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
        timeout 60 /etc/init.d/mariadb start >/dev/null || die "MariaDB did not start"
    fi
    until_true 60 timeout 10 mariadb -e "SELECT 1" || die "MariaDB does not answer"
    if ! running slurmdbd; then
        say "starting slurmdbd"
        timeout 30 slurmdbd || die "slurmdbd did not start"
    fi
    until_true 60 timeout 10 sacctmgr -n show cluster || die "slurmdbd does not answer"
    if [ -z "$(timeout 10 sacctmgr -n -P show cluster "$CLUSTER" format=cluster)" ]; then
        timeout 20 sacctmgr -i add cluster "$CLUSTER" >/dev/null || die "cannot add the cluster"
    fi
    if ! running slurmctld; then
        say "starting slurmctld"
        timeout 30 slurmctld || die "slurmctld did not start"
    fi
    until_true 30 timeout 10 scontrol ping || die "slurmctld does not answer"
    if ! running slurmd; then
        say "starting slurmd"
        timeout 30 slurmd || die "slurmd did not start"
    fi
}

main() {
    [ "$(id -u)" -eq 0 ] || { say "run as root (it installs packages and starts daemons)"; exit 1; }
    if command -v sinfo >/dev/null && node_idle && command -v sacct >/dev/null \
            && timeout 10 sacct -n -X -S now-1minutes >/dev/null 2>&1; then
        say "already running: node $NODE is up"
        return 0
    fi
    install_packages
    configure
    start_daemons
    # A node left down or drained by an earlier, killed slurmd is put back in service.
    sleep 1
    if [[ "$(node_state)" =~ ^(down|drain|drained|draining|fail) ]]; then
        timeout 10 scontrol update NodeName="$NODE" State=RESUME || true
    fi
    until_true 60 node_idle || die "node $NODE did not become idle: $(sinfo -N 2>&1 | tail -n 1)"
    say "ready: $(sinfo -h -N -o '%N %t %c CPUs %m MiB' | head -n 1)"
}

main "$@"
