#!/usr/bin/env python3
"""Runs every code example of README.md, docs/*.md, python/README.md and node/README.md against the installed artifacts,
so that the docs cannot drift from the library; shell blocks run their command lines (see `shell`).

Each example runs as written, with three changes only: the connect string points at the test
server ($ZK_CONNECT, keeping the example's chroot), placeholders the prose leaves to the reader
(`storage`, `data`, `pauseWrites`, `on_event`) get a stub, and top-level `await` in Python gets an
`asyncio.run` around it. Node examples run as an ES module, as CommonJS and through
`tsc --strict`; Java compiles in a Maven project depending on the JAR, Kotlin in one depending on
the Kotlin JAR (inside `runBlocking`); Rust against the core crate.

usage: readme_examples.py --python VENV_PYTHON --node-project DIR --jar JAR --kotlin-jar JAR --cli ZKRECIPES
       --npm-tarballs TGZ...
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import maven_consumer  # tools/maven_consumer.py

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "python" / "README.md", REPO / "node" / "README.md"]
# "zk1:2181,zk2:2181,zk3:2181/myapp" -> "<test server>/myapp"
HOSTS = re.compile(r"zk1:2181(?:,zk\d:2181)*|127\.0\.0\.1:2181")
# The Security examples: "zk1:2281" is a TLS port of the harness's server that requires a client
# certificate and SASL (tests/with-secure-zk), /etc/zookeeper/tls/ its certificates, and
# ZK_PASSWORD alice's password; "zk1:2181" with `sasl: gssapi` is its Kerberos server.
SECURE_HOSTS = re.compile(r"zk1:2281(?:,zk\d:2281)*")
KERBEROS_HOSTS = re.compile(r"zk1:2188")
CERT_DIR = "/etc/zookeeper/tls/"


def blocks(path: Path) -> list[tuple[str, int, str]]:
    """(language, line, code) of every fenced block with a language tag."""
    found = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w+)\s*$", lines[i])
        if m:
            start = i + 1
            j = start
            while not lines[j].startswith("```"):
                j += 1
            found.append((m.group(1), start + 1, "\n".join(lines[start:j]) + "\n"))
            i = j
        i += 1
    return found


def run(what: str, cmd: list[str], cwd: Path) -> None:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        sys.stderr.write(f"--- {what} failed: {' '.join(cmd)}\n{done.stdout}{done.stderr}\n")
        raise SystemExit(1)
    print(f"ok  {what}")


def python(code: str, where: str, venv_python: str, tmp: Path) -> None:
    prelude = textwrap.dedent(
        """\
        import asyncio


        class _Storage:
            def write(self, data, fencing_token=None):
                assert fencing_token is not None, "the example writes with a fencing token"


        storage, data = _Storage(), b"payload"


        def on_event(event):
            pass


        """
    )
    if re.search(r"^(async with|await) ", code, re.M):
        imports = "".join(line + "\n" for line in code.splitlines() if line.startswith("import "))
        body = "".join(line + "\n" for line in code.splitlines() if not line.startswith("import "))
        code = imports + "\n\nasync def _main():\n" + textwrap.indent(body, "    ") + "\n\nasyncio.run(_main())\n"
    script = tmp / "example.py"
    script.write_text(prelude + code)
    run(f"python  {where}", [venv_python, str(script)], tmp)


# Every Node.js example as TypeScript (file name, where it is), for one `tsc --strict` at the end.
TYPE_CHECKED: list[tuple[str, str]] = []


def type_check_node(project: Path) -> None:
    """Every example written by `node` through `tsc --strict` at once (each file is a module of
    its own, so their stubs do not clash)."""
    if not TYPE_CHECKED:
        return
    tsc = [
        "npx", "tsc", "--strict", "--noEmit", "--target", "es2022", "--module", "nodenext",
        "--moduleResolution", "nodenext", "--lib", "es2022,esnext.disposable", "--types", "node",
    ]
    run("tsc --strict  " + ", ".join(f"{file} ({where})" for file, where in TYPE_CHECKED),
        tsc + [file for file, _ in TYPE_CHECKED], project)


def node(code: str, where: str, project: Path) -> None:
    stubs_js = (
        "const storage = { async write (data, token) { if (token === null) throw new Error('no token') } }\n"
        "const data = Buffer.from('payload')\n"
        "function pauseWrites () {}\n"
    )
    stubs_ts = (
        "declare const storage: { write(data: Buffer, token: bigint | null): Promise<void> }\n"
        "declare const data: Buffer\n"
        "declare function pauseWrites(): void\n"
    )
    def run_as(what: str, command: list[str], file: str, text: str) -> None:
        (project / file).write_text(text)
        run(f"{what}  {where}", command + [file], project)

    def type_check(suffix: str, text: str) -> None:
        # Checked together at the end (`type_check_node`): one tsc run, not one per example.
        file = f"readme-example-{len(TYPE_CHECKED)}.{suffix}"
        (project / file).write_text(f"// {where}\n" + text)
        TYPE_CHECKED.append((file, where))

    if re.search(r"^const \{[^}]*\} = require\('zkrecipes'\)", code, re.M):
        # Written as CommonJS: run it so, and type-check it as a CommonJS TypeScript module.
        run_as("node CommonJS", ["node"], "readme-example.cjs", stubs_js + code)
        typed = re.sub(r"^const (\{[^}]*\}) = require\('zkrecipes'\)",
                       r"import zkrecipes = require('zkrecipes')\nconst \1 = zkrecipes", code, flags=re.M)
        type_check("cts", stubs_ts + typed)
        return

    run_as("node ESM", ["node"], "readme-example.mjs", stubs_js + code)

    # CommonJS: the same statements inside an async function, `require` instead of `import`.
    body = re.sub(r"^import \{([^}]*)\} from 'zkrecipes'$", r"const {\1} = require('zkrecipes')", code, flags=re.M)
    requires = "\n".join(line for line in body.splitlines() if line.startswith("const {") and "require(" in line)
    rest = "\n".join(line for line in body.splitlines() if not (line.startswith("const {") and "require(" in line))
    cjs = (
        "'use strict'\n" + requires + "\n" + stubs_js
        + "async function main () {\n" + rest + "\n}\nmain().catch((err) => { console.error(err); process.exit(1) })\n"
    )
    run_as("node CommonJS", ["node"], "readme-example.cjs", cjs)
    type_check("mts", stubs_ts + code + "\nexport {}\n")


def java_batch(examples: list[tuple[str, str]], jar: Path, tmp: Path) -> dict[str, list[str]]:
    """Every Java example compiled at once, each as `exampleN.ReadmeExample`, in a fresh Maven
    project that depends on io.zkrecipes:zkrecipes (the JAR, installed into the local
    repository): one Maven run for all of them (one per example took a minute of the suite).
    Returns the command that runs each, by its place."""
    sources = {}
    for n, (where, code) in enumerate(examples):
        imports = [line for line in code.splitlines() if line.startswith("import ")]
        body = "\n".join(line for line in code.splitlines() if not line.startswith("import "))
        sources[f"example{n}/ReadmeExample.java"] = (
            f"package example{n};\n\n// {where}\n"
            + "\n".join(imports)
            + "\n\npublic class ReadmeExample {\n"
            + "    static final class Storage { void write(byte[] data, long token) {} }\n"
            + "    static final Storage storage = new Storage();\n"
            + "    static final byte[] data = \"payload\".getBytes();\n\n"
            + "    public static void main(String[] args) throws Exception {\n"
            + textwrap.indent(body, "        ")
            + "\n    }\n}\n"
        )
    version = re.search(r'^version = "([^"]+)"', (REPO / "Cargo.toml").read_text(), re.M).group(1)
    run(
        "mvn install-file  zkrecipes.jar",
        ["mvn", "-q", "-B", "org.apache.maven.plugins:maven-install-plugin:3.1.4:install-file", f"-Dfile={jar}",
         "-DgroupId=io.zkrecipes", "-DartifactId=zkrecipes", f"-Dversion={version}", "-Dpackaging=jar",
         "-DgeneratePom=true"],
        tmp,
    )
    classpath = maven_consumer.java(tmp / "maven-consumer", version, sources)
    return {where: ["java", "-cp", classpath, f"example{n}.ReadmeExample"] for n, (where, _) in enumerate(examples)}


def kotlin_batch(examples: list[tuple[str, str]], jar: Path, tmp: Path) -> dict[str, list[str]]:
    """``java_batch`` for Kotlin, each example in `runBlocking` as `exampleN.ReadmeExampleKt`,
    compiled by kotlin-maven-plugin against io.zkrecipes:zkrecipes-kotlin (the JAR with its POM,
    installed into the local repository, so that its three dependencies come the way a user gets
    them)."""
    sources = {}
    for n, (where, code) in enumerate(examples):
        imports = [line for line in code.splitlines() if line.startswith("import ")]
        body = "\n".join(line for line in code.splitlines() if not line.startswith("import "))
        sources[f"example{n}/ReadmeExample.kt"] = (
            f"package example{n}\n\n// {where}\n"
            + "\n".join(imports + ["import kotlinx.coroutines.runBlocking"])
            + "\n\nobject Storage { fun write(data: ByteArray, token: Long) {} }\n"
            + "val storage = Storage\n"
            + "val data = \"payload\".toByteArray()\n\n"
            + "fun main(): Unit = runBlocking {\n"
            + textwrap.indent(body, "    ")
            + "\n}\n"
        )
    pom = REPO / "kotlin" / "pom.xml"
    version = re.search(r"<artifactId>zkrecipes-kotlin</artifactId>\s*<version>([^<]+)</version>", pom.read_text()).group(1)
    run(
        "mvn install-file  zkrecipes-kotlin.jar",
        ["mvn", "-q", "-B", "org.apache.maven.plugins:maven-install-plugin:3.1.4:install-file", f"-Dfile={jar}",
         f"-DpomFile={pom}"],
        tmp,
    )
    classpath = maven_consumer.kotlin(tmp / "kotlin-consumer", version, sources)
    return {where: ["java", "-cp", classpath, f"example{n}.ReadmeExampleKt"] for n, (where, _) in enumerate(examples)}


# `make demo` / `make test` lines are this suite's own entry points, not run from inside it.
SUITE_COMMAND = re.compile(r"^make\s")
# A crontab line: five schedule fields, then the command cron runs.
CRON_LINE = re.compile(r"^(?:\S+\s+){5}(zkrecipes\s.*)$")
# Commands that run until stopped: they must print, then stop on SIGINT.
WATCHING = re.compile(r"\s--(?:observe|watch|prometheus-sd)\b|^zkrecipes watch\s")
STUBS = {
    "backup.sh": "#!/bin/sh\necho ran >> backup.ran\n",
    "scheduler": "#!/bin/sh\necho ran >> scheduler.ran\n",
    "stage-2": "#!/bin/sh\necho ran >> stage-2.ran\n",
    "serve": "#!/bin/sh\necho ran >> serve.ran\n",
    "migrate.sh": "#!/bin/sh\necho ran >> migrate.ran\n",
}
# A line meant for N hosts at once (`double-barrier … --members N`): run N copies together.
TOGETHER = re.compile(r"^zkrecipes double-barrier\s.*--members\s+(\d+)\b")


def shell(code: str, where: str, cli: Path, npm_tarballs: list[Path], tmp: Path) -> None:
    """Each command line as a shell runs it (a `double-barrier --members N` line as N hosts
    at once): `zkrecipes` is the built CLI against $ZK_CONNECT,
    `./backup.sh`, `./scheduler`, `./stage-2`, `./serve` and `./migrate.sh` are stubs that leave a mark, `npm install zkrecipes` installs
    the packed tarballs into a fresh project (the registry does not have them)."""
    work = tmp / "shell"
    work.mkdir(exist_ok=True)
    for name, text in STUBS.items():
        (work / name).write_text(text)
        (work / name).chmod(0o755)
    # The Security examples' credentials file (`--auth-file alice.auth`).
    (work / "alice.auth").write_text(f"alice:{os.environ['ZK_PASSWORD']}\n")
    env = dict(os.environ, PATH=f"{cli.parent}{os.pathsep}{os.environ['PATH']}")
    for number, raw in enumerate(code.splitlines()):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        what = f"sh  {where}+{number}: {line}"
        if SUITE_COMMAND.match(line):
            print(f"--  {what} (the suite's own entry point)")
            continue
        if line == "npm install zkrecipes":
            project = tmp / "npm-install"
            project.mkdir(exist_ok=True)
            run(f"npm init  {where}", ["npm", "init", "-y"], project)
            run(what, ["npm", "install", "--offline", "--no-audit", "--no-fund", *map(str, npm_tarballs)], project)
            run(f"node require  {where}", ["node", "-e", "require('zkrecipes').Client"], project)
            continue
        cron = CRON_LINE.match(line)
        command = cron.group(1) if cron else line
        if not command.startswith("zkrecipes "):
            raise SystemExit(f"{where}: no way to run this shell line: {line}")
        if WATCHING.search(command):
            watch(what, command, work, env)
            continue
        together = TOGETHER.match(command)
        if together:
            hosts = [subprocess.Popen(["bash", "-c", command], cwd=work, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True) for _ in range(int(together.group(1)))]
            outputs = [host.communicate(timeout=120)[0] for host in hosts]
            if any(host.returncode != 0 for host in hosts):
                sys.stderr.write(f"--- {what} failed ({[h.returncode for h in hosts]})\n{''.join(outputs)}\n")
                raise SystemExit(1)
            print(f"ok  {what} (as {len(hosts)} hosts)")
            continue
        done = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            sys.stderr.write(f"--- {what} failed ({done.returncode})\n{done.stdout}{done.stderr}\n")
            raise SystemExit(1)
        print(f"ok  {what}")
    for name in STUBS:
        mark = work / (name.split(".")[0] + ".ran")
        if name in code and not mark.exists():
            raise SystemExit(f"{where}: ./{name} never ran")


def watch(what: str, command: str, cwd: Path, env: dict[str, str]) -> None:
    """A command that runs until stopped: its first line within 60 s, then SIGINT ends it, with
    status 0 (what `--observe` and `--watch` answer to an interrupt)."""
    import queue
    import signal
    import threading

    child = subprocess.Popen(["bash", "-c", "exec " + command], cwd=cwd, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    lines: "queue.Queue[str]" = queue.Queue()
    # A reader of its own: a line that comes in pieces must not block past the deadline.
    threading.Thread(target=lambda: [lines.put(line) for line in child.stdout], daemon=True).start()
    try:
        first = lines.get(timeout=60)
    except queue.Empty:
        first = ""
    child.send_signal(signal.SIGINT)
    try:
        child.wait(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        raise SystemExit(f"--- {what}: still running 60 s after SIGINT")
    err = child.stderr.read() if child.stderr else ""
    if not first.strip() or child.returncode != 0:
        sys.stderr.write(f"--- {what}: first line {first!r}, status {child.returncode} after SIGINT\n{err}\n")
        raise SystemExit(1)
    print(f"ok  {what} -> {first.strip()}")


def rust_batch(examples: list[tuple[str, str]], tmp: Path) -> dict[str, list[str]]:
    """Every Rust example as a binary of one crate against the core crate, built by one cargo
    run (a crate per example linked one at a time)."""
    crate = tmp / "readme-example"
    (crate / "src" / "bin").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text(
        textwrap.dedent(
            f"""\
            [package]
            name = "readme-example"
            version = "0.0.0"
            edition = "2021"
            publish = false

            [dependencies]
            zkrecipes = {{ path = "{REPO / 'core'}" }}
            tokio = {{ version = "1", features = ["macros", "rt-multi-thread"] }}

            [workspace]

            # As in the workspace, so that the examples reuse what the workspace built: without
            # these, every dependency (the TLS crypto library's C code too) was built again with
            # full debug info, a minute and a half of the suite's critical path.
            [profile.dev]
            debug = "line-tables-only"

            [profile.dev.package.ring]
            debug = false
            """
        )
    )
    for n, (where, code) in enumerate(examples):
        (crate / "src" / "bin" / f"readme_example_{n}.rs").write_text(
            f"// {where}\n"
            "use std::time::Duration;\n"
            "use zkrecipes::*;\n\n"
            "struct Storage;\n"
            "impl Storage { fn write(&self, _data: &[u8], _token: i64) {} }\n"
            "static storage: Storage = Storage;\n"
            "static data: &[u8] = b\"payload\";\n\n"
            "#[allow(unused_variables, unused_mut)]\n"
            "#[tokio::main]\nasync fn main() -> Result<()> {\n"
            + textwrap.indent(code, "    ")
            + "    Ok(())\n}\n"
        )
    # The workspace's versions: the examples then reuse what the workspace built (the TLS crypto
    # library alone takes a minute to build again).
    shutil.copy(REPO / "Cargo.lock", crate / "Cargo.lock")
    target = REPO / "target"
    run("cargo build  the Rust examples", ["cargo", "build", "--quiet", "--offline", "--bins", "--manifest-path",
                                         str(crate / "Cargo.toml"), "--target-dir", str(target)], crate)
    return {where: [str(target / "debug" / f"readme_example_{n}")] for n, (where, _) in enumerate(examples)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", required=True)
    parser.add_argument("--node-project", required=True, type=Path)
    parser.add_argument("--jar", required=True, type=Path)
    parser.add_argument("--kotlin-jar", required=True, type=Path)
    parser.add_argument("--cli", required=True, type=Path, help="the built zkrecipes command")
    parser.add_argument("--npm-tarballs", required=True, type=Path, nargs="+", help="what `npm install` installs")
    args = parser.parse_args()
    connect = os.environ["ZK_CONNECT"]
    os.environ["ZK_PASSWORD"] = "alice-secret"  # what the Security examples read their password from
    counts: dict[str, int] = {}
    # The README's quick start shows the first example of each language's page again: the same
    # code runs once.
    seen: set[tuple[str, str]] = set()
    examples: list[tuple[str, str, str]] = []
    for doc in DOCS:
        for language, line, code in blocks(doc):
            if language not in ("python", "js", "java", "kotlin", "rust", "sh") or (language, code) in seen:
                continue
            seen.add((language, code))
            code = HOSTS.sub(connect, code)
            code = SECURE_HOSTS.sub(os.environ["ZK_TLS_STRICT_CONNECT"], code)
            code = KERBEROS_HOSTS.sub(os.environ["ZK_KRB5_CONNECT"], code)
            code = code.replace(CERT_DIR, os.environ["ZK_CERTS"] + "/")
            examples.append((language, f"{doc.relative_to(REPO)}:{line}", code))
    with tempfile.TemporaryDirectory(prefix="zkrecipes-readme-") as tmp_dir:
        tmp = Path(tmp_dir)
        # The compiled languages are compiled first, all of a language's examples at once; every
        # example then runs in the docs' order.
        def of(language: str) -> list[tuple[str, str]]:
            return [(where, code) for lang, where, code in examples if lang == language]

        compiled = {
            **java_batch(of("java"), args.jar.resolve(), tmp),
            **kotlin_batch(of("kotlin"), args.kotlin_jar.resolve(), tmp),
            **rust_batch(of("rust"), tmp),
        }
        for language, where, code in examples:
            if language == "python":
                python(code, where, args.python, tmp)
            elif language == "js":
                node(code, where, args.node_project.resolve())
            elif language == "sh":
                shell(code, where, args.cli.resolve(), [t.resolve() for t in args.npm_tarballs], tmp)
            else:
                run(f"{language}  {where}", compiled[where], tmp)
            counts[language] = counts.get(language, 0) + 1
        type_check_node(args.node_project.resolve())
    if any(not counts.get(language) for language in ("python", "js", "java", "kotlin", "rust", "sh")):
        raise SystemExit(f"expected examples in every language, found {counts}")
    print(f"README examples run: {counts}")


if __name__ == "__main__":
    main()
