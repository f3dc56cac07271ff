#!/usr/bin/env python3
"""Makes DEST hold what `docker build` would send as its context from SOURCE: every file that
SOURCE/.dockerignore does not exclude, so scripts/container-check.sh builds from the same files
as the image (a needed file ignored fails the build there too).

.dockerignore rules as Docker applies them: patterns are relative to the context root (`data`
excludes only the top-level data, `**/data` any), `*` and `?` do not cross `/`, `**` spans
folders, a pattern that matches a folder excludes everything in it, `!` re-includes, and the last
matching pattern wins. Files are copied with their modification times and only when changed, and
files no longer in the context are removed, so a second build is incremental.
Usage: python3 scripts/lib/docker_context.py SOURCE DEST
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern as a regular expression over `/`-separated relative paths."""
    out, index = "", 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**", index):
            index += 2
            if pattern.startswith("/", index):
                out += "(?:.*/)?"
                index += 1
            else:
                out += ".*"
            continue
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            end = pattern.find("]", index + 1)
            if end < 0:
                raise ValueError(f"unclosed [ in .dockerignore pattern {pattern!r}")
            body = pattern[index + 1:end]
            out += "[" + ("^" + body[1:] if body.startswith(("!", "^")) else body) + "]"
            index = end
        elif char == "\\" and index + 1 < len(pattern):
            index += 1
            out += re.escape(pattern[index])
        else:
            out += re.escape(char)
        index += 1
    return re.compile(out + r"\Z")


def rules(source: Path) -> list[tuple[bool, re.Pattern[str]]]:
    """(excludes, regex) per line of .dockerignore, in order."""
    path = source / ".dockerignore"
    found: list[tuple[bool, re.Pattern[str]]] = []
    if not path.exists():
        return found
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        excludes = not line.startswith("!")
        line = os.path.normpath(line.lstrip("!").strip()).lstrip("/")
        found.append((excludes, pattern_regex(line)))
    return found


def excluded(relative: str, patterns: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Whether the last pattern matching the path, or one of its parent folders, excludes it."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[:count]) for count in range(1, len(parts) + 1)]
    verdict = False
    for excludes, regex in patterns:
        if any(regex.match(prefix) for prefix in prefixes):
            verdict = excludes
    return verdict


def context_files(source: Path) -> list[str]:
    patterns = rules(source)
    can_reinclude = any(not excludes for excludes, _ in patterns)
    found: list[str] = []
    for folder, folders, files in os.walk(source):
        base = os.path.relpath(folder, source)
        base = "" if base == "." else base + "/"
        if not can_reinclude:
            folders[:] = [name for name in folders if not excluded(base + name, patterns)]
        for name in files + [name for name in folders if os.path.islink(os.path.join(folder, name))]:
            if not excluded(base + name, patterns):
                found.append(base + name)
    return sorted(found)


def sync(source: Path, destination: Path) -> tuple[int, int]:
    """Copies the context into destination; returns (files, files copied now)."""
    wanted = context_files(source)
    copied = 0
    for relative in wanted:
        origin, target = source / relative, destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_symlink():
            link = os.readlink(origin)
            if target.is_symlink() and os.readlink(target) == link:
                continue
            if target.exists() or target.is_symlink():
                target.unlink()
            os.symlink(link, target)
            copied += 1
            continue
        stat = origin.stat()
        if target.is_file() and not target.is_symlink():
            current = target.stat()
            if current.st_size == stat.st_size and int(current.st_mtime) == int(stat.st_mtime):
                continue
        shutil.copy2(origin, target)
        copied += 1
    keep = set(wanted)
    for folder, folders, files in os.walk(destination, topdown=False):
        for name in files + folders:
            path = Path(folder) / name
            relative = path.relative_to(destination).as_posix()
            if name in files and relative not in keep:
                path.unlink()
            elif name in folders and path.is_symlink() and relative not in keep:
                path.unlink()
            elif name in folders and not path.is_symlink() and not any(path.iterdir()):
                path.rmdir()
    return len(wanted), copied


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    source, destination = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    destination.mkdir(parents=True, exist_ok=True)
    files, copied = sync(source, destination)
    print(f"build context: {files} files ({copied} copied now) in {destination}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
