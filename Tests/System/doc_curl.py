"""The `curl` that the documentation's examples run under Tests/System/test_doc_examples.py: first
on their PATH, it checks and records every call, then runs the real curl.

- Every URL a call names must be on 127.0.0.0/8 (or localhost, ::1): anything else is refused
  before anything is sent (exit 97), so no example can reach or resolve a public name.
- A call to the daemon under test (DOC_DAEMON, 127.0.0.1:PORT) gets the test's bearer token when
  it sends no Authorization header, a time bound (--max-time) unless it has one, and long-poll
  `wait=N` query values above DOC_MAX_WAIT cut to DOC_MAX_WAIT. Its HTTP status is read from a
  header dump: a status of 400 or more fails the call as --fail-with-body would (the body is
  still written, exit 22), unless DOC_EXPECT_STATUS names that status (the test file's list of
  deliberate error answers sets it on that one line); with DOC_EXPECT_STATUS any other status
  fails the call (exit 1).
- Exit 23 (curl could not write its output because the reader stopped reading, as `| head -5`
  does) counts as success when the status was fine: the example asked for only the first lines.
- One JSON line per call goes to DOC_CALL_LOG: the arguments as given, the status, the exit
  status, the expectation and the seconds it took.

Calls to other loopback servers (an example's own web server) pass through unchanged except for
--max-time.
"""
from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from urllib.parse import urlsplit

# curl options the examples may use, by whether they take a value. An option outside both lists
# stops the call (exit 96): this shim must know which arguments are URLs.
VALUE_OPTIONS = {
    "-d", "--data", "--data-binary", "--data-raw", "--data-ascii", "--data-urlencode", "--json",
    "-H", "--header", "-X", "--request", "-o", "--output", "-w", "--write-out", "-u", "--user",
    "-T", "--upload-file", "-F", "--form", "-m", "--max-time", "--connect-timeout", "-r", "--range",
    "-A", "--user-agent", "-e", "--referer", "-b", "--cookie", "-c", "--cookie-jar", "--cacert",
    "--retry", "--retry-max-time", "--limit-rate", "-C", "--continue-at", "--url", "-D", "--dump-header",
}
FLAG_OPTIONS = {
    "-s", "--silent", "-S", "--show-error", "-f", "--fail", "--fail-with-body", "-L", "--location",
    "-i", "--include", "-I", "--head", "-v", "--verbose", "-N", "--no-buffer", "-G", "--get",
    "--compressed", "-O", "--remote-name", "-J", "--remote-header-name", "-#", "--progress-bar",
    "--http1.1", "--http2", "--http2-prior-knowledge", "-k", "--insecure", "-g", "--globoff",
    "--no-progress-meter", "-q",
}
SHORT_FLAGS = {option[1] for option in FLAG_OPTIONS if len(option) == 2 and option[0] == "-" and option[1] != "-"}
SHORT_VALUES = {option[1] for option in VALUE_OPTIONS if len(option) == 2 and option[0] == "-" and option[1] != "-"}

REFUSED = 97
UNKNOWN_OPTION = 96


def fail(status: int, message: str) -> None:
    print(f"doc_curl: {message}", file=sys.stderr)
    sys.exit(status)


def split_arguments(arguments: list[str]) -> tuple[list[tuple[str, str | None]], list[int]]:
    """The options as (name, value) and the indexes of the URL arguments."""
    options: list[tuple[str, str | None]] = []
    urls: list[int] = []
    index = 0
    while index < len(arguments):
        argument = arguments[index]
        if argument == "--url":
            urls.append(index + 1)
            index += 2
            continue
        if argument.startswith("--"):
            name, has_value, value = argument.partition("=")
            if name in VALUE_OPTIONS:
                if not has_value:
                    index += 1
                    value = arguments[index] if index < len(arguments) else ""
                options.append((name, value))
            elif name in FLAG_OPTIONS:
                options.append((name, None))
            else:
                fail(UNKNOWN_OPTION, f"unknown curl option {argument!r}: add it to Tests/System/doc_curl.py")
        elif argument.startswith("-") and len(argument) > 1:
            letters = argument[1:]
            for position, letter in enumerate(letters):
                if letter in SHORT_FLAGS:
                    options.append(("-" + letter, None))
                elif letter in SHORT_VALUES:
                    value = letters[position + 1:]
                    if not value:
                        index += 1
                        value = arguments[index] if index < len(arguments) else ""
                    options.append(("-" + letter, value))
                    break
                else:
                    fail(UNKNOWN_OPTION, f"unknown curl option -{letter} (in {argument!r}): add it to Tests/System/doc_curl.py")
        else:
            urls.append(index)
        index += 1
    return options, urls


