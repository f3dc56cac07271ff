"""The Debian package: scripts/package-check.sh builds dist/transferd_<version>_<arch>.deb with
scripts/package-deb.sh (from the container check's release build), installs it in a copy of the
container check's cached minimal bookworm root with dpkg and apt, checks the unit with
systemd-analyze, starts the unit's ExecStart under the unit's sandbox (scripts/lib/unit_sandbox.py)
and downloads with the package's transferctl, stops it with the unit's KillSignal, removes and
purges the package, and runs its maintainer scripts again with a stand-in systemctl. The unit's hardening directives are also checked here, directly."""
from __future__ import annotations

import configparser
import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import required_environment

REPOSITORY = Path(__file__).resolve().parents[2]
PACKAGING = REPOSITORY / "packaging" / "debian"
PLAN = REPOSITORY / "scripts" / "lib" / "dockerfile_plan.py"

# What the check prints when each part of it passed (scripts/package-check.sh).
EXPECTED_LINES = [
    "package: ",
    "Depends covers the runtime stage's packages: libcurl4 libssl3 libmicrohttpd12 libsqlite3-0 libpq5 zlib1g ca-certificates publicsuffix",
    "files: ./etc/transferd/config.json ./lib/systemd/system/transferd.service ./usr/bin/transferctl ./usr/bin/transferd",
    "conffiles: /etc/transferd/config.json",
    "dpkg -i stopped on the missing Depends, as it must",
    "apt-get install -f installed: ",
    "system user transferd: uid",
    "/etc/transferd/config.json: mode 640, root:transferd",
    "the postinst enabled and started nothing",
    "none missing, no Swift runtime library",
    "systemd-analyze verify: no warning",
    "systemd-analyze security: exposure",
    "refused, exit",
    "applied ProtectSystem=strict",
    "applied seccomp: MemoryDenyWriteExecute",
    "applied seccomp: SystemCallFilter",
    "GET /healthz: 200",
    "NoNewPrivs 1",
    "CapBnd 0",
    "HTTP download: transferctl get",
    "sha256 matches",
    "HTTPS download:",
    "all owned by uid",
    "exit 0 after",
    "dpkg -r: binaries and unit gone, /etc/transferd/config.json kept",
    "dpkg -P: /etc/transferd/config.json and /etc/transferd gone",
    "first installation, policy-rc.d forbidding starts: enabled, not started",
    "reinstallation, starts allowed: restarted, not enabled again",
    "after systemctl disable, an upgrade leaves it disabled and stopped",
    "dpkg -r: stopped, still enabled for a reinstallation",
    "dpkg -P: the enablement link removed",
    "package check passed",
]


def test_the_deb_installs_runs_hardened_and_purges(nginx_url, nginx_root, artifacts):
    # The HTTPS download needs the TLS peers: missing, the test fails rather than checking less.
    for name in ("TRANSFERD_TEST_TLS_VALID", "TRANSFERD_TEST_TLS_CA"):
        required_environment(name)
    log_path = artifacts / "package-check.log"
    started = time.monotonic()
    with open(log_path, "wb") as log:
        result = subprocess.run(["bash", str(REPOSITORY / "scripts" / "package-check.sh")], cwd=REPOSITORY,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, timeout=3600, check=False)
    output = log_path.read_text(errors="replace")
    print(f"package-check.sh took {time.monotonic() - started:.0f} s; log: {log_path}")
    assert result.returncode == 0, f"package-check.sh exited with {result.returncode}:\n{output[-6000:]}"
    missing = [line for line in EXPECTED_LINES if line not in output]
    assert not missing, f"package-check.sh passed without printing {missing}:\n{output[-6000:]}"


def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    parser.optionxform = str  # keys are case-sensitive in systemd
    parser.read(PACKAGING / "transferd.service")
    return parser


def test_the_unit_is_hardened():
    service = unit()["Service"]
    expected = {
        "User": "transferd", "StateDirectory": "transferd", "ProtectSystem": "strict", "ProtectHome": "yes",
        "NoNewPrivileges": "yes", "PrivateTmp": "yes", "PrivateDevices": "yes", "ProtectKernelTunables": "yes",
        "ProtectKernelModules": "yes", "ProtectControlGroups": "yes", "RestrictNamespaces": "yes",
        "LockPersonality": "yes", "MemoryDenyWriteExecute": "yes", "SystemCallArchitectures": "native",
        "CapabilityBoundingSet": "", "Restart": "on-failure",
        "ExecStart": "/usr/bin/transferd --config /etc/transferd/config.json",
    }
    for key, value in expected.items():
        assert service.get(key) == value, f"{key}={service.get(key)!r}, expected {value!r}"
    assert set(service["RestrictAddressFamilies"].split()) == {"AF_INET", "AF_INET6", "AF_UNIX", "AF_NETLINK"}
    assert int(service["LimitNOFILE"]) >= 65536


def test_the_unit_stops_the_daemon_as_the_image_does():
    plan = subprocess.run([sys.executable, str(PLAN), str(REPOSITORY / "Dockerfile")], capture_output=True, text=True, timeout=60, check=False)
    assert plan.returncode == 0, plan.stderr
    signal = next(line for line in plan.stdout.splitlines() if line.startswith("RUNTIME_STOPSIGNAL="))
    assert signal == f"RUNTIME_STOPSIGNAL=({unit()['Service']['KillSignal']})"


def test_the_default_configuration_is_loopback_with_state_in_var_lib():
    config = json.loads((PACKAGING / "config.json").read_text())
    assert config == {"listen": "127.0.0.1:8080", "data-dir": "/var/lib/transferd"}
    assert (PACKAGING / "conffiles").read_text().split() == ["/etc/transferd/config.json"]
