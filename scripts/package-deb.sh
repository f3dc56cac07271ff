#!/usr/bin/env bash
# A Debian package of transferd, for machines without a Swift toolchain: bash scripts/package-deb.sh
#
# Writes dist/transferd_<version>_<arch>.deb (its path is the one line on standard output):
#   1. the release build of scripts/container-check.sh --build-only (the Dockerfile's build flags,
#      -c release --static-swift-stdlib: the Swift runtime and Foundation are linked in, so only C
#      libraries remain to depend on; the same build the container check runs, not a second one),
#   2. the version from the built binary (`transferd --version`, from Sources/BuildInfo), checked
#      to be a valid Debian version, and the architecture from dpkg,
#   3. a tree of /usr/bin/transferd and /usr/bin/transferctl (debug sections stripped, symbols
#      kept for backtraces), the systemd unit /lib/systemd/system/transferd.service, the default
#      configuration /etc/transferd/config.json (a conffile), /usr/share/doc/transferd/copyright
#      (this package's, then the license texts of the Swift packages and runtime linked in) and
#      changelog.gz, from packaging/debian/,
#   4. DEBIAN/control: Depends from dpkg-shlibdeps on the binaries (versioned, from the shlibs
#      of the libraries they link), plus the runtime stage's packages that are no libraries
#      (ca-certificates for HTTPS, publicsuffix for the cookie jars: read from the Dockerfile),
#      plus passwd (the postinst's useradd); the maintainer scripts, conffiles and md5sums,
#   5. dpkg-deb --build --root-owner-group.
# Needs root (the container check's build does). scripts/package-check.sh installs the result in
# a Debian root and runs it; docs/operations.md ("Install from a .deb") explains the package.
# Environment: TRANSFERD_DEB_MAINTAINER (default: the author of the repository's first commit),
# TRANSFERD_BUILD_COMMIT (default: HEAD), DEB_COMPRESSION and DEB_COMPRESSION_LEVEL (dpkg-deb -Z and
# -z; zstd at 6 by default: 17 MB in about a second, which every dpkg that can install it reads,
# since the binaries need glibc 2.35; xz at 6 makes 13 MB in about 40 s on 2 cores).
set -euo pipefail

SCRIPT_NAME="package-deb.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh

PACKAGING="$PWD/packaging/debian"
WORK="$PWD/.build-container"
DIST="$PWD/dist"
PACKAGE=transferd
UNIT_NAME=transferd.service

ensure_apt_packages dpkg-dev binutils
command -v python3 >/dev/null || die "python3 is needed to read the Dockerfile"
[ "$(id -u)" -eq 0 ] || die "run as root: the container check's build needs it"

# ---- 1. the release build ----
log "release build: bash scripts/container-check.sh --build-only"
BIN_DIR="$(bash scripts/container-check.sh --build-only | tail -n 1)" \
    || die "the release build failed (scripts/container-check.sh --build-only, above)"
[ -d "$BIN_DIR" ] || die "scripts/container-check.sh --build-only printed no folder ('$BIN_DIR')"
eval "$(python3 scripts/lib/dockerfile_plan.py Dockerfile)"
for product in transferd transferctl; do
    [[ " ${BUILD_PRODUCTS[*]} " == *" $product "* ]] || die "the Dockerfile's build stage does not build $product"
    [ -x "$BIN_DIR/$product" ] || die "no $BIN_DIR/$product"
done

# ---- 2. version and architecture ----
version_line="$("$BIN_DIR/transferd" --version)"     # "0.1.0 (commit 1b1ac97c0d2e)"
VERSION="${version_line%% *}"
COMMIT="$(sed -n 's/.*(commit \([^)]*\)).*/\1/p' <<<"$version_line")"
[ "$("$BIN_DIR/transferctl" --version)" = "$version_line" ] || die "transferctl --version differs from transferd's ($version_line)"
dpkg --validate-version "$VERSION" || die "'$VERSION' (transferd --version: $version_line) is not a valid Debian version"
ARCH="$(dpkg --print-architecture)"
MAINTAINER="${TRANSFERD_DEB_MAINTAINER:-$(git log --max-parents=0 -n 1 --format='%an <%ae>' 2>/dev/null || true)}"
[ -n "$MAINTAINER" ] || MAINTAINER="transferd maintainers <root@localhost>"
log "transferd $VERSION (commit $COMMIT) for $ARCH"

