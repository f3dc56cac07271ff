#!/usr/bin/python3
"""Starts a systemd service's ExecStart inside a Debian root under the sandbox its unit file
asks for, as systemd would, on a machine where systemd is not PID 1 (scripts/package-check.sh).

Run it as root, as PID 1 of fresh PID and mount namespaces (unshare --mount --propagation private
--pid --fork), with Debian's python3 and python3-seccomp (libseccomp, as systemd uses):

    /usr/bin/python3 scripts/lib/unit_sandbox.py [--kill-denied] ROOT UNIT-PATH-IN-ROOT [NAME=VALUE...]

It reads the unit's [Service] section and, in this order, as systemd's exec does:
  - StateDirectory= (made under /var/lib, owned by User=, StateDirectoryMode=),
  - the file system view: ProtectSystem=strict (the root bound read-only, the state directories
    read-write), PrivateTmp= (/tmp and /var/tmp on empty tmpfs), PrivateDevices= (a /dev with
    only null, zero, full, random, urandom and tty), ProtectHome= (/home, /root, /run/user
    inaccessible), /proc with ProtectProc= (hidepid) and ProtectKernelTunables= (/proc/sys and
    /sys read-only);
  - chroot into ROOT, WorkingDirectory=, LimitNOFILE=, UMask=,
  - CapabilityBoundingSet= (the listed capabilities kept, here none), User=/Group= with the
    user's supplementary groups, NoNewPrivileges=,
  - seccomp filters built as systemd 252 builds them: SystemCallFilter= (its @groups expanded by
    this machine's `systemd-analyze syscall-filter`, SystemCallErrorNumber= for the rest),
    SystemCallArchitectures=native, MemoryDenyWriteExecute=, RestrictAddressFamilies=,
    RestrictNamespaces= (clone3 answered ENOSYS, so glibc falls back to clone), LockPersonality=,
    RestrictRealtime=, RestrictSUIDSGID=, and the system calls ProtectClock=, ProtectHostname=,
    ProtectKernelModules=, ProtectKernelLogs= and ProtectKernelTunables= deny,
  - then execve of ExecStart= with systemd's environment for the service (PATH, HOME, USER,
    LOGNAME, SHELL, STATE_DIRECTORY, INVOCATION_ID, the unit's Environment=) plus NAME=VALUE...
    given on the command line (the check's listen address and token, say).
What systemd does outside the process (ordering, Restart=, KillSignal=, TimeoutStopSec=,
RemoveIPC=, the service's cgroup) is not done here: the lines printed say which directives were
applied and which were only read. A directive this script does not know stops it, so the check
cannot drift from the unit silently.

With --kill-denied a system call SystemCallFilter= denies kills the process (SIGSYS) instead of
failing with SystemCallErrorNumber=: stricter than the unit, so that the check sees a denied call
the daemon would otherwise survive unnoticed (a fallback taken, a figure missing).
"""
from __future__ import annotations

import ctypes
import errno
import os
import resource
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import seccomp  # Debian's python3-seccomp

# Everything is imported here, before the chroot: no module file can be read after it.

# Directives applied here (see the module's description), and those that concern the service
# manager rather than the process it starts.
APPLIED = {
    "ExecStart", "User", "Group", "WorkingDirectory", "Environment", "StateDirectory", "StateDirectoryMode",
    "LimitNOFILE", "UMask", "NoNewPrivileges", "CapabilityBoundingSet", "AmbientCapabilities", "ProtectSystem",
    "ProtectHome", "PrivateTmp", "PrivateDevices", "ProtectKernelTunables", "ProtectKernelModules",
    "ProtectKernelLogs", "ProtectControlGroups", "ProtectClock", "ProtectHostname", "ProtectProc",
    "RestrictAddressFamilies", "RestrictNamespaces", "RestrictRealtime", "RestrictSUIDSGID", "LockPersonality",
    "MemoryDenyWriteExecute", "SystemCallArchitectures", "SystemCallFilter", "SystemCallErrorNumber",
}
MANAGER_ONLY = {"Type", "KillSignal", "KillMode", "TimeoutStopSec", "Restart", "RestartSec", "RemoveIPC"}

PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
CLONE_NAMESPACES = {  # the namespace flags RestrictNamespaces= knows (linux/sched.h)
    "cgroup": 0x02000000, "ipc": 0x08000000, "net": 0x40000000, "mnt": 0x00020000,
    "pid": 0x20000000, "user": 0x10000000, "uts": 0x04000000,
}
ADDRESS_FAMILIES = {"AF_UNIX": 1, "AF_LOCAL": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16, "AF_PACKET": 17}
AF_MAX = 46  # AF_MAX of the kernel headers systemd 252 is built with
PROT_WRITE, PROT_EXEC, SHM_EXEC = 0x2, 0x4, 0o100000
S_ISUID, S_ISGID, O_CREAT = 0o4000, 0o2000, 0o100
SCHED_FIFO, SCHED_RR, SCHED_IDLE = 1, 2, 5

libc = ctypes.CDLL(None, use_errno=True)


def say(message: str) -> None:
    print(f"unit_sandbox: {message}", file=sys.stderr, flush=True)


def die(message: str) -> None:
    say(f"error: {message}")
    sys.exit(70)


def mount(*arguments: str) -> None:
    result = subprocess.run(["mount", *arguments], check=False, capture_output=True, text=True)
    if result.returncode != 0:
        die(f"mount {' '.join(arguments)}: {result.stderr.strip()}")


def parse_unit(path: Path) -> dict[str, list[str]]:
    """The [Service] section: each key's assignments in order (an empty one resets a list)."""
    section, values = "", {}
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        if section != "Service":
            continue
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if key not in APPLIED | MANAGER_ONLY:
            die(f"{path}: {key}= is not modelled by unit_sandbox.py (teach it, or the check cannot vouch for it)")
        values.setdefault(key, []).append(value)
    return values


def last(unit: dict[str, list[str]], key: str, default: str = "") -> str:
    return unit.get(key, [default])[-1]


def yes(unit: dict[str, list[str]], key: str) -> bool:
    return last(unit, key, "no").lower() in {"yes", "true", "1", "on"}


def words(unit: dict[str, list[str]], key: str) -> list[str]:
    """A list setting: the words of every assignment, an empty assignment clearing what came before."""
    result: list[str] = []
    for value in unit.get(key, []):
        result = [] if not value else result + value.split()
    return result


def syscall_groups() -> dict[str, list[str]]:
    """systemd's system call groups (@system-service, ...) as this machine's systemd lists them."""
    output = subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True, check=True).stdout
    groups: dict[str, list[str]] = {}
    current = None
    for line in output.splitlines():
        if line.startswith("@"):
            current = groups.setdefault(line.strip(), [])
        elif line.startswith("    ") and current is not None and not line.strip().startswith("#"):
            current.append(line.strip())
        elif not line.strip() or line.startswith("#"):
            current = None if line.startswith("#") else current
    return groups


def expand(names: list[str], groups: dict[str, list[str]]) -> set[str]:
    result: set[str] = set()
    for name in names:
        if name.startswith("@"):
            if name not in groups:
                die(f"unknown system call group {name}")
            result |= expand(groups[name], groups)
        else:
            result.add(name)
    return result


def syscall_filter(unit: dict[str, list[str]], groups: dict[str, list[str]]) -> tuple[set[str], set[str]]:
    """SystemCallFilter= as systemd combines its assignments: the first decides allow or deny list;
    later ones add to it (or, with ~, take from an allow list). Returns (allowed, denied)."""
    allowed: set[str] | None = None
    denied: set[str] = set()
    for value in unit.get("SystemCallFilter", []):
        if not value:
            allowed, denied = None, set()
            continue
        invert = value.startswith("~")
        names = expand(value.lstrip("~").split(), groups)
        if allowed is None and not denied:
            if invert:
                denied = names
            else:
                allowed = names
        elif allowed is not None:
            allowed = allowed - names if invert else allowed | names
        else:
            denied = denied - names if not invert else denied | names
    return allowed or set(), denied


