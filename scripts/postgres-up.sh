#!/usr/bin/env bash
# Makes sure the local Postgres answers on 127.0.0.1:5432 and that the test database exists.
set -euo pipefail
PGHOST=${PGHOST:-127.0.0.1}
PGPORT=${PGPORT:-5432}
PGUSER=${PGUSER:-postgres}
export PGHOST PGPORT PGUSER

if ! pg_isready -q -h "$PGHOST" -p "$PGPORT" 2>/dev/null; then
  echo "Postgres is down; starting the local cluster"
  version=$(ls /etc/postgresql | sort -n | tail -1)
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
  for _ in $(seq 1 30); do pg_isready -q -h "$PGHOST" -p "$PGPORT" && break; sleep 1; done
fi
pg_isready -h "$PGHOST" -p "$PGPORT" >/dev/null || { echo "Postgres did not come up on $PGHOST:$PGPORT" >&2; exit 1; }
psql -q -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'hivegate_test'" | grep -q 1 \
  || psql -q -d postgres -c "CREATE DATABASE hivegate_test"
