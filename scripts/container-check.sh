#!/usr/bin/env bash
# The Docker runtime check, without a Docker engine: bash scripts/container-check.sh
#
# Proves that the Dockerfile's runtime stage is complete by replaying it:
#   1. reads the Dockerfile (scripts/lib/dockerfile_plan.py): the build stage's PRODUCTS and
#      SWIFT_BUILD_FLAGS, the runtime stage's base suite, RUN/ENV/USER/WORKDIR/COPY steps,
#      HEALTHCHECK, ENTRYPOINT, STOPSIGNAL; a shape it does not model fails the check,
#   2. builds the products as the build stage does (same swift build flags) from a copy of the
#      build context (the files .dockerignore lets through), in .build-container/swift,
#   3. debootstraps a minimal Debian root of that suite (--variant=minbase, the mirror of this
#      machine's apt sources) and runs the stage's RUN steps in it verbatim (chroot, as root), so it
#      gets exactly the stage's packages; that base is cached under .build-container/ keyed by the
#      suite, the mirrors and the steps, so later runs skip it (TRANSFERD_CONTAINER_FRESH=1 rebuilds),
#   4. copies it to .build-container/root, applies the COPY of the binaries, and checks `ldd` there,
#   5. starts the ENTRYPOINT in the root as the stage's USER, in its WORKDIR, with its ENV (and
#      TRANSFERD_LISTEN on a free 127.0.0.1 port, TRANSFERD_TOKENS), as PID 1 of a PID namespace of
#      its own as in a container, then: GET /healthz from outside, the HEALTHCHECK command inside,
#      a download over HTTP (nginx peer, or a python3 http.server started here) and, when the TLS
#      peers are there, over HTTPS with the test CA added as an operator would; state under /data,
#      owned by the user; STOPSIGNAL, and a clean exit 0 in time; the HEALTHCHECK failing after it.
# Also checks that the stage's ENV alone (0.0.0.0, no tokens) makes the daemon refuse to start.
#
# Mounts (proc) are made only inside private mount namespaces (unshare --mount), so they vanish
# with the commands that needed them on every exit path; none is left on the host.
# Needs root (debootstrap, chroot, unshare). Peers used when set: TRANSFERD_TEST_NGINX(_ROOT),
# TRANSFERD_TEST_TLS_VALID, TRANSFERD_TEST_TLS_UNTRUSTED, TRANSFERD_TEST_TLS_CA (scripts/test.sh).
# Environment: TRANSFERD_CONTAINER_MIRROR, TRANSFERD_CONTAINER_SECURITY_MIRROR override the mirrors.
# With --build-only it stops after step 2 and prints the folder of the built products on standard
# output (its only line there): scripts/test.sh runs that at low priority while the Swift tests
# wait on the network, so the check itself later finds the build done, and scripts/package-deb.sh
# takes the binaries of the .deb from that folder, so both ship the same build.
# The binaries say which commit they were built from (--version, transferd_build_info): HEAD of
# this checkout, or TRANSFERD_BUILD_COMMIT when set (the Dockerfile's build argument).
set -euo pipefail

BUILD_ONLY=0
[ "${1:-}" = "--build-only" ] && BUILD_ONLY=1

SCRIPT_NAME="container-check.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/debian-root.sh
source scripts/lib/debian-root.sh
# shellcheck source=scripts/lib/root-daemon.sh
source scripts/lib/root-daemon.sh

WORK="$PWD/.build-container"
SCRATCH="$WORK/swift"
CONTEXT="$WORK/context"
ROOT="$WORK/root"
CHECK_FILES="$WORK/"   # its files: $WORK/transferd.log, $WORK/started-marker, ...
CHECK_LOCK_FD=9        # its lock ($WORK/lock, below)
# Bump when the way the base is made changes, so cached bases made the old way are not used.
# (The minimal root it starts from has its own format: MINBASE_FORMAT in scripts/lib/debian-root.sh.)
BASE_FORMAT=1
# Docker's PATH for a container of a Debian image.
CONTAINER_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
STOP_BOUND=20

# The processes it starts (the daemon, an http.server) are ended by PID on every exit path, and
# no mount may be left under $WORK (scripts/lib/root-daemon.sh).
end_processes_on_exit "$WORK"

# ---- running commands inside a root (root_command: scripts/lib/debian-root.sh) ----

