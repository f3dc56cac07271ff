#!/usr/bin/env python3
"""The upload benchmark's sink: an HTTP/1.1 server on 127.0.0.1 that reads every PUT or POST body
to its end (by Content-Length; chunked bodies get 411), hashing it with SHA-256 as it arrives,
never keeping it, and only then answers 200 {"bytes": N, "sha256": "..."}. GET /last answers the
same for the latest body, GET /healthz "ok".

Used by bench/upload.sh, which starts it as: upload_sink.py PORT. Standard library only.
"""
import hashlib
import http.server
import json
import sys
import threading

LAST = {"bytes": 0, "sha256": None}
LOCK = threading.Lock()
PIECE = 1 << 20


class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self, status, payload):
        body = json.dumps(payload, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/healthz":
            self._answer(200, {"status": "ok"})
        elif self.path == "/last":
            with LOCK:
                self._answer(200, dict(LAST))
        else:
            self._answer(404, {"error": "not found"})

    def _consume(self):
        length = self.headers.get("Content-Length")
        if length is None or "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            self._answer(411, {"error": "Content-Length required"})
            return
        remaining = int(length)
        if self.headers.get("Expect", "").lower() == "100-continue":
            self.send_response_only(100)
            self.end_headers()
        digest = hashlib.sha256()
        buffer = bytearray(PIECE)
        view = memoryview(buffer)
        while remaining > 0:
            count = self.rfile.readinto(view[: min(PIECE, remaining)])
            if not count:
                break
            digest.update(view[:count])
            remaining -= count
        result = {"bytes": int(length) - remaining, "sha256": digest.hexdigest()}
        with LOCK:
            LAST.clear()
            LAST.update(result)
        if remaining:
            self.close_connection = True
            return
        self._answer(200, result)

    do_PUT = _consume
    do_POST = _consume

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
