# transferd in a container: a static-stdlib release build, run as a non-root user on Debian slim.
#
#   docker build -t transferd .
#   docker run -p 8080:8080 -v transferd-data:/data -e TRANSFERD_TOKENS=... transferd
#
# Build with another toolchain image: docker build --build-arg SWIFT_IMAGE=swift:6.1-bookworm .

ARG SWIFT_IMAGE=swift:6.3-bookworm

# ---- build ----
FROM ${SWIFT_IMAGE} AS build

# The three C libraries' headers and pkg-config, which the system-library targets use to find them.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libcurl4-openssl-dev libmicrohttpd-dev libsqlite3-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /src

# Dependencies first, so that this layer stays cached while only the sources change.
COPY Package.swift ./
RUN swift package resolve

COPY . .
# --static-swift-stdlib links the Swift runtime and Foundation into the binary, so the runtime
# image needs only the C libraries. The binary is copied out of .build for the next stage.
RUN swift build -c release --static-swift-stdlib --product transferd \
    && install -D -m 0755 \
        "$(swift build -c release --static-swift-stdlib --show-bin-path)/transferd" /out/transferd

# ---- runtime ----
FROM debian:bookworm-slim

# The shared libraries the binary links (libcurl, libmicrohttpd, SQLite) and CA certificates for
# HTTPS transfers, and the public suffix list the cookie jars refuse supercookies with; nothing
# else (the health check below needs only bash, which Debian always has).
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libcurl4 libmicrohttpd12 libsqlite3-0 ca-certificates publicsuffix \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --system --user-group --uid 10001 --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin transferd \
    && install -d -o transferd -g transferd -m 0750 /data

COPY --from=build /out/transferd /usr/local/bin/transferd

USER transferd
WORKDIR /data

# Listen on all interfaces so the published port reaches the daemon; keep state in the volume.
# The daemon refuses to listen beyond loopback without API tokens: pass TRANSFERD_TOKENS
# (or, on a trusted network only, TRANSFERD_ALLOW_UNAUTHENTICATED=1). Secure by default.
ENV TRANSFERD_LISTEN=0.0.0.0:8080 \
    TRANSFERD_DATA_DIR=/data

VOLUME /data
EXPOSE 8080

# The binary has no self-check command yet, and curl would add a dozen libraries to the image:
# bash's /dev/tcp sends GET /healthz to the port in TRANSFERD_LISTEN on loopback and expects 200.
# (If TRANSFERD_LISTEN names a non-loopback address instead of 0.0.0.0, adjust this check.)
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${TRANSFERD_LISTEN##*:} && printf 'GET /healthz HTTP/1.1\\r\\nHost: localhost\\r\\nConnection: close\\r\\n\\r\\n' >&3 && head -c 12 <&3 | grep -q ' 200'"]

# The daemon shuts down cleanly on SIGTERM (docker stop) and on SIGINT.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/transferd"]