def record(entry: dict) -> None:
    """One line of the call log, with the block the call came from."""
    with open(os.environ["DOC_CALL_LOG"], "a") as log:
        log.write(json.dumps({"block": os.environ.get("DOC_BLOCK"), **entry}) + "\n")


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def endpoint(url: str) -> tuple[str, int | None]:
    parts = urlsplit(url if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", url) else "http://" + url)
    return (parts.hostname or ""), parts.port


def main() -> int:
    arguments = sys.argv[1:]
    daemon = os.environ["DOC_DAEMON"]
    daemon_host, _, daemon_port = daemon.rpartition(":")
    max_wait = float(os.environ.get("DOC_MAX_WAIT", "5"))
    max_time = os.environ.get("DOC_MAX_TIME", "20")
    expect = os.environ.get("DOC_EXPECT_STATUS")
    options, urls = split_arguments(arguments)
    if not urls:
        fail(2, f"no URL in curl {arguments!r}")
    names = {name for name, _ in options}
    to_daemon = False
    for index in urls:
        host, port = endpoint(arguments[index])
        if not loopback(host):
            record({"refused": arguments[index], "arguments": sys.argv[1:]})
            fail(REFUSED, f"refused {arguments[index]!r}: not on 127.0.0.0/8 (rewrite the example's origin in the test)")
        if host in ("localhost", daemon_host) and port == int(daemon_port):
            to_daemon = True
            # A long-poll's wait, cut to the test's bound.
            arguments[index] = re.sub(r"([?&]wait=)(\d+(?:\.\d+)?)",
                                      lambda m: m.group(1) + (m.group(2) if float(m.group(2)) <= max_wait else f"{max_wait:g}"),
                                      arguments[index])
    added: list[str] = []
    if not names & {"-m", "--max-time"}:
        added += ["--max-time", max_time]
    headers_file = None
    if to_daemon:
        if names & {"-D", "--dump-header"}:
            fail(UNKNOWN_OPTION, "an example's own -D is not supported yet: the shim reads the status from its own header dump")
        if not any(name in ("-H", "--header") and (value or "").lower().startswith("authorization:") for name, value in options):
            token = os.environ.get("DOC_TOKEN")
            if token:
                added += ["-H", f"Authorization: Bearer {token}"]
        handle, headers_file = tempfile.mkstemp(prefix="doc-curl-headers-")
        os.close(handle)
        added += ["-D", headers_file]
    started = time.monotonic()
    # The arguments as the example gave them come last, so its own options keep their meaning.
    process = subprocess.run([os.environ["DOC_REAL_CURL"], "--noproxy", "*", *added, *arguments], check=False)
    seconds = time.monotonic() - started
    exit_status = process.returncode
    status = None
    if headers_file:
        with open(headers_file, "rb") as file:
            statuses = re.findall(rb"^HTTP/[\d.]+ (\d{3})", file.read(), re.MULTILINE)
        os.unlink(headers_file)
        # 1xx interim answers (100 Continue) are not the answer.
        finals = [int(code) for code in statuses if not code.startswith(b"1")]
        status = finals[-1] if finals else None
    result = exit_status
    problem = None
    if to_daemon and status is not None:
        if exit_status == 23:
            result = 0
        if expect is not None:
            if status != int(expect):
                problem = f"HTTP {status}, the test expects {expect} here"
                result = 1
        elif status >= 400:
            problem = f"HTTP {status}"
            result = 22
    record({"arguments": sys.argv[1:], "daemon": to_daemon, "status": status, "exit": exit_status, "result": result,
            "expect": expect, "seconds": round(seconds, 3)})
    if problem:
        print(f"\ndoc_curl: {problem} from curl {' '.join(sys.argv[1:])}", file=sys.stderr)
    return result


if __name__ == "__main__":
    sys.exit(main())
