#!/usr/bin/env bash
# A local PostgreSQL server from Debian's packages, with a role and a database for the history
# tests (tests/history run every test against it as well as against SQLite):
#
#   sudo bash scripts/postgres-local.sh
#   # then: postgresql://aorta@127.0.0.1:5432/aorta_test with the password in $PGPASSWORD
#
# The role's password is a fixed test value (`aorta-test-secret`), good for a server that
# listens on the loopback address only, and deliberately present so the tests can check that a
# password given in a --db URL is never printed. Not a production setup.
#
# Idempotent: what is installed is not reinstalled, a running cluster is left alone, the role
# and the database are created only when missing.
# Exit status: 0 the server answers; 3 the packages could not be installed (no package
# registry, or not Debian); anything else: installed but the server did not come up.
set -euo pipefail

ROLE=aorta
PASSWORD=aorta-test-secret
DATABASE=aorta_test
PACKAGES=(postgresql postgresql-client)

say() { echo "postgres-local: $*" >&2; }
die() {
    say "error: $*"
    for f in /var/log/postgresql/*.log; do [ -f "$f" ] && tail -n 20 "$f" >&2; done
    exit 1
}

# shellcheck source=debian-packages.sh
source "$(dirname "$0")/debian-packages.sh"

# The newest installed major version, and its cluster (Debian's package creates `main`).
cluster() {
    local version
    version=$(ls /usr/lib/postgresql | sort -n | tail -n 1)
    [ -n "$version" ] || die "no PostgreSQL server found under /usr/lib/postgresql"
    if ! pg_lsclusters -h | awk '{print $1, $2}' | grep -qx "$version main"; then
        say "creating cluster $version/main"
        pg_createcluster "$version" main >/dev/null || die "pg_createcluster failed"
    fi
    echo "$version"
}

psql_admin() { runuser -u postgres -- psql -v ON_ERROR_STOP=1 -qtA "$@"; }

main() {
    [ "$(id -u)" -eq 0 ] || { say "run as root (it installs packages and starts a server)"; exit 1; }
    install_packages
    local version port
    version=$(cluster)
    if ! pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {print $4}' \
            | grep -q online; then
        say "starting PostgreSQL $version"
        timeout 60 pg_ctlcluster "$version" main start || die "the server did not start"
    fi
    port=$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main" {print $3}')
    until_true 30 runuser -u postgres -- pg_isready -q -p "$port" || die "the server does not answer"
    if [ "$(psql_admin -p "$port" -c "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" != 1 ]; then
        psql_admin -p "$port" -c "CREATE ROLE $ROLE LOGIN PASSWORD '$PASSWORD'" \
            || die "cannot create role $ROLE"
    fi
    if [ "$(psql_admin -p "$port" -c "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'")" != 1 ]; then
        psql_admin -p "$port" -c "CREATE DATABASE $DATABASE OWNER $ROLE" \
            || die "cannot create database $DATABASE"
    fi
    PGPASSWORD=$PASSWORD timeout 10 psql -h 127.0.0.1 -p "$port" -U "$ROLE" -d "$DATABASE" \
        -qtAc "SELECT 1" >/dev/null || die "$ROLE cannot log in over TCP on 127.0.0.1:$port"
    say "ready: PostgreSQL $version on 127.0.0.1:$port, database $DATABASE, role $ROLE"
}

main "$@"
