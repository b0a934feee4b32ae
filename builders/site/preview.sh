#!/bin/sh
# `npm run preview -- --port N`: npm appends its arguments to the script, and
# make reads `--port` as an option of its own; this turns them into PORT=N for
# `make preview` (the seed's command, as written, works).
port=${PORT:-8000}
while [ $# -gt 0 ]; do
  case $1 in
    --port) [ $# -ge 2 ] || { echo "npm run preview: --port needs a number" >&2; exit 64; }; port=$2; shift ;;
    --port=*) port=${1#--port=} ;;
    *) echo "npm run preview: unknown option $1 (expected --port N)" >&2; exit 64 ;;
  esac
  shift
done
case $port in ''|*[!0-9]*) echo "npm run preview: --port: expected a number, got '$port'" >&2; exit 64 ;; esac
PORT=$port exec make --no-print-directory preview
