#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and benchmarks (never for data you want to keep).
#   scripts/pg_cluster.sh start DIR   initdb into DIR/data, start on 127.0.0.1 and a free port, print the DSN
#   scripts/pg_cluster.sh stop DIR    stop it (the caller removes DIR)
#   scripts/pg_cluster.sh restart DIR stop it and start it again on the same port (fault tests: a server restart)
# As root it runs the server as the OS user `postgres` (created if missing), since postgres refuses root.
# Trust authentication, listening on 127.0.0.1 only: local test use, nothing else. Logs: DIR/server.log.
set -euo pipefail

usage() { echo "usage: $0 start|stop|restart DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd="$1"; dir="$2"

find_bin() {
  local name="$1"
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin/"$name" 2>/dev/null | sort -V | tail -n 1 || true)"
  [ -n "$found" ] || { echo "pg_cluster.sh: $name not found on PATH or in /usr/lib/postgresql/*/bin" >&2; exit 1; }
  echo "$found"
}

as_owner() {  # run a command as the cluster's OS user
  if [ "$(id -u)" = "0" ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 - <<'PY'
import socket
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
PY
}

case "$cmd" in
  start)
    INITDB="$(find_bin initdb)"; PG_CTL="$(find_bin pg_ctl)"
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    if [ "$(id -u)" = "0" ]; then
      id postgres >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin postgres
      chown postgres "$dir"
      chmod 700 "$dir"
    fi
    as_owner "$INITDB" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    # A free port can be taken between the probe and the bind: try a few.
    for attempt in 1 2 3 4 5; do
      port="$(free_port)"
      if as_owner "$PG_CTL" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
          -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200" start >/dev/null 2>&1; then
        echo "$port" >"$dir/port"
        echo "postgresql://postgres@127.0.0.1:$port/postgres"
        exit 0
      fi
      sleep 0.2
    done
    echo "pg_cluster.sh: the server did not start; see $dir/server.log:" >&2
    tail -n 20 "$dir/server.log" >&2 || true
    exit 1
    ;;
  stop)
    PG_CTL="$(find_bin pg_ctl)"
    [ -d "$dir/data" ] || exit 0
    as_owner "$PG_CTL" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
  restart)
    PG_CTL="$(find_bin pg_ctl)"
    [ -d "$dir/data" ] || { echo "pg_cluster.sh: no cluster in $dir" >&2; exit 1; }
    # pg_ctl restart reuses the options of the last start (postmaster.opts): same port, same socket dir.
    as_owner "$PG_CTL" -D "$dir/data" -l "$dir/server.log" -m fast -w -t 60 restart >/dev/null 2>&1 \
      || { echo "pg_cluster.sh: the server did not restart; see $dir/server.log:" >&2; tail -n 20 "$dir/server.log" >&2; exit 1; }
    ;;
  *) usage ;;
esac