def resolvable(names: set[str]) -> list[str]:
    """The names libseccomp knows on this architecture (systemd skips the others too)."""
    known = []
    for name in sorted(names):
        try:
            number = seccomp.resolve_syscall(seccomp.Arch.NATIVE, name)
        except ValueError:
            continue
        if number >= 0:
            known.append(name)
    return known


KILL_DENIED = False


def error_action(unit: dict[str, list[str]]):
    name = last(unit, "SystemCallErrorNumber")
    if not name or KILL_DENIED:
        return seccomp.KILL_PROCESS
    if not hasattr(errno, name):
        die(f"SystemCallErrorNumber={name} is not an errno name")
    return seccomp.ERRNO(getattr(errno, name))


def build_filters(unit: dict[str, list[str]], groups: dict[str, list[str]]) -> list[tuple[str, seccomp.SyscallFilter]]:
    """One filter per directive, in the order systemd loads them (the kernel applies the strictest
    answer of all)."""
    filters = []
    arg = seccomp.Arg

    archs = words(unit, "SystemCallArchitectures")
    if archs and archs != ["native"]:
        die(f"SystemCallArchitectures={' '.join(archs)}: only native is modelled")
    if archs:
        # A filter's architectures are the native one only: any other ABI's system call kills.
        filters.append(("SystemCallArchitectures=native", seccomp.SyscallFilter(seccomp.ALLOW)))

    if yes(unit, "MemoryDenyWriteExecute"):
        f = seccomp.SyscallFilter(seccomp.ALLOW)
        eperm = seccomp.ERRNO(errno.EPERM)
        f.add_rule(eperm, "mmap", arg(2, seccomp.MASKED_EQ, PROT_EXEC | PROT_WRITE, PROT_EXEC | PROT_WRITE))
        f.add_rule(eperm, "mprotect", arg(2, seccomp.MASKED_EQ, PROT_EXEC, PROT_EXEC))
        f.add_rule(eperm, "pkey_mprotect", arg(2, seccomp.MASKED_EQ, PROT_EXEC, PROT_EXEC))
        f.add_rule(eperm, "shmat", arg(2, seccomp.MASKED_EQ, SHM_EXEC, SHM_EXEC))
        filters.append(("MemoryDenyWriteExecute", f))

    families = words(unit, "RestrictAddressFamilies")
    if families:
        if families[0].startswith("~") or "none" in families:
            die("RestrictAddressFamilies: only an allow list of families is modelled")
        wanted = set()
        for name in families:
            if name not in ADDRESS_FAMILIES:
                die(f"RestrictAddressFamilies: {name} is not modelled")
            wanted.add(ADDRESS_FAMILIES[name])
        f = seccomp.SyscallFilter(seccomp.ALLOW)
        refuse = seccomp.ERRNO(errno.EAFNOSUPPORT)
        f.add_rule(refuse, "socket", arg(0, seccomp.LT, min(wanted)))
        f.add_rule(refuse, "socket", arg(0, seccomp.GT, max(wanted)))
        for family in range(1, AF_MAX):
            if family not in wanted and min(wanted) < family < max(wanted):
                f.add_rule(refuse, "socket", arg(0, seccomp.EQ, family))
        filters.append((f"RestrictAddressFamilies={' '.join(families)}", f))

    namespaces = last(unit, "RestrictNamespaces")
    if namespaces:
        if namespaces.lower() not in {"yes", "true", "1", "on"}:
            die(f"RestrictNamespaces={namespaces}: only yes (all namespaces) is modelled")
        f = seccomp.SyscallFilter(seccomp.ALLOW)
        eperm = seccomp.ERRNO(errno.EPERM)
        f.add_rule(eperm, "setns")
        for flag in CLONE_NAMESPACES.values():
            f.add_rule(eperm, "unshare", arg(0, seccomp.MASKED_EQ, flag, flag))
            f.add_rule(eperm, "clone", arg(0, seccomp.MASKED_EQ, flag, flag))
        # clone3's flags are in memory, out of a filter's reach: refused as unknown, glibc then uses clone.
        f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        filters.append(("RestrictNamespaces=yes", f))

    if yes(unit, "LockPersonality"):
        f = seccomp.SyscallFilter(seccomp.ALLOW)
        f.add_rule(seccomp.ERRNO(errno.EPERM), "personality", arg(0, seccomp.NE, 0))  # PER_LINUX
        filters.append(("LockPersonality", f))

    if yes(unit, "RestrictRealtime"):
        f = seccomp.SyscallFilter(seccomp.ALLOW)
        eperm = seccomp.ERRNO(errno.EPERM)
        for policy in (SCHED_FIFO, SCHED_RR, 4):
            f.add_rule(eperm, "sched_setscheduler", arg(1, seccomp.EQ, policy))
        f.add_rule(eperm, "sched_setscheduler", arg(1, seccomp.GT, SCHED_IDLE))
        filters.append(("RestrictRealtime", f))

    if yes(unit, "RestrictSUIDSGID"):
        f = seccomp.SyscallFilter(seccomp.ALLOW)
        eperm = seccomp.ERRNO(errno.EPERM)
        for bit in (S_ISUID, S_ISGID):
            for name, index in (("chmod", 1), ("fchmod", 1), ("fchmodat", 2), ("mkdir", 1), ("mkdirat", 2),
                                ("mknod", 1), ("mknodat", 2), ("creat", 1)):
                f.add_rule(eperm, name, arg(index, seccomp.MASKED_EQ, bit, bit))
            f.add_rule(eperm, "open", arg(1, seccomp.MASKED_EQ, O_CREAT, O_CREAT), arg(2, seccomp.MASKED_EQ, bit, bit))
            f.add_rule(eperm, "openat", arg(2, seccomp.MASKED_EQ, O_CREAT, O_CREAT), arg(3, seccomp.MASKED_EQ, bit, bit))
        f.add_rule(eperm, "openat2")  # its flags are in memory: refused whole, as systemd does
        filters.append(("RestrictSUIDSGID", f))

    protected = set()
    if yes(unit, "ProtectClock"):
        protected |= expand(["@clock"], groups)
    if yes(unit, "ProtectHostname"):
        protected |= {"sethostname", "setdomainname"}
    if yes(unit, "ProtectKernelModules"):
        protected |= expand(["@module"], groups)
    if yes(unit, "ProtectKernelLogs"):
        protected.add("syslog")
    if yes(unit, "ProtectKernelTunables"):
        protected.add("_sysctl")
    if protected:
        f = seccomp.SyscallFilter(seccomp.ALLOW)
        for name in resolvable(protected):
            f.add_rule(seccomp.ERRNO(errno.EPERM), name)
        filters.append((f"Protect* system calls ({len(protected)} denied)", f))

    # SystemCallFilter= last, as systemd loads it: it would refuse the seccomp() calls of the others.
    allowed, denied = syscall_filter(unit, groups)
    if allowed:
        f = seccomp.SyscallFilter(error_action(unit))
        for name in resolvable(allowed):
            f.add_rule(seccomp.ALLOW, name)
        how = "the others kill (--kill-denied)" if KILL_DENIED else f"the others fail with {last(unit, 'SystemCallErrorNumber') or 'SIGSYS'}"
        filters.append((f"SystemCallFilter (allow {len(allowed)} system calls; {how})", f))
    elif denied:
        f = seccomp.SyscallFilter(seccomp.ALLOW)
        for name in resolvable(denied):
            f.add_rule(error_action(unit), name)
        filters.append((f"SystemCallFilter (deny {len(denied)} system calls)", f))
    return filters