# Runs a command in root DIR as root with Docker's RUN environment plus the stage's ENV so far.
run_as_root_in() {
    local dir="$1"
    shift
    root_command "$dir" 0:0 0 / "PATH=$CONTAINER_PATH" HOME=/root HOSTNAME=container-check "${STAGE_ENV[@]}" -- "$@"
    "${ROOT_COMMAND[@]}"
}

# USER NAME[:GROUP] or UID[:GID] -> "UID GID GROUPS HOME", read from the root's passwd and group.
resolve_user() {
    local dir="$1" spec="$2" user group uid gid home groups
    user="${spec%%:*}"
    group=""
    [ "$user" != "$spec" ] && group="${spec#*:}"
    local entry
    entry="$(awk -F: -v u="$user" '$1 == u || $3 == u { print; exit }' "$dir/etc/passwd")"
    [ -n "$entry" ] || fail "USER $user is not in the root's /etc/passwd (did a RUN step create it?)"
    uid="$(cut -d: -f3 <<<"$entry")"
    gid="$(cut -d: -f4 <<<"$entry")"
    home="$(cut -d: -f6 <<<"$entry")"
    if [ -n "$group" ]; then
        gid="$(awk -F: -v g="$group" '$1 == g || $3 == g { print $3; exit }' "$dir/etc/group")"
        [ -n "$gid" ] || fail "group $group of USER $spec is not in the root's /etc/group"
    fi
    groups="$(awk -F: -v u="$(cut -d: -f1 <<<"$entry")" -v g="$gid" '
        BEGIN { list = g }
        { n = split($4, members, ","); for (i = 1; i <= n; i++) if (members[i] == u && $3 != g) list = list "," $3 }
        END { print list }' "$dir/etc/group")"
    printf '%s %s %s %s\n' "$uid" "$gid" "$groups" "$home"
}

# ---- the plan ----

ensure_swift
ensure_apt_packages "${BUILD_APT_PACKAGES[@]}" debootstrap curl
command -v python3 >/dev/null || die "python3 is needed to read the Dockerfile"
for tool in unshare chroot findmnt flock sha256sum; do
    command -v "$tool" >/dev/null || die "$tool is missing (util-linux, coreutils)"
done
[ "$(id -u)" -eq 0 ] || die "run as root: debootstrap, chroot and unshare need it"
mkdir -p "$WORK"
# One check at a time per worktree: two would debootstrap into the same folder.
lock_container_work "$WORK"

begin_step "read the Dockerfile"
plan="$(python3 scripts/lib/dockerfile_plan.py Dockerfile)" || fail "the Dockerfile has a shape the check does not model (above)"
eval "$plan"
log "build stage: products ${BUILD_PRODUCTS[*]}; swift build ${BUILD_FLAGS[*]}"
log "runtime stage: debian ${RUNTIME_SUITE[0]}; packages ${RUNTIME_PACKAGES[*]}; ENV ${RUNTIME_ENV[*]}"
log "runtime stage: ENTRYPOINT ${RUNTIME_ENTRYPOINT[*]} ${RUNTIME_CMD[*]}; STOPSIGNAL ${RUNTIME_STOPSIGNAL[0]}; VOLUME ${RUNTIME_VOLUMES[*]}"
[ "${#RUNTIME_PACKAGES[@]}" -gt 0 ] || fail "no apt-get install found in the runtime stage"
# The cached base ends before the first COPY: what comes before it does not depend on the build.
CACHED_STEPS="$RUNTIME_STEP_COUNT"
for ((i = 0; i < RUNTIME_STEP_COUNT; i++)); do
    kind_var="RUNTIME_STEP_${i}_KIND"
    if [ "${!kind_var}" = copy ]; then CACHED_STEPS="$i"; break; fi
done
end_step

begin_step "build ${BUILD_PRODUCTS[*]} (swift build ${BUILD_FLAGS[*]}) from the build context"
# The context has no .git (Package.swift would find this checkout's above it, but reads it only
# when the manifest is evaluated again): the commit is passed in, as the image's build argument.
if [ -z "${TRANSFERD_BUILD_COMMIT:-}" ]; then
    TRANSFERD_BUILD_COMMIT="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
