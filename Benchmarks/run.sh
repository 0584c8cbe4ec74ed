#!/usr/bin/env bash
# The benchmark of issue 6 in one command (see Docs/Benchmarks.md):
#
#   bash Benchmarks/run.sh            full run: writes Benchmarks/results/latest.{json,md}, chart.svg and the
#                                     results block of Docs/Benchmarks.md (about 6-8 minutes on 2 cores)
#   bash Benchmarks/run.sh --quick    every section with small counts (CI): writes results/quick.*
#   bash Benchmarks/run.sh --sections download,decode    only these sections: writes results/partial.* (no docs update)
#
# Installs what it needs (Debian packages: curl, libjpeg-turbo-progs, valgrind, libvips-tools, time, redis-server and
# libhiredis0.14 for the Fleet section, whose redis-server runs on a free port without persistence and stops on exit;
# nginx is unpacked from its
# .deb into a temporary directory with `apt-get download` + `dpkg -x`, so no system service is started;
# Pillow and numpy from pip when possible, optional), builds the benchmark in release mode, generates the test images,
# serves them from nginx on a free 127.0.0.1 port and stops it on exit.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"

mode=()
sections=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) mode=(--quick) ;;
        --sections) sections="${2:?--sections needs a list}"; shift ;;
        *) echo "usage: $0 [--quick] [--sections download,coalescing,decode,progressive,memory,instructions,thumbnail,transports,transport-instructions,animation,fleet]" >&2; exit 2 ;;
    esac
    shift
done

corpus="${OPERATIONDOWNLOADER_CORPUS:-$repo/../shared/corpus}"
if [ ! -f "$corpus/sdwebimage/TestJFIF.jpg" ]; then
    echo "run.sh: the shared corpus is missing ($corpus); set OPERATIONDOWNLOADER_CORPUS" >&2
    exit 1
fi

