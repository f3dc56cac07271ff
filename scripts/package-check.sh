#!/usr/bin/env bash
# The .deb installed and run on a Debian root, as an operator would: bash scripts/package-check.sh
#
#   1. builds dist/transferd_<version>_<arch>.deb (scripts/package-deb.sh: the container check's
#      release build, so the full test command builds once),
#   2. inspects it: dpkg-deb --info and --contents (the files, their owners and modes, the
#      conffile, Depends naming every package of the Dockerfile's runtime stage), lintian when it
#      is installed (it is not installed for this),
#   3. copies the minimal Debian root that scripts/container-check.sh debootstraps and caches
#      (scripts/lib/debian-root.sh: one debootstrap for both checks) and installs the .deb there:
#      dpkg -i first, which must stop on the missing Depends, then apt-get install -f, which must
#      resolve them from the Debian mirror (apt's lists and downloads kept in
#      .build-container/package-apt between runs),
#   4. checks what landed: the files, the transferd system user, the configuration 0640
#      root:transferd and registered as a conffile, no service started (no systemd in the root),
#      every library found (ldd), --version,
#   5. checks the unit on this machine's systemd: systemd-analyze verify (no warning at all) and
#      systemd-analyze security --offline (its exposure at most 2.0),
#   6. edits /etc/transferd/config.json as an operator would (a token, a free loopback port),
#      checks the daemon refuses it once every user may read it, then starts the unit's ExecStart
#      under the unit's sandbox (scripts/lib/unit_sandbox.py: User=, StateDirectory=,
#      ProtectSystem=strict, PrivateTmp=, PrivateDevices=, ProtectHome=, the capability bounding
#      set, NoNewPrivileges= and the seccomp filters systemd would load; a system call the unit's
#      SystemCallFilter= denies kills it here instead of failing with EPERM, so none goes unseen),
#      PID 1 of its own PID namespace, and checks from outside: GET /healthz, the process's uid, no_new_privs, seccomp
#      and capabilities in /proc; then transferctl from the package, run in the root as another
#      user, downloads a file from the nginx peer (or a python3 http.server started here) and,
#      with the TLS peers, one over HTTPS with the test CA added by update-ca-certificates; the
#      sha256 of each matches; the state is in /var/lib/transferd, owned by transferd, and
#      nothing was written anywhere else,
#   7. the unit's KillSignal ends it with exit 0 within its TimeoutStopSec,
#   8. dpkg -r keeps /etc/transferd/config.json (status config-files), dpkg -P removes it,
#   9. the maintainer scripts where systemd runs, with a systemctl that records its calls: a first
#      installation enables the service (and does not start it while policy-rc.d forbids it), a
#      reinstallation restarts it, a disabled service stays disabled and stopped across an
#      upgrade, dpkg -r stops it, dpkg -P removes its enablement.
# Each step prints its time. Processes it starts are ended by PID on every exit path; mounts are
# made only in private mount namespaces. Needs root. Peers used when set: TRANSFERD_TEST_NGINX(_ROOT),
# TRANSFERD_TEST_TLS_VALID, TRANSFERD_TEST_TLS_CA (scripts/test.sh).
set -euo pipefail

SCRIPT_NAME="package-check.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/debian-root.sh
source scripts/lib/debian-root.sh
# shellcheck source=scripts/lib/root-daemon.sh
source scripts/lib/root-daemon.sh

WORK="$PWD/.build-container"
ROOT="$WORK/package-root"
CHECK_FILES="$WORK/package-"   # its files: $WORK/package-transferd.log, $WORK/package-started-marker, ...
CHECK_LOCK_FD=8                # its lock ($WORK/package-lock, below)
APT_CACHE="$WORK/package-apt"
VERIFY_ROOT="$WORK/package-verify"
UNIT=/lib/systemd/system/transferd.service
CONFIG=/etc/transferd/config.json
STATE=/var/lib/transferd
SANDBOX_PYTHON=/usr/bin/python3   # Debian's, with python3-seccomp
MAX_EXPOSURE=2.0
PATH_IN_ROOT=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# The processes it starts (the daemon, an http.server) are ended by PID on every exit path, and
# no mount may be left under $ROOT (scripts/lib/root-daemon.sh).
end_processes_on_exit "$ROOT"

