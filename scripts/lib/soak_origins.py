"""The crash soak's origins (scripts/lib/crash_soak.py), in one threaded HTTP/1.1 server on
127.0.0.1, every body paced per connection so that a kill lands mid-transfer:
  GET  /files/NAME   a file with a strong ETag, `Range: bytes=N-` (206) and If-Range;
  PUT  /sink/NAME    an upload sink: every attempt kept as far as it arrived, with the sha256 of
                     the whole ones, answered 201 {"bytes", "sha256"};
  POST /tus/, HEAD and PATCH /tus/ID   a minimal tus 1.0.0 server (core protocol and creation):
                     PATCH bytes are kept as they arrive, 409 on an offset mismatch.
Standard library only.
"""
from __future__ import annotations

import hashlib
import http.server
import json
import re
import select
import socket
import sys
import threading
import time

CHUNK = 16 * 1024


class Pace:
    """The origins' shared per-connection rate (bytes per second; None: unthrottled)."""

    def __init__(self, rate: int | None):
        self.rate = rate

    def sleep_for(self, started: float, sent: int) -> None:
        rate = self.rate
        if rate:
            due = started + sent / rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)


def peer_closed(sock: socket.socket) -> bool:
    """Whether the client closed its side (POLLRDHUP): a dead daemon's bytes still queued in the
    kernel must not be drained into an upload its restarted successor is sending again."""
    poller = select.poll()
    poller.register(sock, select.POLLRDHUP)
    return any(event & (select.POLLRDHUP | select.POLLHUP | select.POLLERR) for _, event in poller.poll(0))


class Origins:
    """The state of all three origins: files, upload attempts, tus uploads. Guarded by `lock`."""

    def __init__(self, pace: Pace):
        self.pace = pace
        self.lock = threading.Lock()
        self.files: dict[str, bytes] = {}
        # path -> attempts: {"received": int, "declared": int, "complete": bool, "sha256": str | None}
        self.sink: dict[str, list[dict]] = {}
        # id -> {"length": int, "data": bytearray, "generation": int}
        self.tus: dict[str, dict] = {}
        self.next_tus = 1
        # What the kills did, for the report: ranged GETs (resumed downloads), cut PATCHes.
        self.ranged_gets = 0
        self.cut_patches = 0


class OriginHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "crash-soak-origin"
    origins: Origins  # set on the subclass made per server

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        pass

    def answer(self, status: int, headers: dict[str, str] | None = None, body: bytes = b"") -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.command != "HEAD" and status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    # ---- downloads: strong ETag, single Range, If-Range ------------------------------------------

    def do_GET(self) -> None:
        name = self.path.removeprefix("/files/")
        data = self.origins.files.get(name)
        if not self.path.startswith("/files/") or data is None:
            return self.answer(404)
        etag = '"' + hashlib.sha256(data).hexdigest()[:16] + '"'
        start, status, headers = 0, 200, {"ETag": etag, "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream"}
        wanted = self.headers.get("Range")
        if wanted and self.headers.get("If-Range", etag) == etag:
            match = re.fullmatch(r"bytes=(\d+)-", wanted.strip())
            if match:
                start = int(match.group(1))
                if start >= len(data):
                    return self.answer(416, {"Content-Range": f"bytes */{len(data)}"})
                status = 206
                with self.origins.lock:
                    self.origins.ranged_gets += 1
                headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        started, sent = time.monotonic(), 0
        try:
            for offset in range(start, len(data), CHUNK):
                piece = data[offset:offset + CHUNK]
                self.wfile.write(piece)
                sent += len(piece)
                self.origins.pace.sleep_for(started, sent)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    # ---- plain uploads: every attempt kept as far as it arrived ----------------------------------

    def read_paced(self, length: int, keep) -> bool:
        """Reads `length` body bytes at the pace, handing each piece to `keep` (False stops);
        False if the client went away or `keep` refused."""
        started, got = time.monotonic(), 0
        while got < length:
            if self.origins.pace.rate and peer_closed(self.connection):
                return False
            try:
                piece = self.rfile.read1(min(CHUNK, length - got))
            except (ConnectionResetError, OSError):
                return False
            if not piece or not keep(piece):
                return False
            got += len(piece)
            self.origins.pace.sleep_for(started, got)
        return True

    def sink_upload(self) -> None:
        length = int(self.headers.get("Content-Length", "-1"))
        if length < 0:
            self.close_connection = True
            return self.answer(411)
        attempt = {"received": 0, "declared": length, "complete": False, "sha256": None}
        digest = hashlib.sha256()
        with self.origins.lock:
            self.origins.sink.setdefault(self.path, []).append(attempt)

        def keep(piece: bytes) -> bool:
            digest.update(piece)
            with self.origins.lock:
                attempt["received"] += len(piece)
            return True

        if not self.read_paced(length, keep):
            self.close_connection = True
            return
        with self.origins.lock:
            attempt["complete"] = True
            attempt["sha256"] = digest.hexdigest()
        body = json.dumps({"bytes": length, "sha256": attempt["sha256"]}).encode()
        self.answer(201, {"Content-Type": "application/json"}, body)

    def do_PUT(self) -> None:
        self.sink_upload()

    # ---- tus 1.0.0: creation, HEAD, PATCH ----------------------------------------------------------

    def do_POST(self) -> None:
        if not self.path.startswith("/tus"):
            return self.sink_upload()
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        length = self.headers.get("Upload-Length")
        if self.headers.get("Tus-Resumable") != "1.0.0" or length is None or not length.isdigit():
            return self.answer(400, {"Tus-Resumable": "1.0.0"})
        with self.origins.lock:
            upload_id = f"u{self.origins.next_tus}"
            self.origins.next_tus += 1
            self.origins.tus[upload_id] = {"length": int(length), "data": bytearray(), "generation": 0}
        self.answer(201, {"Tus-Resumable": "1.0.0", "Location": f"/tus/{upload_id}"})

    def do_HEAD(self) -> None:
        with self.origins.lock:
            upload = self.origins.tus.get(self.path.removeprefix("/tus/"))
            offset = len(upload["data"]) if upload else None
            length = upload["length"] if upload else None
        if upload is None:
            return self.answer(404, {"Tus-Resumable": "1.0.0"})
        self.answer(200, {"Tus-Resumable": "1.0.0", "Upload-Offset": str(offset), "Upload-Length": str(length), "Cache-Control": "no-store"})

    def do_PATCH(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        offset = int(self.headers.get("Upload-Offset", "-1"))
        with self.origins.lock:
            upload = self.origins.tus.get(self.path.removeprefix("/tus/"))
            status = None
            if upload is None:
                status = 404
            elif self.headers.get("Content-Type") != "application/offset+octet-stream":
                status = 415
            elif offset != len(upload["data"]) or offset + length > upload["length"]:
                status = 409
            else:
                # A newer PATCH takes the upload over, as tusd's lock makes an older one stop.
                upload["generation"] += 1
                generation = upload["generation"]
        if status:
            self.rfile.read(length)
            return self.answer(status, {"Tus-Resumable": "1.0.0"})

        def keep(piece: bytes) -> bool:
            with self.origins.lock:
                if upload["generation"] != generation:
                    return False
                upload["data"] += piece  # what arrived stays, as real tus servers keep it
            return True

        if not self.read_paced(length, keep):
            with self.origins.lock:
                self.origins.cut_patches += 1
            self.close_connection = True
            return
        with self.origins.lock:
            now = len(upload["data"])
        self.answer(204, {"Tus-Resumable": "1.0.0", "Upload-Offset": str(now)})


class OriginServer(http.server.ThreadingHTTPServer):
    """The threaded server of the origins; a client killed mid-answer is expected, not an error."""

    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def start_origins(origins: Origins) -> tuple[OriginServer, str]:
    handler = type("Handler", (OriginHandler,), {"origins": origins})
    server = OriginServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, name="crash-soak origin", daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
