"""An SFTP test peer on 127.0.0.1: asyncssh's SSH server (pinned in scripts/requirements/ftp.txt)
with its SFTP subsystem, confined to one folder.

    sftp-peer.py PORT ROOT USER PASSWORD HOST_KEY KNOWN_HOSTS OTHER_KNOWN_HOSTS

One user, USER, logs in with PASSWORD (password and keyboard-interactive authentication only:
no public keys are accepted, so a client's own ~/.ssh keys never get it in); SFTP paths are
rooted at ROOT (chroot). HOST_KEY is created (ssh-ed25519) when missing. KNOWN_HOSTS is written
with the OpenSSH known_hosts line "[127.0.0.1]:PORT ssh-ed25519 ..." that names this server's
key; OTHER_KNOWN_HOSTS with a line of the same form for a key that is not this server's (what a
client sees when the server was replaced). No shell, no exec, no port forwarding.
Why asyncssh rather than Debian's sshd: sshd checks passwords against the system's users (PAM
or /etc/shadow), so a password login needs a system account made as root; asyncssh is a real
SSH-2 server whose users are its own.
"""
import asyncio
import os
import sys

import asyncssh


class PasswordServer(asyncssh.SSHServer):
    def __init__(self, user: str, password: str) -> None:
        self.user = user
        self.password = password

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return username == self.user and password == self.password


def write_known_hosts(path: str, port: int, key: asyncssh.SSHKey) -> None:
    algorithm, blob = key.export_public_key("openssh").decode().split()[:2]
    line = f"[127.0.0.1]:{port} {algorithm} {blob}\n"
    with open(path + ".tmp", "w") as file:
        file.write(line)
    os.replace(path + ".tmp", path)


async def serve(port: int, root: str, user: str, password: str, host_key_path: str) -> None:
    chroot = os.fsencode(os.path.realpath(root))

    def sftp_factory(chan):
        return asyncssh.SFTPServer(chan, chroot=chroot)

    await asyncssh.create_server(
        lambda: PasswordServer(user, password), "127.0.0.1", port,
        server_host_keys=[host_key_path], sftp_factory=sftp_factory,
        allow_scp=False, process_factory=None, agent_forwarding=False,
        x11_forwarding=False, line_editor=False)
    print(f"sftp peer listening on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    await asyncio.Event().wait()


def main() -> None:
    port, root, user, password, host_key, known_hosts, other_known_hosts = sys.argv[1:8]
    if not os.path.exists(host_key):
        asyncssh.generate_private_key("ssh-ed25519").write_private_key(host_key)
    write_known_hosts(known_hosts, int(port), asyncssh.read_private_key(host_key))
    write_known_hosts(other_known_hosts, int(port), asyncssh.generate_private_key("ssh-ed25519"))
    asyncio.run(serve(int(port), root, user, password, host_key))


if __name__ == "__main__":
    main()
