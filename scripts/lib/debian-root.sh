# shellcheck shell=bash
# Shared by scripts/container-check.sh and scripts/package-check.sh: the steps they time, their
# locks, this machine's Debian mirrors, the cached minimal Debian root both start from, and running
# a command (and ldd) inside such a root. Sourced, not run. Expects SCRIPT_NAME and
# scripts/lib/common.sh. (The daemon run in the root: scripts/lib/root-daemon.sh.)

# ---- steps, timed and printed ----

STEP_NAMES=()
STEP_SECONDS=()
STEP_NAME=""
STEP_START=0

begin_step() {
    STEP_NAME="$1"
    STEP_START="${EPOCHREALTIME/./}"
    log "step: $STEP_NAME"
}

end_step() {
    local elapsed
    elapsed="$(awk -v start="$STEP_START" -v end="${EPOCHREALTIME/./}" 'BEGIN { printf "%.2f", (end - start) / 1e6 }')"
    STEP_NAMES+=("$STEP_NAME")
    STEP_SECONDS+=("$elapsed")
    log "step done: $STEP_NAME (${elapsed} s)"
}

print_step_timings() {
    local i
    log "timings:"
    for i in "${!STEP_NAMES[@]}"; do
        printf '==> %s:   %7s s  %s\n' "$SCRIPT_NAME" "${STEP_SECONDS[$i]}" "${STEP_NAMES[$i]}" >&2
    done
}

fail() {
    printf '==> %s: CHECK FAILED: %s\n' "$SCRIPT_NAME" "$*" >&2
    exit 1
}

# ---- locks ----

# Takes the container check's lock, WORK/lock on file descriptor 9: scripts/container-check.sh
# holds it for its whole run (two would debootstrap into the same folder), scripts/package-check.sh
# while it makes or copies the minimal root. Usage: lock_container_work WORK
lock_container_work() {
    exec 9>"$1/lock"
    wait_for_lock 9 container-check.sh
}

# Takes the lock on file descriptor FD (opened by the caller: exec FD>FILE), waiting at most
# 30 minutes for another run of SCRIPT in this worktree that holds it. Usage: wait_for_lock FD SCRIPT
wait_for_lock() {
    local fd="$1" holder="$2"
    if ! flock -n "$fd"; then
        log "another $holder runs in this worktree: waiting for it (at most 30 minutes)"
        flock -w 1800 "$fd" || die "the other $holder did not finish within 30 minutes"
    fi
}

# ---- running commands inside a root ----

# Sets ROOT_COMMAND to run COMMAND inside root DIR as USERSPEC (UID:GID), with supplementary
# GROUPS, in WORKDIR, with exactly the environment ENV... (as a container gets it): PID 1 of a
# new PID namespace, /proc of that namespace mounted in a private mount namespace.
# Usage: root_command DIR UID:GID GROUPS WORKDIR ENV... -- COMMAND...
root_command() {
    local dir="$1" userspec="$2" groups="$3" workdir="$4"
    shift 4
    local environment=()
    while [ "$1" != "--" ]; do environment+=("$1"); shift; done
    shift
    ROOT_COMMAND=(unshare --mount --propagation private --pid --fork --kill-child --mount-proc="$dir/proc"
        chroot --userspec="$userspec" --groups="$groups" "$dir"
        /usr/bin/env -i -C "$workdir" "${environment[@]}" "$@")
}

# Sets LIBRARIES to what ldd says of BINARY (a path in the root), run there as root by RUNNER...
# (a command that runs its arguments in the root); fails when ldd fails or misses a library.
# Usage: ldd_in_root BINARY RUNNER...
ldd_in_root() {
    local binary="$1"
    shift
    LIBRARIES="$("$@" ldd "$binary")" || fail "ldd $binary failed in the root"
    if grep -q "not found" <<<"$LIBRARIES"; then
        fail "$binary misses libraries in the root: $(grep "not found" <<<"$LIBRARIES" | tr -s ' \t\n' ' ')"
    fi
}

# ---- the Debian mirrors of this machine ----

# The first URI of this machine's apt sources that serves SUITE (deb822 .sources files and the
# one-line sources.list format).
apt_source_for() {
    local suite="$1" file
    for file in /etc/apt/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        awk -v suite="$suite" '
            BEGIN { RS = ""; FS = "\n" }
            {
                uri = ""; found = 0; deb = 0
                for (i = 1; i <= NF; i++) {
                    if ($i ~ /^URIs:/) { split(substr($i, 6), words, " "); for (w in words) if (uri == "") uri = words[w] }
                    if ($i ~ /^Types:/ && $i ~ /(^|[ :])deb( |$)/) deb = 1
                    if ($i ~ /^Suites:/) { n = split(substr($i, 8), s, " "); for (j = 1; j <= n; j++) if (s[j] == suite) found = 1 }
                    if ($i ~ /^Enabled: *no/) deb = 0
                }
                if (deb && found && uri != "") { print uri; exit }
            }' "$file"
    done
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$file" ] || continue
        sed -E 's/\[[^]]*\]//' "$file" | awk -v suite="$suite" '$1 == "deb" && $3 == suite { print $2; exit }'
    done
}

