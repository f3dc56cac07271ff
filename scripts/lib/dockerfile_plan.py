#!/usr/bin/env python3
"""Reads the Dockerfile and prints, as bash assignments, what scripts/container-check.sh needs to
rebuild its runtime stage without a Docker engine: the build stage's products and `swift build`
flags, and the runtime stage's base suite, its steps in order (RUN, ENV, USER, WORKDIR, COPY), and
its metadata (HEALTHCHECK, ENTRYPOINT, CMD, STOPSIGNAL, VOLUME, the packages its RUN installs).

It models only the instructions this project's Dockerfile uses, and fails with a message that names
the line when the Dockerfile takes a shape it does not model, so the check cannot silently drift
from the image. Usage: python3 scripts/lib/dockerfile_plan.py Dockerfile
"""
from __future__ import annotations

import json
import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

BUILD_STAGE = "build"
PRODUCTS_ARG = "PRODUCTS"
FLAGS_ARG = "SWIFT_BUILD_FLAGS"
OUTPUT_DIR = "/out/"
SHELL_OPERATORS = {"&&", "||", ";", "|", "&"}


class ShapeError(Exception):
    """The Dockerfile has a shape this model does not cover: the check must be taught it."""


@dataclass
class Instruction:
    line: int
    keyword: str
    arguments: str

    def fail(self, reason: str) -> ShapeError:
        return ShapeError(f"Dockerfile line {self.line} ({self.keyword}): {reason}")


@dataclass
class Stage:
    image: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)


def instructions(text: str) -> list[Instruction]:
    """Logical instructions: comment lines dropped (also inside a continuation, as Docker does),
    backslash-continued lines joined."""
    result: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not pending and re.match(r"#\s*escape\s*=", stripped) and number == 1:
            raise ShapeError("Dockerfile line 1: an escape directive is not modelled")
        if stripped.startswith("#") or (not stripped and not pending):
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].strip())
            continue
        pending.append(stripped)
        logical = " ".join(part for part in pending if part)
        pending = []
        keyword, _, arguments = logical.partition(" ")
        result.append(Instruction(start, keyword.upper(), arguments.strip()))
    if pending:
        raise ShapeError(f"Dockerfile line {start}: the file ends inside a continued line")
    return result


def stages(items: list[Instruction]) -> tuple[list[Instruction], list[Stage]]:
    """The global ARGs before the first FROM, and the stages."""
    preamble: list[Instruction] = []
    found: list[Stage] = []
    for item in items:
        if item.keyword == "FROM":
            words = item.arguments.split()
            words = [word for word in words if not word.startswith("--platform")]
            if len(words) == 1:
                found.append(Stage(words[0], None))
            elif len(words) == 3 and words[1].upper() == "AS":
                found.append(Stage(words[0], words[2]))
            else:
                raise item.fail("expected FROM IMAGE [AS NAME]")
        elif not found:
            if item.keyword != "ARG":
                raise item.fail("only ARG may come before the first FROM")
            preamble.append(item)
        else:
            found[-1].instructions.append(item)
    if len(found) < 2:
        raise ShapeError("expected a build stage and a runtime stage (two FROM lines)")
    return preamble, found


def parse_exec(item: Instruction, text: str) -> list[str] | None:
    if not text.startswith("["):
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise item.fail(f"not a valid JSON array: {error}") from None
    if not isinstance(value, list) or not value or not all(isinstance(word, str) for word in value):
        raise item.fail("expected a non-empty JSON array of strings")
    return value


def command_argv(item: Instruction, text: str) -> list[str]:
    """Exec form as it is; shell form through /bin/sh -c, Docker's default SHELL."""
    argv = parse_exec(item, text)
    return argv if argv is not None else ["/bin/sh", "-c", text]


def arg_default(item: Instruction) -> tuple[str, str | None]:
    name, equals, value = item.arguments.partition("=")
    if not equals:
        return name.strip(), None
    words = shlex.split(value)
    return name.strip(), " ".join(words)