fi
export TRANSFERD_BUILD_COMMIT
log "build commit: $TRANSFERD_BUILD_COMMIT"
# Only what .dockerignore lets into the context, as COPY . . sees it.
python3 scripts/lib/docker_context.py . "$CONTEXT" >&2
for product in "${BUILD_PRODUCTS[@]}"; do
    log "swift build ${BUILD_FLAGS[*]} --product $product --package-path $CONTEXT --scratch-path $SCRATCH"
    swift build "${BUILD_FLAGS[@]}" --product "$product" --package-path "$CONTEXT" --scratch-path "$SCRATCH" >&2
done
BIN_DIR="$(swift build "${BUILD_FLAGS[@]}" --package-path "$CONTEXT" --scratch-path "$SCRATCH" --show-bin-path)"
for product in "${BUILD_PRODUCTS[@]}"; do
    [ -x "$BIN_DIR/$product" ] || fail "swift build made no $BIN_DIR/$product"
    log "built $product: $(du -h "$BIN_DIR/$product" | cut -f1)"
done
end_step
if [ "$BUILD_ONLY" = 1 ]; then
    log "--build-only: the products are built in $BIN_DIR"
    printf '%s\n' "$BIN_DIR"
    exit 0
fi

# ---- the stage's state while its steps are replayed ----
STAGE_ENV=()
STAGE_USER=root
STAGE_WORKDIR=/

# Replays steps FIRST..LAST-1 on root DIR. With EXECUTE=0 only the state (ENV, USER, WORKDIR)
# is taken, for steps whose effect on the files is already in a cached base.
replay_steps() {
    local dir="$1" first="$2" last="$3" execute="$4" i
    for ((i = first; i < last; i++)); do
        local kind_var="RUNTIME_STEP_${i}_KIND"
        local -n step_args="RUNTIME_STEP_${i}_ARGS"
        local kind="${!kind_var}"
        case "$kind" in
            env) STAGE_ENV+=("${step_args[@]}") ;;
            user) STAGE_USER="${step_args[0]}" ;;
            workdir)
                STAGE_WORKDIR="${step_args[0]}"
                if [ "$execute" -eq 1 ]; then mkdir -p "$dir$STAGE_WORKDIR"; fi ;;
            run)
                if [ "$execute" -eq 1 ]; then
                    [ "$STAGE_USER" = root ] || [ "$STAGE_USER" = 0 ] || fail "RUN after USER is not modelled"
                    log "RUN ${step_args[*]}"
                    run_as_root_in "$dir" "${step_args[@]}" >&2 || fail "RUN step $i failed: ${step_args[*]}"
                fi ;;
            copy) if [ "$execute" -eq 1 ]; then copy_products "$dir" "${step_args[@]}"; fi ;;
            *) fail "unknown step kind $kind" ;;
        esac
        unset -n step_args
    done
}

# COPY --from=build /out/[NAME]... DEST: the products as the build stage's /out holds them.
copy_products() {
    local dir="$1"
    shift
    local sources=("${@:1:$#-1}") dest="${*: -1}" source names product
    for source in "${sources[@]}"; do
        if [ "$source" = /out/ ] || [ "$source" = /out ]; then
            names=("${BUILD_PRODUCTS[@]}")
        else
            names=("${source#/out/}")
        fi
        for product in "${names[@]}"; do
            [ -x "$BIN_DIR/$product" ] || fail "COPY names /out/$product, which the build stage does not build"
            local target="$dest"
            case "$dest" in */) target="$dest$product" ;; esac
            log "COPY $product -> $target"
            install -D -m 0755 -o 0 -g 0 "$BIN_DIR/$product" "$dir$target"
        done
    done
}

# ---- the base: the minimal root + the RUN steps before the first COPY, cached ----
choose_mirrors "${RUNTIME_SUITE[0]}"
cache_key_text="format $BASE_FORMAT; suite ${RUNTIME_SUITE[0]}; mirror $MIRROR; security $SECURITY_MIRROR"
for ((i = 0; i < CACHED_STEPS; i++)); do
    kind_var="RUNTIME_STEP_${i}_KIND"
    args_var="RUNTIME_STEP_${i}_ARGS[*]"
    cache_key_text+="; ${!kind_var} ${!args_var}"