# The unit stops the daemon as the image does: its KillSignal is the Dockerfile's STOPSIGNAL.
kill_signal="$(sed -n 's/^KillSignal=//p' "$PACKAGING/$UNIT_NAME")"
[ "$kill_signal" = "${RUNTIME_STOPSIGNAL[0]}" ] \
    || die "$UNIT_NAME has KillSignal=$kill_signal, the Dockerfile STOPSIGNAL ${RUNTIME_STOPSIGNAL[0]}"

# ---- 3. the tree ----
STAGE="$WORK/deb/${PACKAGE}_${VERSION}_${ARCH}"
rm -rf "$WORK/deb"
mkdir -p "$STAGE/DEBIAN"
for product in transferd transferctl; do
    install -D -m 0755 "$BIN_DIR/$product" "$STAGE/usr/bin/$product"
    objcopy --strip-debug "$STAGE/usr/bin/$product"
    log "usr/bin/$product: $(du -h "$BIN_DIR/$product" | cut -f1) built, $(du -h "$STAGE/usr/bin/$product" | cut -f1) without debug sections"
done
install -D -m 0644 "$PACKAGING/$UNIT_NAME" "$STAGE/lib/systemd/system/$UNIT_NAME"
install -D -m 0644 "$PACKAGING/config.json" "$STAGE/etc/transferd/config.json"
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$STAGE/etc/transferd/config.json" \
    || die "packaging/debian/config.json is not valid JSON"

DOC="$STAGE/usr/share/doc/$PACKAGE"
install -d -m 0755 "$DOC"
# copyright: this package's, then each linked Swift package's license and notice texts (from the
# build's checkouts, at the versions resolved) and the toolchain's for the Swift runtime.
python3 - "$PACKAGING/copyright" "$WORK/swift" "$(dirname "$(dirname "$(command -v swift)")")" >"$DOC/copyright" <<'PYTHON'
import json, sys
from pathlib import Path

header, scratch, toolchain = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])

def body(text: str) -> str:
    """A license text as a DEP-5 continuation: each line indented, blank lines as ' .'."""
    return "\n".join(" " + line.rstrip() if line.strip() else " ." for line in text.strip("\n").splitlines())

out = [header.read_text().rstrip("\n")]
state = json.loads((scratch / "workspace-state.json").read_text())
for dependency in sorted(state["object"]["dependencies"], key=lambda d: d["packageRef"]["identity"]):
    name = dependency["packageRef"]["identity"]
    checkout = dependency["state"].get("checkoutState", {})
    version = checkout.get("version") or checkout.get("revision", "")[:12]
    folder = scratch / "checkouts" / dependency.get("subpath", name)
    texts = [p for pattern in ("LICENSE*", "NOTICE*") for p in sorted(folder.glob(pattern)) if p.is_file()]
    if not texts:
        sys.exit(f"{folder}: no LICENSE file for {name}")
    source = dependency["packageRef"].get("location", name)
    out.append(f"\nLicense: {name}-{version}\n" + "\n .\n".join(body(p.read_text(errors="replace")) for p in texts)
               + f"\nComment: {name} {version} ({source}), linked into the binaries that use it")
runtime = toolchain / "share" / "swift" / "LICENSE.txt"
if not runtime.is_file():
    sys.exit(f"{runtime}: the Swift toolchain's license is missing")
out.append("\nLicense: swift-runtime\n" + body(runtime.read_text(errors="replace"))
           + "\nComment: the Swift runtime and Foundation of the toolchain, linked into both binaries"
           " (swift build --static-swift-stdlib)")