def build_plan(stage: Stage) -> dict[str, list[str]]:
    """The products the build stage builds and the flags it passes to swift build: both are ARGs
    with defaults, so the check reads the same values the image gets."""
    defaults: dict[str, str | None] = {}
    runs: list[str] = []
    for item in stage.instructions:
        if item.keyword == "ARG":
            name, value = arg_default(item)
            defaults[name] = value
        elif item.keyword == "RUN":
            runs.append(item.arguments)
    for name in (PRODUCTS_ARG, FLAGS_ARG):
        if not defaults.get(name):
            raise ShapeError(f"the build stage must declare ARG {name}=... with a default (the check builds what it names)")
    builds = [match.group(1) for run in runs for match in re.finditer(r"swift build (\S+)", run)]
    if not builds or any(re.sub(r"[{}\"]", "", flags) != "$" + FLAGS_ARG for flags in builds):
        raise ShapeError(f"every 'swift build' of the build stage must pass ${FLAGS_ARG} first: the check would build differently")
    if not any(OUTPUT_DIR in run for run in runs):
        raise ShapeError(f"no RUN of the build stage installs the products into {OUTPUT_DIR}")
    return {
        "BUILD_PRODUCTS": shlex.split(defaults[PRODUCTS_ARG] or ""),
        "BUILD_FLAGS": shlex.split(defaults[FLAGS_ARG] or ""),
    }


def installed_packages(command: str) -> list[str]:
    """The package names of every `apt-get install` in a shell command (options skipped)."""
    words = shlex.split(command, posix=True)
    packages: list[str] = []
    for index, word in enumerate(words):
        if word != "install" or "apt-get" not in words[max(0, index - 8):index]:
            continue
        for following in words[index + 1:]:
            if following in SHELL_OPERATORS:
                break
            if not following.startswith("-"):
                packages.append(following)
    return packages


