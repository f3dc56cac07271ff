# shellcheck shell=bash
# Shared by scripts/test.sh and scripts/run.sh: logging, the Swift toolchain, Debian packages.
# Sourced, not run. Expects SCRIPT_NAME to be set by the caller.

# Build dependencies of transferd: the three C libraries and pkg-config to find them.
# shellcheck disable=SC2034 # used by the scripts that source this file
BUILD_APT_PACKAGES=(libcurl4-openssl-dev libmicrohttpd-dev libsqlite3-dev libssl-dev zlib1g-dev libpq-dev pkg-config)

log() {
    printf '==> %s: %s\n' "${SCRIPT_NAME:-script}" "$*" >&2
}

die() {
    printf '==> %s: error: %s\n' "${SCRIPT_NAME:-script}" "$*" >&2
    exit 1
}

# Puts the Swift toolchain on PATH: it is expected at /opt/swift (on PATH already, normally).
ensure_swift() {
    if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
        export PATH="/opt/swift/usr/bin:$PATH"
    fi
    command -v swift >/dev/null 2>&1 || die "the Swift toolchain is not on PATH (expected /opt/swift/usr/bin/swift)"
}

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        die "need root (or sudo) to run: $*"
    fi
}

APT_UPDATED=0

# Installs the Debian packages among "$@" that are not installed yet. Runs 'apt-get update'
# at most once per script run, and only when something is missing.
ensure_apt_packages() {
    local package missing=()
    for package in "$@"; do
        if [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" != "installed" ]; then
            missing+=("$package")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        log "Debian packages already installed: $*"
        return 0
    fi
    if [ "$APT_UPDATED" -eq 0 ]; then
        log "apt-get update (missing: ${missing[*]})"
        as_root apt-get update -qq
        APT_UPDATED=1
    fi
    log "apt-get install ${missing[*]}"
    # A package's install script must not start a system service (nginx would take port 80):
    # policy-rc.d answering 101 forbids it, as Debian's container images do.
    # See https://manpages.debian.org/bookworm/init-system-helpers/invoke-rc.d.8.en.html
    local added_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d'
        added_policy=1
    fi
    local status=0
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" || status=$?
    if [ "$added_policy" -eq 1 ]; then
        as_root rm -f /usr/sbin/policy-rc.d
    fi
    [ "$status" -eq 0 ] || die "apt-get install ${missing[*]} failed (exit $status)"
}
