"""An FTP test peer on 127.0.0.1 (pyftpdlib, pinned in scripts/requirements/ftp.txt).

    ftp-peer.py MODE PORT ROOT USER PASSWORD [CERT KEY]

MODE is one of
  plain          plain FTP (RFC 959), passive mode (EPSV/PASV) and active mode both served
  explicit-tls   FTPS with AUTH TLS (RFC 4217): TLS is required on the control connection before
                 USER and on the data connection (PROT P) before PASV/EPSV, so a client that does
                 not upgrade gets no file
  implicit-tls   FTPS where the connection is TLS from its first byte (the ftps:// scheme,
                 port 990 by convention); the data connections are TLS too (PROT P)
One user, USER with PASSWORD, may read and write everything under ROOT; there is no anonymous
login. A file uploaded under a name starting with "lossy-" keeps only its first 65,536 bytes
while the server still answers 226, as a server that lost an upload's end does (the daemon must
notice: it asks SIZE after each upload). CERT is the certificate chain (leaf first) and KEY its private key, for the TLS modes.
Started and stopped (SIGTERM) by scripts/lib/peers-ftp.sh; logs every command to stderr.
"""
import logging
import os
import sys

from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.filesystems import AbstractedFS
from pyftpdlib.handlers import FTPHandler, TLS_FTPHandler
from pyftpdlib.servers import FTPServer


LOSSY_PREFIX = "lossy-"
LOSSY_KEPT = 65536


class TruncatingFile:
    """A file open for writing that silently drops every byte after the first `kept`."""

    def __init__(self, file, kept):
        self._file = file
        self._room = kept

    def write(self, data):
        self._file.write(data[: max(0, self._room)])
        self._room -= len(data)
        return len(data)

    def __getattr__(self, name):
        return getattr(self._file, name)


class LossyFS(AbstractedFS):
    """The served folder, where uploads named lossy-* lose their end (see the docstring)."""

    def open(self, filename, mode):
        file = super().open(filename, mode)
        if "w" in mode and os.path.basename(filename).startswith(LOSSY_PREFIX):
            return TruncatingFile(file, LOSSY_KEPT)
        return file


class ImplicitTLSHandler(TLS_FTPHandler):
    """TLS from the first byte: the handshake starts at once and the banner follows it."""

    def handle(self):
        self.secure_connection(self.ssl_context)

    def handle_ssl_established(self):
        FTPHandler.handle(self)

    def ftp_AUTH(self, line):
        self.respond("503 Already using TLS.")


def main() -> None:
    mode, port, root, user, password = sys.argv[1:6]
    authorizer = DummyAuthorizer()
    # e: cwd, l: list, r: retrieve, a: append, d: delete, f: rename, m: mkdir, w: store,
    # M: chmod, T: set modification time.
    authorizer.add_user(user, password, root, perm="elradfmwMT")
    if mode == "plain":
        handler = FTPHandler
    elif mode in ("explicit-tls", "implicit-tls"):
        cert, key = sys.argv[6:8]
        handler = ImplicitTLSHandler if mode == "implicit-tls" else TLS_FTPHandler
        handler.certfile = cert
        handler.keyfile = key
        handler.tls_control_required = True
        handler.tls_data_required = True
    else:
        sys.exit(f"unknown mode {mode!r}")
    handler.authorizer = authorizer
    handler.abstracted_fs = LossyFS
    handler.banner = f"transferd test FTP peer ({mode})"
    # Only loopback passive ports: the kernel's free ones above 40000 are plenty for the tests.
    handler.passive_ports = range(40000, 60000)
    # pyftpdlib answers a refused login after 3 s (to slow guessing); the tests refuse on purpose.
    handler.auth_failed_timeout = 0.05
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    server = FTPServer(("127.0.0.1", int(port)), handler)
    server.max_cons = 64
    server.serve_forever()


if __name__ == "__main__":
    main()