def duration_seconds(item: Instruction, text: str) -> int:
    match = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text)
    if not match or not text:
        raise item.fail(f"cannot read the duration {text!r}")
    hours, minutes, seconds = (int(group or 0) for group in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def runtime_plan(stage: Stage) -> tuple[dict[str, list[str]], list[tuple[str, list[str]]]]:
    """The runtime stage: values (lists of strings) and the steps to replay in order."""
    suite = re.fullmatch(r"debian:([a-z]+)(-slim)?", stage.image)
    if not suite:
        raise ShapeError(f"the runtime stage's base {stage.image!r} is not debian:SUITE[-slim]: the check debootstraps that suite")
    values: dict[str, list[str]] = {
        "RUNTIME_SUITE": [suite.group(1)], "RUNTIME_PACKAGES": [], "RUNTIME_ENV": [], "RUNTIME_VOLUMES": [],
        "RUNTIME_LABELS": [], "RUNTIME_ENTRYPOINT": [], "RUNTIME_CMD": [], "RUNTIME_STOPSIGNAL": ["SIGTERM"],
        "RUNTIME_HEALTHCHECK": [], "RUNTIME_HEALTHCHECK_TIMEOUT": ["30"], "RUNTIME_EXPOSE": [],
    }
    steps: list[tuple[str, list[str]]] = []
    for item in stage.instructions:
        keyword, text = item.keyword, item.arguments
        if keyword == "RUN":
            if text.startswith("--"):
                raise item.fail("RUN options (--mount, --network) are not modelled")
            argv = command_argv(item, text)
            steps.append(("run", argv))
            values["RUNTIME_PACKAGES"] += installed_packages(argv[-1] if argv[:2] == ["/bin/sh", "-c"] else shlex.join(argv))
        elif keyword == "ENV":
            pairs = env_pairs(item)
            steps.append(("env", pairs))
            values["RUNTIME_ENV"] += pairs
        elif keyword in ("USER", "WORKDIR"):
            if "$" in text or not text:
                raise item.fail("a variable or an empty value is not modelled")
            steps.append((keyword.lower(), [text]))
        elif keyword == "COPY":
            steps.append(("copy", copy_paths(item)))
        elif keyword == "VOLUME":
            values["RUNTIME_VOLUMES"] += parse_exec(item, text) or text.split()
        elif keyword == "EXPOSE":
            values["RUNTIME_EXPOSE"] += text.split()
        elif keyword == "LABEL":
            values["RUNTIME_LABELS"] += [word for word in shlex.split(text)]
        elif keyword == "STOPSIGNAL":
            values["RUNTIME_STOPSIGNAL"] = [text if text.startswith("SIG") or text.isdigit() else "SIG" + text]
        elif keyword == "ENTRYPOINT":
            argv = parse_exec(item, text)
            if argv is None:
                raise item.fail("shell-form ENTRYPOINT makes /bin/sh PID 1, which does not pass SIGTERM on: use the JSON form")
            values["RUNTIME_ENTRYPOINT"] = argv
        elif keyword == "CMD":
            values["RUNTIME_CMD"] = command_argv(item, text)
        elif keyword == "HEALTHCHECK":
            values["RUNTIME_HEALTHCHECK"], values["RUNTIME_HEALTHCHECK_TIMEOUT"] = healthcheck(item)
        else:
            raise item.fail("this instruction is not modelled in the runtime stage: teach scripts/lib/dockerfile_plan.py")
    if not values["RUNTIME_ENTRYPOINT"]:
        raise ShapeError("the runtime stage has no ENTRYPOINT")
    if not values["RUNTIME_HEALTHCHECK"]:
        raise ShapeError("the runtime stage has no HEALTHCHECK CMD")
    return values, steps


def env_pairs(item: Instruction) -> list[str]:
    words = shlex.split(item.arguments)
    if words and "=" not in words[0]:
        # The legacy form `ENV NAME value with spaces`.
        return [f"{words[0]}={' '.join(words[1:])}"]
    for word in words:
        name, equals, value = word.partition("=")
        if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise item.fail(f"cannot read {word!r} as NAME=VALUE")
        if "$" in value:
            raise item.fail("variables in ENV values are not modelled")
    return words


def copy_paths(item: Instruction) -> list[str]:
    """COPY --from=build SOURCE... DEST, sources inside the build stage's output folder."""
    words = shlex.split(item.arguments)
    options = [word for word in words if word.startswith("--")]
    paths = [word for word in words if not word.startswith("--")]
    if options != [f"--from={BUILD_STAGE}"]:
        raise item.fail(f"only COPY --from={BUILD_STAGE} (no other options) is modelled, got {options}")
    if len(paths) < 2 or not all(path.startswith(OUTPUT_DIR) for path in paths[:-1]):
        raise item.fail(f"only products copied from {OUTPUT_DIR} are modelled")
    if len(paths) > 2 and not paths[-1].endswith("/"):
        raise item.fail("several sources need a destination folder ending in /")
    return paths


def healthcheck(item: Instruction) -> tuple[list[str], list[str]]:
    words = item.arguments.split(" ")
    timeout = 30
    while words and words[0].startswith("--"):
        option, _, value = words.pop(0).partition("=")
        if option == "--timeout":
            timeout = duration_seconds(item, value)
        elif option not in ("--interval", "--start-period", "--start-interval", "--retries"):
            raise item.fail(f"unknown HEALTHCHECK option {option}")
    rest = " ".join(words).strip()
    if not rest.startswith("CMD "):
        raise item.fail("expected HEALTHCHECK [OPTIONS] CMD ...")
    return command_argv(item, rest[4:].strip()), [str(timeout)]


def bash_assignments(values: dict[str, list[str]]) -> str:
    return "\n".join(f"{name}=({' '.join(shlex.quote(value) for value in items)})" for name, items in values.items())


def main() -> int:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else "Dockerfile")
    try:
        _, found = stages(instructions(path.read_text()))
        builds = [stage for stage in found if stage.name == BUILD_STAGE]
        if len(builds) != 1:
            raise ShapeError(f"expected exactly one stage named {BUILD_STAGE!r}")
        if found[-1].name == BUILD_STAGE:
            raise ShapeError("the last stage must be the runtime stage")
        values = build_plan(builds[0])
        runtime, steps = runtime_plan(found[-1])
        values.update(runtime)
    except (ShapeError, OSError) as error:
        print(f"{path}: {error}", file=sys.stderr)
        return 1
    print(bash_assignments(values))
    print(f"RUNTIME_STEP_COUNT={len(steps)}")
    for index, (kind, arguments) in enumerate(steps):
        print(f"RUNTIME_STEP_{index}_KIND={kind}")
        print(bash_assignments({f"RUNTIME_STEP_{index}_ARGS": arguments}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
