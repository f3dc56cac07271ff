# transferd in a container: a static-stdlib release build, run as a non-root user on Debian slim.
#
#   docker build -t transferd --build-arg TRANSFERD_BUILD_COMMIT=$(git rev-parse HEAD) .
#   docker run -p 8080:8080 -v transferd-data:/data -e TRANSFERD_TOKENS=... transferd
#
# Build with another toolchain image: docker build --build-arg SWIFT_IMAGE=swift:6.1-bookworm .
# No Docker engine runs on our machines: scripts/container-check.sh reads this file and replays
# its runtime stage in a debootstrapped chroot (see docs/operations.md). Keep the shapes it reads: the two
# ARGs of the build stage, COPY --from=build /out/..., a JSON-form ENTRYPOINT and HEALTHCHECK.

ARG SWIFT_IMAGE=swift:6.3-bookworm

# ---- build ----
FROM ${SWIFT_IMAGE} AS build

# The C libraries' headers and pkg-config, which the system-library targets use to find them,
# and OpenSSL's (the CCurl shim reads a connection's negotiated TLS version from it). libpq's is
# for the PostgreSQL store (`--database-url`), which transferd links.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libcurl4-openssl-dev libmicrohttpd-dev libsqlite3-dev libssl-dev zlib1g-dev libpq-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src

# Dependencies first, so that this layer stays cached while only the sources change.
COPY Package.swift ./
RUN swift package resolve

# The executables to build and ship (space-separated), and how: --static-swift-stdlib links the
# Swift runtime and Foundation into each binary, so the runtime image needs only the C libraries.
ARG PRODUCTS="transferd transferctl"
ARG SWIFT_BUILD_FLAGS="-c release --static-swift-stdlib"

# The git commit `--version` and transferd_build_info report (Package.swift reads it from the
# environment; the context has no .git): docker build --build-arg TRANSFERD_BUILD_COMMIT=$(git rev-parse HEAD) .
ARG TRANSFERD_BUILD_COMMIT=""

COPY . .
RUN for product in $PRODUCTS; do swift build $SWIFT_BUILD_FLAGS --product "$product" || exit 1; done \
    && bin="$(swift build $SWIFT_BUILD_FLAGS --show-bin-path)" \
    && for product in $PRODUCTS; do install -D -m 0755 "$bin/$product" "/out/$product" || exit 1; done

# ---- runtime ----
FROM debian:bookworm-slim

LABEL org.opencontainers.image.title="transferd" \
      org.opencontainers.image.description="URLSession as a service: sessions and transfer tasks over a REST/JSON API" \
      org.opencontainers.image.base.name="debian:bookworm-slim"

# The shared libraries the binary links (libcurl, OpenSSL, libmicrohttpd, SQLite, libpq for --database-url, zlib) and CA certificates for
# HTTPS transfers, and the public suffix list the cookie jars refuse supercookies with; nothing
# else (the health check below needs only bash, which Debian always has).
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libcurl4 libssl3 libmicrohttpd12 libsqlite3-0 libpq5 zlib1g ca-certificates publicsuffix \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --system --user-group --uid 10001 --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin transferd \
    && install -d -o transferd -g transferd -m 0750 /data

COPY --from=build /out/ /usr/local/bin/

USER transferd
WORKDIR /data

# Listen on all interfaces so the published port reaches the daemon; keep state in the volume.
# The daemon refuses to listen beyond loopback without API tokens: pass TRANSFERD_TOKENS
# (or, on a trusted network only, TRANSFERD_ALLOW_UNAUTHENTICATED=1). Secure by default.
ENV TRANSFERD_LISTEN=0.0.0.0:8080 \
    TRANSFERD_DATA_DIR=/data

VOLUME /data
EXPOSE 8080

# curl would add a dozen libraries to the image: bash's /dev/tcp sends GET /healthz to the address
# in TRANSFERD_LISTEN (0.0.0.0 and :: asked on loopback) and expects 200 within 4 seconds.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["bash", "-c", "listen=${TRANSFERD_LISTEN:-127.0.0.1:8080}; host=${listen%:*}; host=${host#[}; host=${host%]}; case $host in 0.0.0.0|'') host=127.0.0.1;; ::) host=::1;; esac; exec 3<>/dev/tcp/$host/${listen##*:} && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && read -r -t 4 protocol status rest <&3 && [ \"$status\" = 200 ]"]

# transferd is PID 1 and needs no init: it handles SIGTERM and SIGINT itself (a clean shutdown,
# exit 0) and starts no child processes, so there are none to reap. The container check runs it
# as PID 1 of its own PID namespace, where a signal without a handler would be dropped.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/transferd"]