print("\n".join(out))
PYTHON
chmod 0644 "$DOC/copyright"
# changelog.gz (Debian policy: every package has one), dated by the commit for a reproducible package.
SOURCE_DATE_EPOCH="$(git log -1 --format=%ct 2>/dev/null || date +%s)"
export SOURCE_DATE_EPOCH
{
    printf '%s (%s) bookworm; urgency=medium\n\n' "$PACKAGE" "$VERSION"
    printf '  * Built by scripts/package-deb.sh from commit %s.\n\n' "${TRANSFERD_BUILD_COMMIT:-$COMMIT}"
    printf ' -- %s  %s\n' "$MAINTAINER" "$(date -R -u -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$DOC/changelog.gz"
chmod 0644 "$DOC/changelog.gz"

# ---- 4. DEBIAN/ ----
# dpkg-shlibdeps reads the package's name from a debian/control: a throwaway one.
shlibs_dir="$WORK/deb/shlibdeps"
mkdir -p "$shlibs_dir/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$PACKAGE" "$PACKAGE" >"$shlibs_dir/debian/control"
shlibs="$(cd "$shlibs_dir" && dpkg-shlibdeps -O -e"$STAGE/usr/bin/transferd" -e"$STAGE/usr/bin/transferctl" 2>"$WORK/deb/shlibdeps.log")" \
    || die "dpkg-shlibdeps failed: $(cat "$WORK/deb/shlibdeps.log")"
DEPENDS="${shlibs#shlibs:Depends=}"
[ -n "$DEPENDS" ] && [ "$DEPENDS" != "$shlibs" ] || die "dpkg-shlibdeps printed no shlibs:Depends ($shlibs)"
log "Depends from dpkg-shlibdeps: $DEPENDS"
depended=" $(sed -E 's/ *\([^)]*\)//g; s/,/ /g' <<<"$DEPENDS" | tr -s ' ') "
added=()
for package in "${RUNTIME_PACKAGES[@]}" passwd; do
    [[ "$depended" == *" $package "* ]] && continue
    added+=("$package")
    DEPENDS+=", $package"
done
log "Depends added from the Dockerfile's runtime stage and the postinst: ${added[*]}"
for package in "${RUNTIME_PACKAGES[@]}"; do
    [[ " $(sed -E 's/ *\([^)]*\)//g; s/,/ /g' <<<"$DEPENDS" | tr -s ' ') " == *" $package "* ]] \
        || die "Depends lacks the runtime stage's $package"
done

INSTALLED_SIZE="$(du -sk --apparent-size --exclude=DEBIAN "$STAGE" | cut -f1)"
control="$(<"$PACKAGING/control.in")"
control="${control//@VERSION@/$VERSION}"
control="${control//@ARCH@/$ARCH}"
control="${control//@MAINTAINER@/$MAINTAINER}"
control="${control//@INSTALLED_SIZE@/$INSTALLED_SIZE}"
control="${control//@DEPENDS@/$DEPENDS}"
control="${control//@COMMIT@/${TRANSFERD_BUILD_COMMIT:-$COMMIT}}"
[[ "$control" != *@*@* ]] || die "control.in has a placeholder this script does not fill: $(grep -o '@[A-Z_]*@' <<<"$control" | head -n 1)"
printf '%s\n' "$control" >"$STAGE/DEBIAN/control"
install -m 0644 "$PACKAGING/conffiles" "$STAGE/DEBIAN/conffiles"
for script in postinst prerm postrm; do
    install -m 0755 "$PACKAGING/$script" "$STAGE/DEBIAN/$script"
done
while read -r conffile; do
    [ -f "$STAGE$conffile" ] || die "conffiles names $conffile, which the package does not hold"
done <"$STAGE/DEBIAN/conffiles"
(cd "$STAGE" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$STAGE/DEBIAN/md5sums"
chmod 0644 "$STAGE/DEBIAN/md5sums"
find "$STAGE" -type d -exec chmod 0755 {} +
# Every file dated by the commit: the same commit makes the same package.
find "$STAGE" -exec touch --no-dereference --date="@$SOURCE_DATE_EPOCH" {} +

# ---- 5. the .deb ----
mkdir -p "$DIST"
DEB="$DIST/${PACKAGE}_${VERSION}_${ARCH}.deb"
rm -f "$DEB"
compression=("-Z${DEB_COMPRESSION:-zstd}" "-z${DEB_COMPRESSION_LEVEL:-6}")
log "dpkg-deb --build --root-owner-group ${compression[*]} $STAGE $DEB"
dpkg-deb --build --root-owner-group "${compression[@]}" "$STAGE" "$DEB" >&2
log "built $DEB ($(du -h "$DEB" | cut -f1), installed $INSTALLED_SIZE KiB)"
printf '%s\n' "$DEB"