# Runs a command in the root as root, as apt and dpkg run on a Debian machine.
as_root_in_root() {
    root_command "$ROOT" 0:0 0 / "PATH=$PATH_IN_ROOT" HOME=/root DEBIAN_FRONTEND=noninteractive -- "$@"
    "${ROOT_COMMAND[@]}"
}

# A value of the installed unit's [Service] section (the last assignment).
unit_value() {
    awk -F= -v key="$1" '/^\[/ { section = $0 } section == "[Service]" && $1 == key { value = substr($0, length(key) + 2) } END { print value }' "$ROOT$UNIT"
}

ensure_apt_packages debootstrap curl python3-seccomp systemd
for tool in unshare chroot findmnt flock sha256sum dpkg-deb systemd-analyze; do
    command -v "$tool" >/dev/null || die "$tool is missing"
done
[ -x "$SANDBOX_PYTHON" ] && "$SANDBOX_PYTHON" -c 'import seccomp' || die "$SANDBOX_PYTHON cannot import seccomp (python3-seccomp)"
[ "$(id -u)" -eq 0 ] || die "run as root: debootstrap, chroot and unshare need it"
mkdir -p "$WORK"
# One package check at a time per worktree (its root); the container check's lock is taken below
# only while the shared minimal root is made or copied.
exec 8>"$WORK/package-lock"
wait_for_lock 8 package-check.sh

# ---- 1. the .deb ----
begin_step "build the .deb (scripts/package-deb.sh)"
DEB="$(bash scripts/package-deb.sh 8>&- | tail -n 1)" || fail "scripts/package-deb.sh failed (above)"
[ -f "$DEB" ] || fail "scripts/package-deb.sh made no .deb ('$DEB')"
log "package: $DEB ($(du -h "$DEB" | cut -f1))"
end_step

# ---- 2. what the .deb holds ----
begin_step "dpkg-deb --info and --contents"
eval "$(python3 scripts/lib/dockerfile_plan.py Dockerfile)"
info="$(dpkg-deb --info "$DEB")" || fail "dpkg-deb --info failed"
contents="$(dpkg-deb --contents "$DEB")" || fail "dpkg-deb --contents failed"
field() { dpkg-deb --field "$DEB" "$1"; }
[ "$(field Package)" = transferd ] || fail "Package is $(field Package)"
VERSION="$(field Version)"
dpkg --validate-version "$VERSION" || fail "Version $VERSION is not a valid Debian version"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture is $(field Architecture)"
DEPENDS="$(field Depends)"
depended=" $(sed -E 's/ *\([^)]*\)//g; s/,/ /g' <<<"$DEPENDS" | tr -s ' ') "
for package in "${RUNTIME_PACKAGES[@]}"; do
    [[ "$depended" == *" $package "* ]] || fail "Depends lacks $package, which the Dockerfile's runtime stage installs: $DEPENDS"