done
BASE="$WORK/base-$(sha256sum <<<"$cache_key_text" | cut -c1-16)"
if [ "${TRANSFERD_CONTAINER_FRESH:-0}" = 1 ] && [ -d "$BASE" ]; then
    log "TRANSFERD_CONTAINER_FRESH=1: removing the cached base $BASE"
    rm -rf "$BASE"
fi

if [ -f "$BASE/.container-check-complete" ]; then
    log "cached base: $BASE (packages ${RUNTIME_PACKAGES[*]}, mirror $MIRROR)"
    replay_steps "$BASE" 0 "$CACHED_STEPS" 0
else
    # debootstrap --variant=minbase, with the apt sources, service policy and path excludes of
    # Debian's container images (cached too: scripts/package-check.sh installs the .deb in it).
    ensure_minbase "$WORK" "${RUNTIME_SUITE[0]}"
    partial="$BASE.partial"
    copy_minbase "$partial"

    begin_step "the runtime stage's RUN steps (as in debian:${RUNTIME_SUITE[0]}-slim)"
    packages_before="$(dpkg-query --admindir="$partial/var/lib/dpkg" -W -f='${Package}\n' | sort)"
    replay_steps "$partial" 0 "$CACHED_STEPS" 1
    for package in "${RUNTIME_PACKAGES[@]}"; do
        [ "$(dpkg-query --admindir="$partial/var/lib/dpkg" -W -f='${db:Status-Status}' "$package" 2>/dev/null)" = installed ] \
            || fail "the RUN steps did not install $package"
    done
    added="$(comm -13 <(printf '%s\n' "$packages_before") <(dpkg-query --admindir="$partial/var/lib/dpkg" -W -f='${Package}\n' | sort) | tr '\n' ' ')"
    log "packages added to the minbase root by the RUN steps: $added"
    rm -f "$partial"/var/cache/apt/archives/*.deb
    touch "$partial/.container-check-complete"
    # Only one base is kept: the ones of other package lists or mirrors go.
    find "$WORK" -maxdepth 1 -name 'base-*' ! -name "$(basename "$BASE")" ! -name "$(basename "$partial")" -exec rm -rf {} +
    mv "$partial" "$BASE"
    end_step
fi

begin_step "assemble the root (cached base + COPY + the rest of the stage)"
rm -rf "$ROOT"
cp -a "$BASE" "$ROOT"
rm -f "$ROOT/.container-check-complete"
replay_steps "$ROOT" "$CACHED_STEPS" "$RUNTIME_STEP_COUNT" 1
write_etc_hosts "$ROOT"
user_line="$(resolve_user "$ROOT" "$STAGE_USER")"
read -r RUN_UID RUN_GID RUN_GROUPS RUN_HOME <<<"$user_line"
log "USER $STAGE_USER = uid $RUN_UID gid $RUN_GID groups $RUN_GROUPS home $RUN_HOME; WORKDIR $STAGE_WORKDIR; ENV ${STAGE_ENV[*]}"
[ "$RUN_UID" != 0 ] || fail "the runtime stage runs as root"
for volume in "${RUNTIME_VOLUMES[@]}"; do
    [ -d "$ROOT$volume" ] || fail "VOLUME $volume does not exist in the image"
    owner="$(stat -c %u "$ROOT$volume")"
    [ "$owner" = "$RUN_UID" ] || fail "VOLUME $volume is owned by uid $owner, not the USER's $RUN_UID"
done
log "root: $(du -sh --exclude=proc "$ROOT" | cut -f1) ($(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W | wc -l) packages)"
end_step

begin_step "ldd of the binaries inside the root"
for product in "${BUILD_PRODUCTS[@]}"; do
    binary="/usr/local/bin/$product"
    [ -x "$ROOT$binary" ] || continue
    ldd_in_root "$binary" run_as_root_in "$ROOT"
    log "ldd $binary: $(grep -c '=>' <<<"$LIBRARIES") libraries, none missing"
done
end_step

# The container's environment: Docker's PATH, HOSTNAME and HOME (the USER's), then the stage's ENV.
container_environment() {
    CONTAINER_ENV=("PATH=$CONTAINER_PATH" HOSTNAME=container-check "HOME=$RUN_HOME" "${STAGE_ENV[@]}" "$@")
}
ENTRYPOINT=("${RUNTIME_ENTRYPOINT[@]}" "${RUNTIME_CMD[@]}")

begin_step "the stage's ENV alone (no tokens on 0.0.0.0) makes the daemon refuse to start"
container_environment
root_command "$ROOT" "$RUN_UID:$RUN_GID" "$RUN_GROUPS" "$STAGE_WORKDIR" "${CONTAINER_ENV[@]}" -- "${ENTRYPOINT[@]}"
expect_refusal 20 token "${ROOT_COMMAND[@]}"
end_step

# ---- HTTP and HTTPS sources for the downloads ----
choose_download_source
choose_tls
if [ "$TLS" -eq 1 ]; then
    begin_step "add the test CA to the root as an operator's image would (update-ca-certificates)"
    add_test_ca run_as_root_in "$ROOT"
    end_step
fi

# ---- the daemon, as the container runs it ----
choose_daemon_address
container_environment "TRANSFERD_LISTEN=127.0.0.1:$PORT" "TRANSFERD_TOKENS=$TOKEN"
RUN_ENV=("${CONTAINER_ENV[@]}")

api() { # api METHOD PATH [JSON]
    local arguments=(-sS --max-time 30 -X "$1" -H "Authorization: Bearer $TOKEN" "$API$2")
    [ $# -ge 3 ] && arguments+=(-H 'Content-Type: application/json' --data "$3")
    curl "${arguments[@]}"
}

json_field() { # json_field FIELD.PATH < JSON
    python3 -c 'import json, sys
value = json.load(sys.stdin)
for key in sys.argv[1].split("."):
    value = value.get(key) if isinstance(value, dict) else None
print("" if value is None else value if not isinstance(value, (dict, list)) else json.dumps(value))' "$1"
}

healthcheck_in_root() {
    root_command "$ROOT" "$RUN_UID:$RUN_GID" "$RUN_GROUPS" "$STAGE_WORKDIR" "${RUN_ENV[@]}" -- "${RUNTIME_HEALTHCHECK[@]}"
    timeout "${RUNTIME_HEALTHCHECK_TIMEOUT[0]}" "${ROOT_COMMAND[@]}" >/dev/null 2>&1
}

begin_step "start ${ENTRYPOINT[*]} as $STAGE_USER, PID 1 of its namespace, on 127.0.0.1:$PORT"
root_command "$ROOT" "$RUN_UID:$RUN_GID" "$RUN_GROUPS" "$STAGE_WORKDIR" "${RUN_ENV[@]}" -- "${ENTRYPOINT[@]}"
start_daemon "${ROOT_COMMAND[@]}"
executable="$(readlink "/proc/$DAEMON_PID/exe")"
namespace_pid="$(awk '/^NSpid:/ { print $NF }' "/proc/$DAEMON_PID/status")"
real_uid="$(awk '/^Uid:/ { print $2 }' "/proc/$DAEMON_PID/status")"
[ "$namespace_pid" = 1 ] || fail "the daemon is PID $namespace_pid in its namespace, not 1"
[ "$real_uid" = "$RUN_UID" ] || fail "the daemon runs as uid $real_uid, not $RUN_UID"
[ "$executable" = "$ROOT${RUNTIME_ENTRYPOINT[0]}" ] || fail "PID 1 is $executable, not the ENTRYPOINT"
log "GET /healthz: 200 (host pid $DAEMON_PID, PID 1 in its namespace, uid $real_uid)"
end_step

begin_step "the HEALTHCHECK command inside the root"
healthcheck_in_root || fail "the HEALTHCHECK command failed against the running daemon: ${RUNTIME_HEALTHCHECK[*]}"
log "HEALTHCHECK passed (timeout ${RUNTIME_HEALTHCHECK_TIMEOUT[0]} s)"
end_step

# Creates a download task and waits until it completes; prints the task's JSON.
download() { # download SESSION URL DESTINATION
    local task tid state=""
    task="$(api POST "/v1/sessions/$1/tasks" "{\"kind\": \"download\", \"destination\": \"$3\", \"request\": {\"url\": \"$2\"}}")"
    tid="$(json_field id <<<"$task")"
    [ -n "$tid" ] || fail "creating a download task failed: $task"
    for _ in $(seq 1 300); do
        task="$(api GET "/v1/tasks/$tid")"
        state="$(json_field state <<<"$task")"
        [ "$state" = completed ] && break
        sleep 0.1
    done
    [ "$state" = completed ] || fail "download task $tid did not complete within 30 s: $task"
    printf '%s\n' "$task"
}

begin_step "downloads inside the container (libcurl, CA certificates)"
session="$(api POST /v1/sessions '{"kind": "default", "description": "container check"}')"
SESSION_ID="$(json_field id <<<"$session")"
[ -n "$SESSION_ID" ] || fail "creating a session failed: $session"
task="$(download "$SESSION_ID" "$SOURCE_URL" container-check/1MiB.bin)"
[ -z "$(json_field error <<<"$task")" ] || fail "the HTTP download failed: $task"
# With a token, destinations are under the token's own root (downloads/<owner>/): the task's
# location says where, as a path inside the container.
location="$(json_field location <<<"$task")"
case "$location" in "${RUN_HOME%/}/downloads/"*/container-check/1MiB.bin) ;; *) fail "the download landed at '$location', not under the token's downloads root" ;; esac
downloaded="$ROOT$location"
case "$(stat -c %u "$downloaded" 2>/dev/null)" in "$RUN_UID") ;; *) fail "$downloaded is missing or not owned by uid $RUN_UID" ;; esac
[ "$(sha256sum <"$downloaded")" = "$(sha256sum <"$SOURCE_FILE")" ] || fail "the downloaded file differs from $SOURCE_FILE"
log "HTTP download: $SOURCE_URL -> $location, $(stat -c %s "$downloaded") bytes, sha256 matches"
if [ "$TLS" -eq 1 ]; then
    task="$(download "$SESSION_ID" "$TRANSFERD_TEST_TLS_VALID/files/hello.txt" container-check/hello.txt)"
    [ -z "$(json_field error <<<"$task")" ] || fail "the HTTPS download with the added CA failed: $task"
    cmp -s "$ROOT$(json_field location <<<"$task")" "$TRANSFERD_TEST_NGINX_ROOT/hello.txt" || fail "the HTTPS download differs"
    log "HTTPS download: $TRANSFERD_TEST_TLS_VALID/files/hello.txt verified with the CA bundle of ca-certificates"
    if [ -n "${TRANSFERD_TEST_TLS_UNTRUSTED:-}" ]; then
        task="$(download "$SESSION_ID" "$TRANSFERD_TEST_TLS_UNTRUSTED/files/hello.txt" container-check/untrusted.txt)"
        [ -n "$(json_field error <<<"$task")" ] || fail "a server with an untrusted certificate was accepted: $task"
        log "HTTPS download from an untrusted certificate refused: $(json_field error <<<"$task")"
    fi