def user_ids(root: Path, user: str, group: str) -> tuple[int, int, list[int], str, str]:
    """uid, gid, supplementary groups, home and shell of USER in ROOT's passwd and group files."""
    entry = next((fields for fields in (line.split(":") for line in (root / "etc/passwd").read_text().splitlines())
                  if fields[0] == user), None)
    if entry is None:
        die(f"User={user} is not in {root}/etc/passwd (did the postinst create it?)")
    uid, gid, home, shell = int(entry[2]), int(entry[3]), entry[5], entry[6].strip()
    supplementary = []
    for fields in (line.split(":") for line in (root / "etc/group").read_text().splitlines()):
        if group and fields[0] == group:
            gid = int(fields[2])
        if user in fields[3].strip().split(","):
            supplementary.append(int(fields[2]))
    return uid, gid, sorted(set(supplementary + [gid])), home, shell


def main() -> None:
    global KILL_DENIED
    arguments = sys.argv[1:]
    if arguments[:1] == ["--kill-denied"]:
        KILL_DENIED = True
        arguments = arguments[1:]
    if len(arguments) < 2:
        die("usage: unit_sandbox.py [--kill-denied] ROOT UNIT-PATH-IN-ROOT [NAME=VALUE...]")
    if os.getpid() != 1 or os.geteuid() != 0:
        die("run as root, as PID 1 of a new PID namespace in a private mount namespace (unshare --mount --pid --fork)")
    root = Path(arguments[0]).resolve()
    unit_path = arguments[1]
    extra = dict(item.split("=", 1) for item in arguments[2:])
    unit = parse_unit(root / unit_path.lstrip("/"))
    groups = syscall_groups()

    user = last(unit, "User", "root")
    uid, gid, supplementary, home, shell = user_ids(root, user, last(unit, "Group"))
    if uid == 0:
        die("the unit runs as root: not what this check is for")

    # StateDirectory=: /var/lib/NAME, owned by the user.
    state_mode = int(last(unit, "StateDirectoryMode", "0755"), 8)
    state_dirs = [f"/var/lib/{name}" for name in words(unit, "StateDirectory")]
    for state in state_dirs:
        path = root / state.lstrip("/")
        path.mkdir(parents=True, exist_ok=True)
        for dirpath, dirnames, filenames in os.walk(path):
            for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
                os.lchown(name, uid, gid)
        os.chmod(path, state_mode)

    # The file system view.
    applied = []
    mount("--bind", str(root), str(root))
    protect_home = last(unit, "ProtectHome", "no")
    if protect_home not in {"no", "yes"}:
        die(f"ProtectHome={protect_home}: only yes is modelled")
    if protect_home == "yes":
        for folder in ("home", "root", "run/user"):
            (root / folder).mkdir(parents=True, exist_ok=True)
            mount("-t", "tmpfs", "-o", "ro,mode=000,nosuid,nodev,noexec", "tmpfs", str(root / folder))
        applied.append("ProtectHome=yes: /home /root /run/user inaccessible")
    if yes(unit, "PrivateTmp"):
        for folder in ("tmp", "var/tmp"):
            mount("-t", "tmpfs", "-o", "mode=1777,nosuid,nodev", "tmpfs", str(root / folder))
        applied.append("PrivateTmp=yes: /tmp /var/tmp private")
    if yes(unit, "PrivateDevices"):
        dev = root / "dev"
        mount("-t", "tmpfs", "-o", "mode=755,nosuid,noexec", "tmpfs", str(dev))
        for node in ("null", "zero", "full", "random", "urandom", "tty"):
            (dev / node).touch()
            mount("--bind", f"/dev/{node}", str(dev / node))
        (dev / "shm").mkdir()
        mount("-t", "tmpfs", "-o", "mode=1777,nosuid,nodev,noexec", "tmpfs", str(dev / "shm"))
        for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                             ("stderr", "/proc/self/fd/2")):
            (dev / name).symlink_to(target)
        applied.append("PrivateDevices=yes: /dev holds null zero full random urandom tty shm")
    proc_options = "nosuid,nodev,noexec"
    protect_proc = last(unit, "ProtectProc", "default")
    if protect_proc in {"invisible", "noaccess", "ptraceable"}:
        proc_options += f",hidepid={protect_proc}"
    mount("-t", "proc", "-o", proc_options, "proc", str(root / "proc"))
    applied.append(f"/proc of the PID namespace ({proc_options})")
    if yes(unit, "ProtectKernelTunables"):
        for entry in ("sys", "sysrq-trigger", "irq", "bus", "fs"):
            target = root / "proc" / entry
            if target.exists():
                mount("--bind", str(target), str(target))
                mount("-o", "remount,bind,ro", str(target))
        mount("-t", "sysfs", "-o", "ro,nosuid,nodev,noexec", "sysfs", str(root / "sys"))
        applied.append("ProtectKernelTunables=yes: /proc/sys and /sys read-only")
    protect_system = last(unit, "ProtectSystem", "no")
    if protect_system not in {"no", "strict"}:
        die(f"ProtectSystem={protect_system}: only strict is modelled")
    if protect_system == "strict":
        mount("-o", "remount,bind,ro", str(root))
        for state in state_dirs:
            target = root / state.lstrip("/")
            mount("--bind", str(target), str(target))
            mount("-o", "remount,bind,rw", str(target))
        applied.append(f"ProtectSystem=strict: / read-only but {' '.join(state_dirs) or 'nothing'}")

    # Everything from the host is read before the chroot.
    last_cap = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    filters = build_filters(unit, groups)
    exec_start = shlex.split(last(unit, "ExecStart"))
    if not exec_start or exec_start[0][0] in "-@:+!" or any("%" in word or "$" in word for word in exec_start):
        die(f"ExecStart={last(unit, 'ExecStart')}: prefixes and specifiers are not modelled")
    environment = {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin", "USER": user, "LOGNAME": user,
        "HOME": home, "SHELL": shell, "INVOCATION_ID": uuid.uuid4().hex,
    }
    if state_dirs:
        environment["STATE_DIRECTORY"] = ":".join(state_dirs)
    for assignment in unit.get("Environment", []):
        for item in shlex.split(assignment):
            name, _, value = item.partition("=")
            environment[name] = value
    environment.update(extra)

    os.chroot(root)
    os.chdir(last(unit, "WorkingDirectory", "/"))
    nofile = last(unit, "LimitNOFILE")
    if nofile:
        soft, _, hard = nofile.partition(":")
        wanted = (int(soft), int(hard or soft))
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, wanted)
            applied.append(f"LimitNOFILE={nofile}")
        except (ValueError, OSError):
            # Raising the hard limit needs CAP_SYS_RESOURCE, which a container may not hold.
            ceiling = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted[0], ceiling), min(wanted[1], ceiling)))
            applied.append(f"LimitNOFILE={nofile} lowered to {ceiling}, this machine's hard limit (no CAP_SYS_RESOURCE)")
    os.umask(int(last(unit, "UMask", "0022"), 8))

    kept = words(unit, "CapabilityBoundingSet")
    if kept:
        die(f"CapabilityBoundingSet={' '.join(kept)}: only the empty set is modelled")
    if "CapabilityBoundingSet" in unit:
        for capability in range(last_cap + 1):
            if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                die(f"PR_CAPBSET_DROP {capability}: {os.strerror(ctypes.get_errno())}")
        applied.append("CapabilityBoundingSet= (empty): every capability dropped")
    if words(unit, "AmbientCapabilities"):
        die("AmbientCapabilities with capabilities is not modelled")
    os.setgroups(supplementary)
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    applied.append(f"User={user} (uid {uid}, gid {gid}, groups {','.join(map(str, supplementary))})")
    if yes(unit, "NoNewPrivileges") or filters:
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            die(f"PR_SET_NO_NEW_PRIVS: {os.strerror(ctypes.get_errno())}")
        applied.append("NoNewPrivileges=yes")
    for name, f in filters:
        f.load()
        applied.append(f"seccomp: {name}")

    for line in applied:
        say(f"applied {line}")
    read_only = sorted(key for key in unit if key in MANAGER_ONLY)
    say(f"read, for the service manager only: {' '.join(read_only)}")
    say(f"exec {' '.join(exec_start)} in {os.getcwd()} as uid {os.getuid()}")
    os.execve(exec_start[0], exec_start, environment)


if __name__ == "__main__":
    main()