# --- tools ---------------------------------------------------------------------------------------------
need=()
command -v curl >/dev/null || need+=(curl)
command -v djpeg >/dev/null && command -v cjpeg >/dev/null && command -v jpegtran >/dev/null || need+=(libjpeg-turbo-progs)
command -v valgrind >/dev/null || need+=(valgrind)
command -v python3 >/dev/null || need+=(python3)
command -v objcopy >/dev/null || need+=(binutils)
command -v vipsthumbnail >/dev/null || need+=(libvips-tools)  # the Thumbnail section's reference
command -v openssl >/dev/null || need+=(openssl)
command -v redis-server >/dev/null || need+=(redis-server)  # the Fleet section's shared cache
[ -x /usr/bin/time ] || need+=(time)  # measures each child's own peak RSS (ChildProcess.swift says why)
command -v avifdec >/dev/null && command -v avifenc >/dev/null || need+=(libavif-bin)  # the AVIF files and reference
for p in libjpeg62-turbo-dev libpng-dev zlib1g-dev libhiredis0.14; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
apt_updated=0
if [ ${#need[@]} -gt 0 ]; then
    echo "run.sh: installing ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt_updated=1
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if ! python3 -c "import PIL" 2>/dev/null; then
    # Optional reference decoder; the benchmark notes its absence.
    python3 -m pip install --quiet Pillow >/dev/null 2>&1 || echo "run.sh: Pillow not installed (optional)" >&2
fi
if ! python3 -c "import numpy" 2>/dev/null; then
    # The Thumbnail section's quality comparison (PSNR/SSIM); optional too.
    python3 -m pip install --quiet numpy >/dev/null 2>&1 || echo "run.sh: numpy not installed (optional)" >&2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/operationdownloader-bench.XXXXXX")"
nginx_pid=""
redis_pid=""
cleanup() {
    if [ -n "$nginx_pid" ]; then
        kill "$nginx_pid" 2>/dev/null || true
        wait "$nginx_pid" 2>/dev/null || true
    fi
    if [ -n "$redis_pid" ]; then
        kill "$redis_pid" 2>/dev/null || true
        wait "$redis_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# nginx from Debian's package, unpacked (never installed as a service).
nginx_bin="$(command -v nginx || true)"
if [ -z "$nginx_bin" ]; then
    mkdir -p "$work/nginx-deb"
    chmod 777 "$work/nginx-deb"  # apt's download step runs as the _apt user where it can
    if ! (cd "$work/nginx-deb" && apt-get download nginx >/dev/null 2>&1); then
        [ "$apt_updated" = 1 ] || apt-get update -qq
        (cd "$work/nginx-deb" && apt-get download nginx >/dev/null 2>&1)
    fi
    dpkg -x "$work"/nginx-deb/nginx_*.deb "$work/nginx-root"
    nginx_bin="$work/nginx-root/usr/sbin/nginx"
fi

# --- build ---------------------------------------------------------------------------------------------
echo "run.sh: building (release)" >&2
swift build -c release --product Benchmarks >&2
swift build -c release --product imagedl >&2   # the Thumbnail section runs it
bench="$(swift build -c release --product Benchmarks --show-bin-path)/Benchmarks"

# --- fixtures and server -------------------------------------------------------------------------------
"$bench" prepare --dir "$work" --corpus "$corpus" "${mode[@]}"
# nginx's worker drops root privileges (to nobody): let it read the generated files.
chmod -R a+rX "$work"

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
tls_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
mkdir -p "$work/nginx/tmp"

# The HTTPS/HTTP/2 variant of the transport sections: a CA and a certificate for 127.0.0.1 made here. curl gets
# --cacert, the curl transport tls.caFile; URLSession on Linux trusts only the system bundle, so its children
# run in a private mount namespace where bundle.pem (system bundle + this CA) is mounted over it.
tls="$work/tls"
mkdir -p "$tls"
(
    cd "$tls"
    key() { openssl req "$@" -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes 2>/dev/null; }
    key -x509 -keyout ca.key -out ca.pem -days 2 -subj '/CN=OperationDownloader benchmark CA' \
        -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign'
    key -keyout server.key -out server.csr -subj '/CN=127.0.0.1'
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext 2>/dev/null
    cat /etc/ssl/certs/ca-certificates.crt ca.pem > bundle.pem 2>/dev/null || cp ca.pem bundle.pem
)
tls_args=(--tls-base-url "https://127.0.0.1:$tls_port" --ca-file "$tls/ca.pem")
if unshare -m sh -c "mount --bind '$tls/bundle.pem' /etc/ssl/certs/ca-certificates.crt" 2>/dev/null; then
    tls_args+=(--ca-bundle "$tls/bundle.pem")
else
    echo "run.sh: no private mount namespace here (unshare -m): URLSession over HTTPS is not measured" >&2
fi
cat > "$work/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
    types { image/jpeg jpg; image/png png; image/gif gif; image/webp webp; }
    default_type application/octet-stream;
    access_log $work/nginx/access.log;
    client_body_temp_path $work/nginx/tmp/body;
    proxy_temp_path $work/nginx/tmp/proxy;
    fastcgi_temp_path $work/nginx/tmp/fastcgi;
    uwsgi_temp_path $work/nginx/tmp/uwsgi;
    scgi_temp_path $work/nginx/tmp/scgi;
    sendfile on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    server {
        listen 127.0.0.1:$port;
        root $work/www;
        location / { }
        # The Fleet section: the same files, cacheable for an hour (its processes share them through Redis).
        location /fleet/ { alias $work/www/; expires 1h; }
    }
    server {
        listen 127.0.0.1:$tls_port ssl http2;
        ssl_certificate $tls/server.pem;
        ssl_certificate_key $tls/server.key;
        root $work/www;
        location / { }
    }
}
EOF
"$nginx_bin" -e "$work/nginx/error.log" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
nginx_pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
    curl -sf -o /dev/null "$base/animated.gif" && break
    sleep 0.1
done
curl -sf -o /dev/null "$base/animated.gif" || { echo "run.sh: nginx did not start" >&2; tail -5 "$work/nginx/error.log" >&2; exit 1; }

# redis-server for the Fleet section: a free port, no persistence, stopped by cleanup.
redis_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
mkdir -p "$work/redis"
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work/redis" \
    --maxmemory 512mb --maxmemory-policy allkeys-lru --loglevel warning --logfile "$work/redis/redis.log" &
redis_pid=$!
for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null && break
    sleep 0.1
done

# --- run -----------------------------------------------------------------------------------------------
args=(run --dir "$work" --base-url "$base" --access-log "$work/nginx/access.log" --results "$repo/Benchmarks/results" "${tls_args[@]}"
      --redis-url "redis://127.0.0.1:$redis_port/0")
if [ -n "$sections" ]; then
    args+=(--sections "$sections")
elif [ ${#mode[@]} -eq 0 ]; then
    args+=(--docs "$repo/Docs/Benchmarks.md")
fi
"$bench" "${args[@]}" "${mode[@]}"