fi
end_step

# The image ships the CLI too (when the build stage builds it): it must run in the root, as the
# user, and reach the daemon (TRANSFERD_SERVER and TRANSFERD_TOKEN, as a user of the image sets them).
if [[ " ${BUILD_PRODUCTS[*]} " == *" transferctl "* ]]; then
    begin_step "transferctl inside the root lists the session"
    root_command "$ROOT" "$RUN_UID:$RUN_GID" "$RUN_GROUPS" "$STAGE_WORKDIR" "${RUN_ENV[@]}" \
        "TRANSFERD_SERVER=$API" "TRANSFERD_TOKEN=$TOKEN" -- /usr/local/bin/transferctl sessions --json
    listed="$(timeout 20 "${ROOT_COMMAND[@]}" 2>&1)" || fail "transferctl sessions failed in the root: $listed"
    [[ "$listed" == *"$SESSION_ID"* ]] || fail "transferctl sessions did not list $SESSION_ID: $listed"
    log "transferctl sessions (as uid $RUN_UID, in the root) lists $SESSION_ID"
    end_step
fi

begin_step "state under /data, owned by $STAGE_USER; nothing written elsewhere"
check_state /data "$RUN_UID" "$STAGE_USER"
end_step

begin_step "${RUNTIME_STOPSIGNAL[0]} to PID 1: a clean exit 0 within $STOP_BOUND s"
stop_daemon "${RUNTIME_STOPSIGNAL[0]}" "$STOP_BOUND" "docker stop"
if healthcheck_in_root; then fail "the HEALTHCHECK command passed with the daemon stopped: it cannot fail"; fi
log "HEALTHCHECK fails once the daemon is stopped, as it must"
end_step

stop_download_source
print_step_timings
log "container check passed"
