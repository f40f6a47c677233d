#!/usr/bin/env python3
"""The release version is defined once, in the workspace Cargo.toml; every
other manifest that has to spell it out must agree (the Python wheel takes it
from Cargo by itself). Exits non-zero, naming each file that disagrees."""
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def workspace_version() -> str:
    cargo = tomllib.loads((ROOT / "Cargo.toml").read_text())
    return cargo["workspace"]["package"]["version"]


def found_versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for manifest in ["core", "bindings/python", "bindings/node", "bindings/java"]:
        package = tomllib.loads((ROOT / manifest / "Cargo.toml").read_text())["package"]
        version = package.get("version")
        found[f"{manifest}/Cargo.toml"] = (
            workspace_version() if version == {"workspace": True} else version
        )
    pyproject = tomllib.loads((ROOT / "python/pyproject.toml").read_text())["project"]
    found["python/pyproject.toml"] = (
        workspace_version() if "version" in pyproject.get("dynamic", []) else pyproject.get("version")
    )
    found["node/package.json"] = json.loads((ROOT / "node/package.json").read_text())["version"]
    pom = (ROOT / "java/pom.xml").read_text()
    # The project's own <version>, right after its artifactId.
    match = re.search(r"<artifactId>zkrecipes</artifactId>\s*<version>([^<]+)</version>", pom)
    found["java/pom.xml"] = match.group(1) if match else None
    kotlin = (ROOT / "kotlin/pom.xml").read_text()
    match = re.search(r"<artifactId>zkrecipes-kotlin</artifactId>\s*<version>([^<]+)</version>", kotlin)
    found["kotlin/pom.xml"] = match.group(1) if match else None
    changelog = (ROOT / "CHANGELOG.md").read_text()
    match = re.search(r"^## \[?([0-9][^\] ]*)", changelog, re.M)
    found["CHANGELOG.md (latest entry)"] = match.group(1) if match else None
    return found


def main() -> int:
    version = workspace_version()
    if len(sys.argv) > 1 and sys.argv[1] == "--print":
        print(version)
        return 0
    wrong = {f: v for f, v in found_versions().items() if v != version}
    for file, seen in wrong.items():
        print(f"version-check: {file} says {seen!r}, Cargo.toml says {version!r}", file=sys.stderr)
    if not wrong:
        print(f"version-check: {version} everywhere")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
