# Shared by the comparison scripts (sourced, not run): process trees, a quiet
# machine, and an nginx origin serving Benchmarks/.images on loopback.
# Needs: $work (a scratch folder the caller removes) and $nginx (the binary).

descendants() {  # PID: its children, grandchildren...
  local child
  for child in $(pgrep -P "$1" || true); do echo "$child"; descendants "$child"; done
}
running() {  # PID...: whether any of them still runs (a zombie does not)
  local pid
  for pid in "$@"; do
    [ -r "/proc/$pid/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$pid/status" 2>/dev/null && return 0
  done
  return 1
}
stop_process_tree() {  # PID: TERM the process, then its descendants
  local pid=$1 children
  children=$(descendants "$pid")
  # The parent first: a server that supervises workers would restart them.
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do running "$pid" || break; sleep 0.1; done
  # shellcheck disable=SC2086
  [ -n "$children" ] && kill $children 2>/dev/null || true
  for _ in $(seq 1 100); do
    # shellcheck disable=SC2086
    running "$pid" $children || break
    sleep 0.1
  done
  # shellcheck disable=SC2086
  # A process may end between the check and the kill: that is not a failure.
  for child in "$pid" $children; do running "$child" && kill -9 "$child" 2>/dev/null || true; done
  wait "$pid" 2>/dev/null || true
}

# The machine may be shared (builds and tests of other checkouts): before
# measuring, wait until no Swift build runs and the cores are 85% idle over
# two seconds (at most 30 minutes). IDLE_PERCENT=0 measures at once (an A/B
# of two builds in turns beside a known, steady load such as a niced fuzzer).
builds_running() { pgrep -x swift-build >/dev/null || pgrep -x swift-frontend >/dev/null; }
wait_for_quiet() {
  local deadline=$((SECONDS + 1800)) idle
  while [ $SECONDS -lt $deadline ]; do
    if builds_running; then sleep 20; continue; fi
    idle=$(awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; sleep 2
           awk '/^cpu / { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
    # shellcheck disable=SC2086
    set -- $idle
    [ $(( ($3 - $1) * 100 / ($4 - $2 + 1) )) -ge "${IDLE_PERCENT:-85}" ] && return 0
    sleep 10
  done
  echo "$(basename "$0"): the machine stayed busy; measuring anyway" >&2
}

# start_origin PORT: nginx serving Benchmarks/.images on 127.0.0.1:PORT, one
# worker, no access log; sets $nginx_pid. Returns once PROBE (a path under the
# folder) answers.
start_origin() {
  local port=$1 probe=$2
  mkdir -p "$work/nginx"
  cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
pid $work/nginx/nginx.pid;
worker_processes 1;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
  types { image/jpeg jpg; image/png png; image/webp webp; image/gif gif; }
  default_type application/octet-stream;
  access_log off;
  sendfile on;
  keepalive_requests 100000;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  server {
    listen 127.0.0.1:$port;
    root $PWD/Benchmarks/.images;
  }
}
CONF
  "$nginx" -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" &
  nginx_pid=$!
  for _ in $(seq 1 100); do curl -fso /dev/null "http://127.0.0.1:$port/$probe" && return 0; sleep 0.1; done
  echo "$(basename "$0"): nginx did not start:" >&2
  cat "$work/nginx/error.log" >&2
  exit 1
}