# Sets MIRROR and SECURITY_MIRROR for SUITE: this machine's apt sources, or
# TRANSFERD_CONTAINER_MIRROR and TRANSFERD_CONTAINER_SECURITY_MIRROR.
choose_mirrors() {
    local suite="$1"
    MIRROR="${TRANSFERD_CONTAINER_MIRROR:-$(apt_source_for "$suite" | head -n 1)}"
    SECURITY_MIRROR="${TRANSFERD_CONTAINER_SECURITY_MIRROR:-$(apt_source_for "$suite-security" | head -n 1)}"
    [ -n "$MIRROR" ] || die "no apt source of this machine serves $suite: set TRANSFERD_CONTAINER_MIRROR"
}

# ---- the minimal root: debootstrap once, cached ----

# Bump when the way the minimal root is made changes, so cached ones made the old way are not used.
MINBASE_FORMAT=1

# Sets MINBASE to a cached minimal Debian root of SUITE under WORK (debootstrap --variant=minbase
# from MIRROR, made on the first call and kept, keyed by the suite and the mirrors), prepared as
# Debian's container images are: deb822 apt sources for SUITE, SUITE-updates and the security
# suite, a policy-rc.d that forbids package scripts to start services (they would run on this
# machine's network), and the slim images' path excludes (no documentation but copyright files).
# The caller holds WORK's lock; TRANSFERD_CONTAINER_FRESH=1 makes it again. Never modify MINBASE:
# copy it (cp -a) and change the copy.
ensure_minbase() {
    local work="$1" suite="$2" key partial
    key="$(sha256sum <<<"minbase format $MINBASE_FORMAT; suite $suite; mirror $MIRROR; security $SECURITY_MIRROR" | cut -c1-16)"
    MINBASE="$work/minbase-$key"
    if [ "${TRANSFERD_CONTAINER_FRESH:-0}" = 1 ] && [ -d "$MINBASE" ] && [ -z "${MINBASE_FRESH_DONE:-}" ]; then
        log "TRANSFERD_CONTAINER_FRESH=1: removing the cached minimal root $MINBASE"
        rm -rf "$MINBASE"
    fi
    MINBASE_FRESH_DONE=1
    if [ -f "$MINBASE/.minbase-complete" ]; then
        log "cached minimal root: $MINBASE ($suite from $MIRROR)"
        return 0
    fi
    partial="$MINBASE.partial"
    rm -rf "$partial"
    begin_step "debootstrap --variant=minbase $suite from $MIRROR"
    debootstrap --variant=minbase "$suite" "$partial" "$MIRROR" >&2 \
        || fail "debootstrap failed (log: $partial/debootstrap/debootstrap.log)"
    rm -f "$partial/etc/apt/sources.list"
    {
        printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            "$MIRROR" "$suite" "$suite"
        if [ -n "$SECURITY_MIRROR" ]; then
            printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                "$SECURITY_MIRROR" "$suite"
        fi
    } >"$partial/etc/apt/sources.list.d/debian.sources"
    printf '#!/bin/sh\nexit 101\n' >"$partial/usr/sbin/policy-rc.d"
    chmod 0755 "$partial/usr/sbin/policy-rc.d"
    printf 'path-exclude /usr/share/doc/*\npath-include /usr/share/doc/*/copyright\npath-exclude /usr/share/man/*\npath-exclude /usr/share/info/*\npath-exclude /usr/share/locale/*\n' \
        >"$partial/etc/dpkg/dpkg.cfg.d/docker"
    rm -f "$partial"/var/cache/apt/archives/*.deb
    touch "$partial/.minbase-complete"
    # Only one minimal root is kept: those of other suites or mirrors go.
    find "$work" -maxdepth 1 -name 'minbase-*' ! -name "$(basename "$MINBASE")" ! -name "$(basename "$partial")" -exec rm -rf {} +
    mv "$partial" "$MINBASE"
    end_step
}

# What Docker injects into every container: /etc/hosts (debootstrap leaves none).
# Usage: write_etc_hosts DIR
write_etc_hosts() {
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$1/etc/hosts"
}

# Copies the minimal root to DIR (replacing DIR), without the cache's marker.
copy_minbase() {
    local dir="$1"
    rm -rf "$dir"
    cp -a "$MINBASE" "$dir"
    rm -f "$dir/.minbase-complete"
}