done
log "control: transferd $VERSION $(field Architecture); Depends: $DEPENDS"
log "Depends covers the runtime stage's packages: ${RUNTIME_PACKAGES[*]}"
for path in ./usr/bin/transferd ./usr/bin/transferctl .$UNIT .$CONFIG ./usr/share/doc/transferd/copyright ./usr/share/doc/transferd/changelog.gz; do
    line="$(awk -v p="$path" '$6 == p' <<<"$contents")"
    [ -n "$line" ] || fail "the .deb does not hold $path"
    owner="$(awk '{ print $2 }' <<<"$line")"
    [ "$owner" = root/root ] || fail "$path is owned by $owner in the .deb"
    case "$path" in
        ./usr/bin/*) [[ "$line" == -rwxr-xr-x* ]] || fail "$path is not 0755: $line" ;;
        *) [[ "$line" == -rw-r--r--* ]] || fail "$path is not 0644: $line" ;;
    esac
done
log "contents: $(grep -vc '/$' <<<"$contents") files: $(awk '!/\/$/ { printf "%s ", $6 }' <<<"$contents")"
conffiles="$(dpkg-deb --ctrl-tarfile "$DEB" | tar -xOf - ./conffiles)"
[ "$conffiles" = "$CONFIG" ] || fail "conffiles is '$conffiles', not $CONFIG"
for script in postinst prerm postrm; do
    grep -qE "^ +[0-9]+ bytes, +[0-9]+ lines +\* +$script " <<<"$info" || fail "DEBIAN/$script is missing or not executable"
done
log "conffiles: $conffiles; maintainer scripts: postinst prerm postrm"
if command -v lintian >/dev/null; then
    lintian_output="$(lintian --no-tag-display-limit "$DEB" 2>&1 || true)"
    log "lintian: $(grep -c '^E:' <<<"$lintian_output") errors, $(grep -c '^W:' <<<"$lintian_output") warnings (not failing the check)"
    printf '%s\n' "$lintian_output" >&2
else
    log "lintian is not installed: skipped (apt-get install lintian to see its tags)"
fi
end_step

# ---- 3. install it in a copy of the cached minimal root ----
choose_mirrors "${RUNTIME_SUITE[0]}"
lock_container_work "$WORK"
ensure_minbase "$WORK" "${RUNTIME_SUITE[0]}"
begin_step "copy the minimal ${RUNTIME_SUITE[0]} root (made by debootstrap once, cached)"
copy_minbase "$ROOT"
flock -u 9
exec 9>&-
write_etc_hosts "$ROOT"
log "root: $ROOT ($(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W | wc -l) packages, from $MINBASE)"
end_step

begin_step "dpkg -i, then apt-get install -f resolves Depends from $MIRROR"
if [ -d "$APT_CACHE/lists" ]; then
    cp -a "$APT_CACHE/lists/." "$ROOT/var/lib/apt/lists/"
    cp -a "$APT_CACHE/archives/." "$ROOT/var/cache/apt/archives/"
fi
cp "$DEB" "$ROOT/tmp/"
deb_in_root="/tmp/$(basename "$DEB")"
dpkg_status=0
dpkg_output="$(as_root_in_root dpkg -i "$deb_in_root" 2>&1)" || dpkg_status=$?
[ "$dpkg_status" -ne 0 ] || fail "dpkg -i succeeded on a minimal root: Depends names nothing it lacks? $dpkg_output"
grep -q "depends on libcurl4" <<<"$dpkg_output" || fail "dpkg -i did not stop on the missing libcurl4: $dpkg_output"
log "dpkg -i stopped on the missing Depends, as it must: $(grep -c 'depends on' <<<"$dpkg_output") unmet"
as_root_in_root apt-get update -qq >&2 || fail "apt-get update failed in the root"
apt_output="$(as_root_in_root apt-get install -f -y --no-install-recommends 2>&1)" || fail "apt-get install -f failed: $apt_output"
[ "$(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${db:Status-Status}' transferd)" = installed ] \
    || fail "transferd is not installed after apt-get install -f: $apt_output"
log "apt-get install -f installed: $(grep -oP '^Setting up \K[^ ]+' <<<"$apt_output" | tr '\n' ' ')"
rm -rf "$APT_CACHE"
mkdir -p "$APT_CACHE/lists" "$APT_CACHE/archives"
cp -a "$ROOT/var/lib/apt/lists/." "$APT_CACHE/lists/"
find "$ROOT/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -exec cp -a {} "$APT_CACHE/archives/" \;
rm -f "$APT_CACHE/lists/lock" "$ROOT/tmp/$(basename "$DEB")"
end_step

# ---- 4. what landed ----
begin_step "the installed files, user, conffile and libraries"
for path in /usr/bin/transferd /usr/bin/transferctl "$UNIT" "$CONFIG" /usr/share/doc/transferd/copyright; do
    [ -f "$ROOT$path" ] || fail "$path is not installed"
done
user_entry="$(awk -F: '$1 == "transferd"' "$ROOT/etc/passwd")"
[ -n "$user_entry" ] || fail "the postinst made no transferd user"
IFS=: read -r _ _ SERVICE_UID SERVICE_GID _ user_home user_shell <<<"$user_entry"
[ "$SERVICE_UID" -gt 0 ] && [ "$SERVICE_UID" -lt 1000 ] || fail "transferd's uid $SERVICE_UID is not a system uid"
[ "$user_shell" = /usr/sbin/nologin ] || fail "transferd's shell is $user_shell"
[ "$user_home" = "$STATE" ] || fail "transferd's home is $user_home"
group_name="$(awk -F: -v g="$SERVICE_GID" '$3 == g { print $1 }' "$ROOT/etc/group")"
[ "$group_name" = transferd ] || fail "transferd's group is '$group_name'"
log "system user transferd: uid $SERVICE_UID gid $SERVICE_GID, home $user_home, shell $user_shell"
config_owner="$(stat -c '%a %u:%g' "$ROOT$CONFIG")"
[ "$config_owner" = "640 0:$SERVICE_GID" ] || fail "$CONFIG is $config_owner, not 640 root:transferd"
registered="$(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${Conffiles}' transferd)"
grep -q "^ $CONFIG [0-9a-f]\{32\}$" <<<"$registered" || fail "dpkg does not list $CONFIG as a conffile: '$registered'"
cmp -s "$ROOT$CONFIG" packaging/debian/config.json || fail "$CONFIG differs from packaging/debian/config.json"
log "$CONFIG: mode 640, root:transferd (0:$SERVICE_GID), a conffile (md5 $(awk '{ print $2 }' <<<"$registered"))"
[ -d "$ROOT$STATE" ] && [ "$(stat -c '%u %a' "$ROOT$STATE")" = "$SERVICE_UID 750" ] || fail "$STATE is missing or not 0750 transferd"
if [ -e "$ROOT/etc/systemd/system/multi-user.target.wants/transferd.service" ]; then
    fail "the postinst enabled the service though no systemd runs in the root"
fi
log "no systemd runs in the root: the postinst enabled and started nothing"
for binary in /usr/bin/transferd /usr/bin/transferctl; do
    ldd_in_root "$binary" as_root_in_root
    if grep -q "libswift" <<<"$LIBRARIES"; then fail "$binary links a Swift runtime library dynamically"; fi
    log "ldd $binary: $(grep -c '=>' <<<"$LIBRARIES") libraries, none missing, no Swift runtime library"
done
installed_version="$(as_root_in_root /usr/bin/transferd --version)"
[ "${installed_version%% *}" = "$VERSION" ] || fail "transferd --version says $installed_version, the package $VERSION"
log "transferd --version in the root: $installed_version"
end_step

# ---- 5. the unit, as this machine's systemd reads it ----
begin_step "systemd-analyze verify and security (systemd $(systemd-analyze --version | awk 'NR == 1 { print $2 }'))"
# A root with this machine's systemd units (the targets the unit names), the installed unit and
# the installed binary: verify checks ExecStart's executable in the root it is given.
rm -rf "$VERIFY_ROOT"
mkdir -p "$VERIFY_ROOT/usr/lib/systemd" "$VERIFY_ROOT/usr/bin" "$VERIFY_ROOT/etc"
cp -a /lib/systemd/system "$VERIFY_ROOT/usr/lib/systemd/system"
cp "$ROOT$UNIT" "$VERIFY_ROOT/usr/lib/systemd/system/transferd.service"
ln "$ROOT/usr/bin/transferd" "$VERIFY_ROOT/usr/bin/transferd"
ln -s usr/lib "$VERIFY_ROOT/lib"
ln -s usr/bin "$VERIFY_ROOT/bin"
verify_output="$(systemd-analyze verify --root="$VERIFY_ROOT" transferd.service 2>&1)" || fail "systemd-analyze verify failed: $verify_output"
[ -z "$verify_output" ] || fail "systemd-analyze verify warns: $verify_output"
log "systemd-analyze verify: no warning"
security="$(systemd-analyze security --offline=yes --root="$VERIFY_ROOT" transferd.service 2>&1)" || fail "systemd-analyze security failed: $security"
exposure="$(grep -oP 'Overall exposure level for transferd.service: \K[0-9.]+' <<<"$security")" || fail "no exposure level in: $security"
log "systemd-analyze security: exposure $exposure ($(grep -oP 'Overall exposure level for transferd.service: [0-9.]+ \K\w+' <<<"$security")); not covered: $(grep '^✗' <<<"$security" | awk '{ print $2 }' | tr '\n' ' ')"
awk -v e="$exposure" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(e <= m) }' || fail "the unit's exposure $exposure is above $MAX_EXPOSURE: $security"
rm -rf "$VERIFY_ROOT"
end_step

# ---- 6. the daemon, as systemd would start it ----
choose_download_source
choose_tls
if [ "$TLS" -eq 1 ]; then
    add_test_ca as_root_in_root
    log "test CA added to the root with update-ca-certificates"
fi

choose_daemon_address
EXEC_START="$(unit_value ExecStart)"
KILL_SIGNAL="$(unit_value KillSignal)"
STOP_BOUND="$(unit_value TimeoutStopSec)"
[ -n "$EXEC_START" ] && [ -n "$KILL_SIGNAL" ] && [[ "$STOP_BOUND" =~ ^[0-9]+$ ]] \
    || fail "the unit lacks ExecStart, KillSignal or a TimeoutStopSec in seconds"
[[ "$EXEC_START" == *"--config $CONFIG"* ]] || fail "ExecStart does not read $CONFIG: $EXEC_START"

# Runs the unit's ExecStart in the root under its sandbox, PID 1 of new PID and mount namespaces.
sandbox_command() {
    SANDBOX_COMMAND=(unshare --mount --propagation private --pid --fork --kill-child
        "$SANDBOX_PYTHON" -I scripts/lib/unit_sandbox.py "$@" "$ROOT" "$UNIT")
}

begin_step "a configuration every user may read is refused once it holds a token"
# As an operator edits it: the file keeps its owner and mode.
printf '{\n  "listen": "127.0.0.1:%s",\n  "data-dir": "%s",\n  "token": ["package-check:%s:admin"]\n}\n' "$PORT" "$STATE" "$TOKEN" >"$ROOT$CONFIG"
[ "$(stat -c '%a %u:%g' "$ROOT$CONFIG")" = "640 0:$SERVICE_GID" ] || fail "editing $CONFIG changed its mode or owner"
chmod 0644 "$ROOT$CONFIG"
sandbox_command
expect_refusal 30 "every user may read it" "${SANDBOX_COMMAND[@]}"
chmod 0640 "$ROOT$CONFIG"
end_step

begin_step "start ExecStart (${EXEC_START}) under the unit's sandbox on 127.0.0.1:$PORT"
# A system call the unit's filter denies kills the daemon here rather than failing with EPERM, so
# none can go unnoticed on the paths this check takes.
sandbox_command --kill-denied
start_daemon "${SANDBOX_COMMAND[@]}"
grep "^unit_sandbox: applied" "$DAEMON_LOG" | sed "s/^/==> $SCRIPT_NAME: /" >&2
executable="$(readlink "/proc/$DAEMON_PID/exe")"
[ "$executable" = "$ROOT/usr/bin/transferd" ] || fail "the process is $executable, not the package's transferd"
status_of() { awk -v key="$1:" '$1 == key { print $2 }' "/proc/$DAEMON_PID/status"; }
[ "$(status_of Uid)" = "$SERVICE_UID" ] || fail "the daemon runs as uid $(status_of Uid), not transferd's $SERVICE_UID"
[ "$(status_of NoNewPrivs)" = 1 ] || fail "no_new_privs is not set"
[ "$(status_of Seccomp)" = 2 ] || fail "no seccomp filter (Seccomp: $(status_of Seccomp))"
[ "$(status_of CapBnd)" = 0000000000000000 ] || fail "capability bounding set $(status_of CapBnd) is not empty"
[ "$(status_of CapEff)" = 0000000000000000 ] || fail "effective capabilities $(status_of CapEff)"
nofile="$(awk '/^Max open files/ { print $4 }' "/proc/$DAEMON_PID/limits")"
# The unit's limit, or this machine's hard limit where the sandbox could not raise it (a container
# without CAP_SYS_RESOURCE; systemd, as PID 1 of a machine, can).
wanted_nofile="$(unit_value LimitNOFILE)"
if lowered="$(grep -oP 'LimitNOFILE=[0-9:]+ lowered to \K[0-9]+' "$DAEMON_LOG")"; then
    [ "$lowered" = "$(ulimit -Hn)" ] || fail "the sandbox lowered LimitNOFILE to $lowered, not this machine's hard limit $(ulimit -Hn)"
    wanted_nofile="$lowered"
fi
[ "$nofile" = "$wanted_nofile" ] || fail "open files limit $nofile, not $wanted_nofile (the unit's $(unit_value LimitNOFILE))"
log "GET /healthz: 200 (host pid $DAEMON_PID, uid $SERVICE_UID transferd, NoNewPrivs 1, $(status_of Seccomp_filters) seccomp filters, CapBnd 0, open files $nofile)"
end_step

begin_step "transferctl from the package downloads, as another user in the root"
transferctl_in_root() { # transferctl_in_root ARGUMENTS... (as nobody, in /tmp of the root)
    root_command "$ROOT" 65534:65534 65534 /tmp "PATH=$PATH_IN_ROOT" HOME=/nonexistent \
        "TRANSFERD_SERVER=$API" "TRANSFERD_TOKEN=$TOKEN" -- /usr/bin/transferctl "$@"
    timeout 60 "${ROOT_COMMAND[@]}" 8>&-
}
transferctl_in_root get "$SOURCE_URL" -o /tmp/package-check-1MiB.bin >&2 || fail "transferctl get $SOURCE_URL failed"
downloaded="$ROOT/tmp/package-check-1MiB.bin"
[ "$(sha256sum <"$downloaded" | cut -d' ' -f1)" = "$(sha256sum <"$SOURCE_FILE" | cut -d' ' -f1)" ] \
    || fail "the file transferctl saved differs from $SOURCE_FILE"
log "HTTP download: transferctl get $SOURCE_URL -> /tmp/package-check-1MiB.bin, $(stat -c %s "$downloaded") bytes, sha256 matches"
if [ "$TLS" -eq 1 ]; then
    transferctl_in_root get "$TRANSFERD_TEST_TLS_VALID/files/hello.txt" -o /tmp/package-check-hello.txt >&2 \
        || fail "transferctl get over HTTPS failed"
    [ "$(sha256sum <"$ROOT/tmp/package-check-hello.txt" | cut -d' ' -f1)" = "$(sha256sum <"$TRANSFERD_TEST_NGINX_ROOT/hello.txt" | cut -d' ' -f1)" ] \
        || fail "the HTTPS download differs"
    log "HTTPS download: $TRANSFERD_TEST_TLS_VALID/files/hello.txt verified with the root's CA bundle, sha256 matches"
fi
rm -f "$ROOT"/tmp/package-check-*
end_step

begin_step "state under $STATE, owned by transferd; nothing written elsewhere"
check_state "$STATE" "$SERVICE_UID" transferd
end_step

begin_step "KillSignal=$KILL_SIGNAL: a clean exit 0 within TimeoutStopSec=$STOP_BOUND s"
stop_daemon "$KILL_SIGNAL" "$STOP_BOUND" systemd
end_step

# ---- 8. removal and purge ----
begin_step "dpkg -r keeps the configuration, dpkg -P removes it"
as_root_in_root dpkg -r transferd >&2 || fail "dpkg -r transferd failed"
[ ! -e "$ROOT/usr/bin/transferd" ] && [ ! -e "$ROOT/usr/bin/transferctl" ] && [ ! -e "$ROOT$UNIT" ] \
    || fail "dpkg -r left the binaries or the unit"
[ -f "$ROOT$CONFIG" ] || fail "dpkg -r removed $CONFIG"
status="$(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${db:Status-Abbrev}' transferd)"
[ "${status% }" = rc ] || fail "after dpkg -r the status is '$status', not rc (removed, config-files)"
log "dpkg -r: binaries and unit gone, $CONFIG kept (status rc)"
as_root_in_root dpkg -P transferd >&2 || fail "dpkg -P transferd failed"
[ ! -e "$ROOT$CONFIG" ] || fail "dpkg -P left $CONFIG"
[ ! -e "$ROOT/etc/transferd" ] || fail "dpkg -P left /etc/transferd"
if dpkg-query --admindir="$ROOT/var/lib/dpkg" -W transferd >/dev/null 2>&1; then
    fail "dpkg still knows transferd after dpkg -P: $(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${db:Status-Abbrev}' transferd)"
fi
[ -d "$ROOT$STATE" ] || fail "dpkg -P removed $STATE (the downloads are the users' data: kept)"
log "dpkg -P: $CONFIG and /etc/transferd gone; $STATE and the transferd user kept"
end_step

# ---- 9. the maintainer scripts where systemd runs ----
# No systemd runs here: /run/systemd/system and a systemctl that records its calls (and keeps the
# enablement link as systemctl does) stand in for it. dpkg runs the package's real scripts.
begin_step "the maintainer scripts where systemd runs (a systemctl that records its calls)"
[ ! -e "$ROOT/usr/bin/systemctl" ] || fail "the root has a systemctl: the stand-in would replace it"
mkdir -p "$ROOT/run/systemd/system"
cat >"$ROOT/usr/bin/systemctl" <<'SYSTEMCTL'
#!/bin/sh
echo "$*" >>/var/log/systemctl-calls
link=/etc/systemd/system/multi-user.target.wants/transferd.service
while [ "${1#--}" != "$1" ]; do shift; done
case "$1" in
    enable) mkdir -p "${link%/*}" && ln -sf /lib/systemd/system/transferd.service "$link" ;;
    disable) rm -f "$link" ;;
    is-enabled) [ -L "$link" ] ;;
esac
SYSTEMCTL
chmod 0755 "$ROOT/usr/bin/systemctl"
WANTS_LINK="$ROOT/etc/systemd/system/multi-user.target.wants/transferd.service"
cp "$DEB" "$ROOT/tmp/"
calls_of() { # calls_of ACTION...: runs it in the root, prints the systemctl calls it made, on one line
    rm -f "$ROOT/var/log/systemctl-calls"
    as_root_in_root "$@" >&2 || fail "$* failed in the root"
    [ -f "$ROOT/var/log/systemctl-calls" ] && paste -sd';' "$ROOT/var/log/systemctl-calls" || true
}
calls="$(calls_of dpkg -i "$deb_in_root")"
[[ "$calls" == *"enable transferd.service"* ]] && [ -L "$WANTS_LINK" ] || fail "a first installation did not enable the service: $calls"
[[ "$calls" != *restart* ]] || fail "the postinst started the service though policy-rc.d forbids it: $calls"
log "first installation, policy-rc.d forbidding starts: enabled, not started ($calls)"
mv "$ROOT/usr/sbin/policy-rc.d" "$ROOT/usr/sbin/policy-rc.d.check"
calls="$(calls_of dpkg -i "$deb_in_root")"
[[ "$calls" == *"restart transferd.service"* ]] && [[ "$calls" != *"enable transferd.service"* ]] \
    || fail "a reinstallation of the enabled service did not restart it (or enabled it again): $calls"
log "reinstallation, starts allowed: restarted, not enabled again ($calls)"
calls="$(calls_of systemctl disable transferd.service)"
calls="$(calls_of dpkg -i "$deb_in_root")"
[[ "$calls" != *restart* ]] && [[ "$calls" != *"enable transferd.service"* ]] && [ ! -e "$WANTS_LINK" ] \
    || fail "an upgrade of a disabled service enabled or started it: $calls"
log "after systemctl disable, an upgrade leaves it disabled and stopped ($calls)"
calls="$(calls_of systemctl enable transferd.service)"
calls="$(calls_of dpkg -r transferd)"
[[ "$calls" == *"stop transferd.service"* ]] && [ -L "$WANTS_LINK" ] || fail "dpkg -r did not stop the service, or disabled it: $calls"
log "dpkg -r: stopped, still enabled for a reinstallation ($calls)"
calls="$(calls_of dpkg -P transferd)"
[ ! -e "$WANTS_LINK" ] && [ ! -L "$WANTS_LINK" ] || fail "dpkg -P left $WANTS_LINK"
log "dpkg -P: the enablement link removed ($calls)"
mv "$ROOT/usr/sbin/policy-rc.d.check" "$ROOT/usr/sbin/policy-rc.d"
rm -f "$ROOT/usr/bin/systemctl" "$ROOT$deb_in_root"
rmdir "$ROOT/run/systemd/system"
end_step

stop_download_source
print_step_timings
log "package check passed"
