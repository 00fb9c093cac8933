#!/bin/bash
# The HTTP library comparison recorded in docs/benchmarks.md: for each server
# (libmicrohttpd epoll + thread pool with suspend/resume, libmicrohttpd
# thread-per-connection, libevent evhttp with one event loop per thread):
#   A. small keep-alive requests alone (wrk, 64 connections);
#   B. STREAMS watch streams, an event every EVENT_MS ms to each, with wrk
#      (16 connections) running small requests at the same time.
# usage: bench/http_choice.sh [BIN] (default build/bench/http_choice)
set -eu
bin=${1:-build/bench/http_choice}
secs=${SECS:-10}
streams=${STREAMS:-1000}
threads=${THREADS:-2}
port=${PORT:-18080}
export EVENT_MS=${EVENT_MS:-20}
command -v wrk >/dev/null || { echo "wrk not installed (apt-get install wrk)" >&2; exit 1; }
ulimit -n 65536 2>/dev/null || true

for mode in mhd-epoll mhd-threads libevent; do
    "$bin" server "$mode" "$port" "$threads" &
    pid=$!
    sleep 0.5
    echo "== $mode (server threads: $threads)"
    wrk -t1 -c64 -d"${secs}s" "http://127.0.0.1:$port/small" | grep -E 'Requests/sec|Latency'
    "$bin" watch "$port" "$streams" "$secs" &
    wpid=$!
    sleep 1
    wrk -t1 -c16 -d"$((secs - 2))s" --latency "http://127.0.0.1:$port/small" |
        grep -E 'Requests/sec|Latency|99%'
    wait $wpid
    echo "server RSS: $(ps -o rss= -p $pid) KiB, threads: $(ps -o nlwp= -p $pid)"
    kill $pid
    wait $pid 2>/dev/null || true
    port=$((port + 1))
done
