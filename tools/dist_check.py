#!/usr/bin/env python3
"""`make dist-check`: proves the artifacts of `make dist` (target/dist/) work
where users run them. Needs ZK_CONNECT (run under tests/with-zk).

- Every native library (in wheels, npm packages and the JAR) is an ELF of the
  right machine; glibc builds need no symbol version above GLIBC_2.17; musl
  builds need no glibc at all, and every symbol they import is exported by
  musl's libc (Debian's `musl` package of that architecture) or by their host
  (Node's `napi_*`). `auditwheel show` agrees with each wheel's tag.
- aarch64 really runs: in an arm64 Debian root made by mmdebstrap, under
  qemu-user, Debian's arm64 Python imports the aarch64 wheel and Debian's
  arm64 Node loads the main npm package with its linux-arm64-gnu package and
  Debian's arm64 JVM runs the JAR, each doing one lock acquire/release and one
  queue offer/take against ZooKeeper.
- musl: no musl Python, Node or JDK is in the registries this project builds
  from, so the musl builds are checked by the symbol audit above, and the
  core itself, built for both musl targets, runs the same lock and queue
  smoke natively (x86_64) and under qemu (aarch64).
- The sdist builds from source in a fresh venv and passes the Python tests.
- `npm install` of the main tarball, with the platform tarballs offered as
  local files, installs exactly the linux-x64-gnu package here and passes the
  Node tests.
- macOS and Windows (tools/dist_foreign.py): every Mach-O file checked
  statically (CPU, lowest macOS, system libraries only, rcodesign's
  signature, the symbols its host looks up); every PE file likewise; the
  Windows Node package runs under wine.
- The JAR, installed with `mvn install`, serves a fresh Maven project that
  depends on io.zkrecipes:zkrecipes:<version>; the Kotlin JAR likewise serves
  a Kotlin project that depends on io.zkrecipes:zkrecipes-kotlin:<version>
  (its POM brings kotlin-stdlib, kotlinx-coroutines and JNA), and Debian's
  arm64 JVM runs it under qemu too.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from dist import DIST, ROOT, TOOLS, version  # tools/dist.py: where `make dist` puts what
import maven_consumer  # tools/maven_consumer.py
from dist_foreign import Foreign  # tools/dist_foreign.py: macOS and Windows

WORK = ROOT / "target" / "dist-check"
SMOKE = ROOT / "tools" / "dist-smoke"
MACHINE = {"x86_64": "Advanced Micro Devices X86-64", "aarch64": "AArch64"}
DEBIAN_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
GLIBC_MAX = (2, 17)

failures: list[str] = []
report: list[str] = []


def run(cmd: list, cwd: Path = ROOT, env: dict | None = None, capture: bool = False) -> str:
    print("dist-check:", " ".join(str(c) for c in cmd), flush=True)
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, check=True,
                          capture_output=capture, text=True)
    return done.stdout if capture else ""


def check(ok: bool, what: str) -> None:
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


# --- native libraries ---------------------------------------------------------

def natives() -> list[tuple[str, str, str, Path]]:
    """(artifact, arch, libc, extracted library) for every native library shipped."""
    out = WORK / "natives"
    shutil.rmtree(out, ignore_errors=True)
    found = []
    for wheel in sorted((DIST / "python").glob("*linux*.whl")):
        arch = "aarch64" if "aarch64" in wheel.name else "x86_64"
        libc = "musl" if "musllinux" in wheel.name else "glibc"
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if name.endswith(".so"):
                    target = out / wheel.stem / Path(name).name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(z.read(name))
                    found.append((wheel.name, arch, libc, target))
    for tgz in sorted((DIST / "npm").glob("zkrecipes-linux-*.tgz")):
        arch = "aarch64" if "arm64" in tgz.name else "x86_64"
        libc = "musl" if "musl" in tgz.name else "glibc"
        with tarfile.open(tgz) as t:
            for member in t.getmembers():
                if member.name.endswith(".node"):
                    target = out / tgz.stem / Path(member.name).name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(t.extractfile(member).read())
                    found.append((tgz.name, arch, libc, target))
    for jar in sorted([*(DIST / "java").glob("zkrecipes-*[0-9].jar"), *(DIST / "kotlin").glob("zkrecipes-kotlin-*[0-9].jar")]):
        with zipfile.ZipFile(jar) as z:
            for name in z.namelist():
                if name.endswith(".so") and name.startswith("native/linux-"):
                    platform = name.split("/")[1]
                    arch = "aarch64" if "aarch64" in platform else "x86_64"
                    libc = "musl" if platform.endswith("-musl") else "glibc"
                    target = out / jar.stem / platform / Path(name).name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(z.read(name))
                    found.append((f"{jar.name}:{name}", arch, libc, target))
    return found


def musl_exports(arch: str) -> set[str]:
    """The dynamic symbols of musl's libc.so for `arch`, from Debian's package."""
    root = debian_root(arch, ["musl"], f"musl-{arch}-root")
    # musl's libc is its dynamic loader; the other names link to it.
    libc = next(p for p in root.glob("**/*-linux-musl/libc.so") if p.is_file() and not p.is_symlink())
    out = run(["objdump", "-T", libc], capture=True)
    return {line.split()[-1] for line in out.splitlines() if " DF " in line or " DO " in line}


def audit_native(artifact: str, arch: str, libc: str, lib: Path, musl: dict[str, set[str]]) -> None:
    header = run(["readelf", "-h", lib], capture=True)
    check(MACHINE[arch] in header, f"{artifact}: ELF machine is {arch}")
    symbols = run(["objdump", "-T", lib], capture=True)
    glibc = sorted({tuple(int(p) for p in v.split(".")) for v in re.findall(r"GLIBC_([0-9.]+)", symbols)})
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run(["readelf", "-d", lib], capture=True))
    if libc == "glibc":
        highest = glibc[-1] if glibc else None
        check(highest is not None and highest <= GLIBC_MAX,
              f"{artifact}: highest GLIBC symbol version {fmt(highest)} <= 2.17")
        report.append(f"{artifact}  {lib.stat().st_size:,} bytes  GLIBC_{fmt(highest)}  needs {', '.join(needed)}")
    else:
        check(not glibc and needed == [f"libc.musl-{arch}.so.1"],
              f"{artifact}: needs musl's libc only, by its PEP 656 name (needs {', '.join(needed)})")
        # Weak imports (`w`) may stay unresolved: Rust's std falls back without them.
        undefined = {line.split()[-1] for line in symbols.splitlines()
                     if "*UND*" in line and not re.search(r"\s+w\s+", line[:30])}
        # What the host process provides: Node's N-API, CPython's C API.
        host = {s for s in undefined if s.startswith(("napi_", "node_api_", "Py", "_Py"))}
        missing = sorted(s for s in undefined - host - musl[arch] if s)
        check(not missing, f"{artifact}: every imported symbol is in musl's libc ({len(undefined - host)} symbols"
              f"{', from the host process: ' + str(len(host)) if host else ''}){' missing: ' + ', '.join(missing[:8]) if missing else ''}")
        report.append(f"{artifact}  {lib.stat().st_size:,} bytes  no GLIBC  needs {', '.join(needed)}")


def fmt(version: tuple | None) -> str:
    return ".".join(map(str, version)) if version else "none"


def auditwheel() -> None:
    for wheel in sorted((DIST / "python").glob("*linux*.whl")):
        shown = run([TOOLS / "auditwheel", "show", wheel], capture=True)
        tags = re.findall(r'"((?:many|musl)linux_[0-9]+_[0-9]+_[a-z0-9_]+)"', shown)
        wheel_tags = wheel.stem.split("-")[-1].split(".")
        check(bool(tags) and tags[0] in wheel_tags,
              f"{wheel.name}: auditwheel says {tags[0] if tags else '?'}, the wheel is tagged {'.'.join(wheel_tags)}")


# --- aarch64 and musl under qemu -------------------------------------------------

def debian_root(arch: str, packages: list[str], name: str) -> Path:
    """A Debian root of `arch` with `packages` extracted (cached under target/)."""
    root = WORK / name
    stamp = root / ".packages"
    wanted = ",".join(sorted(packages))
    if not (stamp.exists() and stamp.read_text() == wanted):
        shutil.rmtree(root, ignore_errors=True)
        run(["mmdebstrap", "--quiet", "--mode=root", "--variant=extract", f"--arch={DEBIAN_ARCH[arch]}",
             f"--include={wanted}", "bookworm", root, "http://deb.debian.org/debian"])
        stamp.write_text(wanted)
    return root


def qemu(root: Path, program: str, args: list, env: dict | None = None) -> str:
    return run(["qemu-aarch64", "-L", root, root / program.lstrip("/"), *args], env=env, capture=True)


def aarch64_runs(connect: str) -> None:
    root = debian_root("aarch64", ["nodejs", "openjdk-17-jre-headless", "python3"], "arm64-root")
    # Python: the aarch64 manylinux wheel, unpacked as pip would install it.
    wheel = next((DIST / "python").glob("*manylinux*aarch64*.whl"))
    site = WORK / "arm64-site"
    shutil.rmtree(site, ignore_errors=True)
    zipfile.ZipFile(wheel).extractall(site)
    # The root has no MIT Kerberos unless a package pulled it in: then the wheel must load and
    # work anyway, and asking for GSSAPI must name the missing library.
    kerberos = any(root.glob("usr/lib/*/libgssapi_krb5.so*"))
    args = [SMOKE / "smoke.py", connect] + ([] if kerberos else ["--no-kerberos"])
    out = qemu(root, "/usr/bin/python3", args, env={**os.environ, "PYTHONPATH": str(site)})
    check("aarch64" in out and "queue ok" in out, f"arm64 Python under qemu ran {wheel.name}: {out.strip()}")
    check(kerberos or "without Kerberos, GSSAPI says" in out,
          f"arm64 Python without Kerberos: the wheel loads, GSSAPI names the library: {out.strip()}")
    # Node: the main package and the arm64 glibc package, as npm lays them out.
    project = WORK / "arm64-node"
    shutil.rmtree(project, ignore_errors=True)
    for tgz in [DIST / "npm" / f"zkrecipes-{version()}.tgz", *(DIST / "npm").glob("zkrecipes-linux-arm64-gnu-*.tgz")]:
        name = "zkrecipes" if tgz.name.startswith(f"zkrecipes-{version()}") else "zkrecipes-linux-arm64-gnu"
        target = project / "node_modules" / name
        target.mkdir(parents=True)
        run(["tar", "-xzf", tgz, "-C", target, "--strip-components=1"])
    shutil.copy(SMOKE / "smoke.js", project)
    out = qemu(root, "/usr/bin/node", [project / "smoke.js", connect])
    check("arm64" in out and "queue ok" in out, f"arm64 Node under qemu ran the linux-arm64-gnu package: {out.strip()}")
    # Java: Debian's arm64 JVM loads the JAR's linux-aarch64 library.
    classes = WORK / "smoke-classes"
    jar = DIST / "java" / f"zkrecipes-{version()}.jar"
    run(["javac", "-d", classes, "-cp", jar, SMOKE / "Smoke.java"])
    java = next(root.glob("usr/lib/jvm/java-17-openjdk-arm64/bin/java"))
    out = qemu(root, f"/{java.relative_to(root)}", ["-cp", f"{jar}:{classes}", "Smoke", connect])
    check("aarch64" in out and "queue ok" in out, f"arm64 Java under qemu ran the JAR: {out.strip()}")


def musl_core_runs(connect: str, secure: tuple[str, str] | None) -> None:
    env = {**os.environ, "PATH": f"{TOOLS}:{os.environ['PATH']}"}
    for arch in ["x86_64", "aarch64"]:
        triple = f"{arch}-unknown-linux-musl"
        run([TOOLS / "cargo-zigbuild", "zigbuild", "--release", "--quiet", "-p", "zkrecipes",
             "--example", "dist_smoke", "--target", triple], env=env)
        binary = ROOT / "target" / triple / "release" / "examples" / "dist_smoke"
        tls_args = list(secure) if secure else []
        cmd = [binary, connect, *tls_args] if arch == "x86_64" else ["qemu-aarch64", binary, connect, *tls_args]
        out = run(cmd, capture=True)
        check(f"rust {arch}-musl" in out and "queue ok" in out, f"the core built for {triple} ran: {out.strip()}")
        if secure:
            check("tls ok" in out, f"the core built for {triple} connected over TLS (rustls, ring): {out.strip()}")


def linux_artifacts_are_there() -> None:
    """Every Linux artifact by name: the checks that loop over what a glob finds pass on one that
    is missing."""
    ver = version()
    wheels = {w.name.split("-")[-1].removesuffix(".whl") for w in (DIST / "python").glob("*.whl")}
    for tag in ("manylinux_2_17_x86_64", "manylinux_2_17_aarch64", "musllinux_1_2_x86_64", "musllinux_1_2_aarch64"):
        check(any(tag in w.split(".") for w in wheels), f"the {tag} wheel is there")
    check((DIST / "python" / f"zkrecipes-{ver}.tar.gz").is_file(), "the sdist is there")
    for platform in ("linux-x64-gnu", "linux-arm64-gnu", "linux-x64-musl", "linux-arm64-musl"):
        check((DIST / "npm" / f"zkrecipes-{platform}-{ver}.tgz").is_file(), f"the npm package zkrecipes-{platform} is there")
    for arch in ("x86_64", "aarch64"):
        check((DIST / "cli" / f"zkrecipes-cli-{ver}-{arch}-linux.tar.gz").is_file(), f"the {arch} Linux command line is there")
    for jar in (DIST / "java" / f"zkrecipes-{ver}.jar", DIST / "kotlin" / f"zkrecipes-kotlin-{ver}.jar"):
        with zipfile.ZipFile(jar) as z:
            carried = {n.split("/")[1] for n in z.namelist() if n.startswith("native/") and not n.endswith("/")}
        wanted = {"linux-x86_64", "linux-aarch64", "linux-x86_64-musl", "linux-aarch64-musl"}
        check(wanted <= carried, f"{jar.name} carries native/ for {sorted(wanted & carried)}")


def cli_binaries_run(connect: str) -> None:
    """The command-line archives: static, and they take a lock on either CPU."""
    for archive in sorted((DIST / "cli").glob("*-linux.tar.gz")):
        arch = "aarch64" if "aarch64" in archive.name else "x86_64"
        unpacked = WORK / "cli" / arch
        shutil.rmtree(unpacked, ignore_errors=True)
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
        binary = next(unpacked.rglob("zkrecipes"))
        header = run(["readelf", "-h", "-l", binary], capture=True)
        check(MACHINE[arch] in header and "INTERP" not in header and "DYNAMIC" not in header,
              f"{archive.name}: a static {arch} executable")
        cmd = [binary] if arch == "x86_64" else ["qemu-aarch64", binary]
        out = run([*cmd, "--connect", connect, "lock", f"/dist-check/cli-{arch}", "--timeout", "5s", "--",
                   "sh", "-c", "echo token=$ZKRECIPES_FENCING_TOKEN"], capture=True)
        check(out.startswith("token="), f"{archive.name} ran a command under a lock: {out.strip()}")


# --- installing as users do -------------------------------------------------------------

def sdist_builds_and_passes(connect: str) -> None:
    sdist = next((DIST / "python").glob("*.tar.gz"))
    venv = WORK / "sdist-venv"
    shutil.rmtree(venv, ignore_errors=True)
    run([sys.executable, "-m", "venv", venv])
    run([venv / "bin/pip", "install", "--quiet", "--disable-pip-version-check", sdist, *PYTHON_TEST_DEPENDENCIES])
    out = run([venv / "bin/python", "-c", "import zkrecipes, pathlib; print(pathlib.Path(zkrecipes.__file__).parent)"],
              capture=True).strip()
    check(str(venv) in out, f"the sdist built from source and installed into {venv.name}")
    env = {**os.environ, "ZK_CONNECT": connect, "ZK_HARNESS": str(ROOT / "target/debug/zk-harness")}
    run([venv / "bin/python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib",
         ROOT / "python" / "tests"], cwd=venv, env=env)
    check(True, "the Python tests passed against the wheel built from the sdist")


def npm_installs_the_right_platform(connect: str) -> None:
    ver = version()
    project = WORK / "npm-project"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    npm = DIST / "npm"
    # Every platform's package is offered: npm must pick this platform's alone.
    overrides = {t.name[: -len(f"-{ver}.tgz")]: f"file:{t}" for t in npm.glob("zkrecipes-*-*.tgz")}
    manifest = {
        "name": "dist-check", "version": "1.0.0", "private": True,
        # The Node tests' own dependencies, as `make test-node` installs them (the OpenTelemetry
        # and tracing tests need them; without them three test files failed here).
        "dependencies": {"zkrecipes": f"file:{npm / f'zkrecipes-{ver}.tgz'}", **NODE_TEST_DEPENDENCIES},
        "overrides": overrides,
    }
    (project / "package.json").write_text(json.dumps(manifest, indent=2))
    run(["npm", "install", "--offline", "--no-audit", "--no-fund", "--loglevel=error"], cwd=project)
    installed = sorted(p.name for p in (project / "node_modules").glob("zkrecipes-*"))
    check(installed == ["zkrecipes-linux-x64-gnu"], f"npm installed the platform packages {installed} on linux-x64-gnu")
    shutil.copytree(ROOT / "node" / "test", project / "test")
    shutil.copy(SMOKE / "smoke.js", project)
    out = run(["node", "smoke.js", connect], cwd=project, capture=True)
    check("queue ok" in out, f"node smoke through the installed packages: {out.strip()}")
    env = {**os.environ, "ZK_CONNECT": connect, "ZK_HARNESS": str(ROOT / "target/debug/zk-harness"),
           # The behaviour specs, which spec.test.js finds beside the workspace's own test project.
           "ZKRECIPES_SPECS": str(ROOT / "tests" / "spec")}
    run(["node", "--test", "--test-concurrency=1", "test/"], cwd=project, env=env)
    check(True, "the Node tests passed against the installed packages")


# What `make test-python` installs beside the wheel (the Makefile names the same versions): the
# tests use kazoo and OpenTelemetry; with pytest alone the sdist's run failed to import them.
PYTHON_TEST_DEPENDENCIES = [
    "pytest", "kazoo==2.10.0", "pure-sasl==0.6.2", "opentelemetry-api==1.45.2", "opentelemetry-sdk==1.45.2",
    "opentelemetry-exporter-prometheus==0.66b2", "prometheus-client==0.26.0",
]

# What `make test-node` installs beside the package (the Makefile names the same versions).
NODE_TEST_DEPENDENCIES = {
    "@opentelemetry/api": "1.9.1",
    "@opentelemetry/sdk-metrics": "2.12.1",
    "@opentelemetry/sdk-trace-base": "2.12.1",
    "@opentelemetry/context-async-hooks": "2.12.1",
}


def install_jar(jar: Path, library: str, what: str, *files: str) -> None:
    """Checks that `jar` (`what`) carries `library` (System.mapLibraryName's name on each OS) for
    every platform, then installs it into the local Maven repository with `files`
    (`-DpomFile=...` and the like)."""
    names = {"linux": f"lib{library}.so", "darwin": f"lib{library}.dylib", "windows": f"{library}.dll"}
    with zipfile.ZipFile(jar) as z:
        carried = sorted(n.split("/")[1] for n in z.namelist()
                         if n.startswith("native/") and n.split("/")[-1] == names.get(n.split("/")[1].split("-")[0]))
    expected = ["darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-aarch64-musl", "linux-x86_64",
                "linux-x86_64-musl", "windows-x86_64"]
    check(carried == expected, f"{what} carries native/{carried}")
    run(["mvn", "-q", "-B", "org.apache.maven.plugins:maven-install-plugin:3.1.4:install-file", f"-Dfile={jar}", *files])


def maven_dependency_works(connect: str) -> None:
    ver = version()
    java = DIST / "java"
    install_jar(java / f"zkrecipes-{ver}.jar", "zkrecipes_java", "the JAR", f"-DpomFile={java / f'zkrecipes-{ver}.pom'}",
                f"-Dsources={java / f'zkrecipes-{ver}-sources.jar'}", f"-Djavadoc={java / f'zkrecipes-{ver}-javadoc.jar'}")
    project = WORK / "maven-consumer"
    shutil.rmtree(project, ignore_errors=True)
    classpath = maven_consumer.java(project, ver, {"Smoke.java": (SMOKE / "Smoke.java").read_text()})
    check(f"zkrecipes-{ver}.jar" in classpath and ".m2" in classpath,
          "a fresh Maven project resolves io.zkrecipes:zkrecipes from the local repository")
    out = run(["java", "-cp", classpath, "Smoke", connect], capture=True)
    check("queue ok" in out, f"java smoke through the Maven dependency: {out.strip()}")


def kotlin_consumer(connect: str) -> str:
    """Installs the Kotlin JAR with its POM, compiles Smoke.kt in a fresh Kotlin Maven project
    that depends on it, runs it; returns the classpath Maven resolved (for the arm64 run)."""
    ver = version()
    kotlin = DIST / "kotlin"
    install_jar(kotlin / f"zkrecipes-kotlin-{ver}.jar", "zkrecipes_kotlin", "the Kotlin JAR",
                f"-DpomFile={kotlin / f'zkrecipes-kotlin-{ver}.pom'}")
    project = WORK / "kotlin-consumer"
    shutil.rmtree(project, ignore_errors=True)
    classpath = maven_consumer.kotlin(project, ver, {"Smoke.kt": (SMOKE / "Smoke.kt").read_text()})
    check(f"zkrecipes-kotlin-{ver}.jar" in classpath and "jna-" in classpath and "kotlinx-coroutines-core" in classpath,
          "a fresh Kotlin project resolves io.zkrecipes:zkrecipes-kotlin and its three dependencies")
    out = run(["java", "-cp", classpath, "SmokeKt", connect], capture=True)
    check("queue ok" in out, f"kotlin smoke through the Maven dependency: {out.strip()}")
    return classpath


def kotlin_aarch64_runs(connect: str, classpath: str) -> None:
    """Debian's arm64 JVM under qemu: JNA's aarch64 dispatch and the JAR's linux-aarch64 library."""
    root = debian_root("aarch64", ["nodejs", "openjdk-17-jre-headless", "python3"], "arm64-root")
    java = next(root.glob("usr/lib/jvm/java-17-openjdk-arm64/bin/java"))
    out = qemu(root, f"/{java.relative_to(root)}", ["-cp", classpath, "SmokeKt", connect])
    check("aarch64" in out and "queue ok" in out, f"arm64 Kotlin under qemu ran the Kotlin JAR: {out.strip()}")


def rust_crate_builds_outside(connect: str) -> None:
    """A crate outside the workspace that depends on zkrecipes (by path, as from a clone; from
    crates.io the same crates come by version) builds with no [patch] and no Kerberos headers:
    its tree has the run-time GSS-API loader (zkrecipes-gssapi-sys), not crates.io's
    libgssapi-sys, whose build script looks for the headers with pkg-config (hidden here); and
    its program connects and locks."""
    crate = WORK / "outside-crate"
    shutil.rmtree(crate, ignore_errors=True)
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(
        "[package]\nname = \"outside\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n"
        f"[dependencies]\nzkrecipes = {{ path = \"{ROOT / 'core'}\" }}\n"
        "tokio = { version = \"1\", features = [\"macros\", \"rt-multi-thread\"] }\n\n[workspace]\n"
    )
    (crate / "src" / "main.rs").write_text(
        "#[tokio::main]\nasync fn main() -> zkrecipes::Result<()> {\n"
        "    let connect = std::env::args().nth(1).expect(\"a connect string\");\n"
        "    let client = zkrecipes::Client::connect(&connect, Default::default()).await?;\n"
        "    let lock = zkrecipes::WriteLock::new(&client, \"/dist-check/outside\")?;\n"
        "    let held = lock.acquire().await?;\n"
        "    held.release().await?;\n"
        "    println!(\"lock ok\");\n"
        "    client.close().await;\n"
        "    Ok(())\n}\n"
    )
    bare = {**os.environ, "PKG_CONFIG_LIBDIR": str(WORK / "no-pkg-config"), "PKG_CONFIG_PATH": "",
            "CARGO_TARGET_DIR": str(WORK / "outside-target")}
    tree = run(["cargo", "tree", "--prefix", "none", "-e", "normal"], cwd=crate, env=bare, capture=True)
    packages = {line.split()[0] for line in tree.splitlines() if line.strip()}
    check("zkrecipes-gssapi-sys" in packages and "libgssapi-sys" not in packages,
          "a crate outside the workspace resolves zkrecipes with the run-time GSS-API loader, no libgssapi-sys")
    out = run(["cargo", "run", "--quiet", "--", connect], cwd=crate, env=bare, capture=True)
    check("lock ok" in out, f"it builds (pkg-config hidden) and locks: {out.strip()}")


def licenses_ship() -> None:
    """Every artifact carries the license text, not only its name."""
    for wheel in [*(DIST / "python").glob("*.whl")]:
        names = zipfile.ZipFile(wheel).namelist()
        check(any(n.endswith("/LICENSE") for n in names), f"{wheel.name} carries LICENSE")
    sdist = next((DIST / "python").glob("*.tar.gz"))
    with tarfile.open(sdist) as t:
        check(any(n.endswith("/LICENSE") for n in t.getnames()), f"{sdist.name} carries LICENSE")
    for tgz in (DIST / "npm").glob("*.tgz"):
        with tarfile.open(tgz) as t:
            check("package/LICENSE" in t.getnames(), f"{tgz.name} carries LICENSE")
    for jar in (DIST / "java").glob("zkrecipes-*[0-9].jar"):
        names = zipfile.ZipFile(jar).namelist()
        check("META-INF/LICENSE" in names, f"{jar.name} carries META-INF/LICENSE")
    pom = next((DIST / "java").glob("*.pom")).read_text()
    check("<dependencies>" not in pom and "<build>" not in pom and "<developers>" in pom,
          "the published POM has no build and no dependencies, and names its developers")
    for jar in (DIST / "kotlin").glob("zkrecipes-kotlin-*[0-9].jar"):
        check("META-INF/LICENSE" in zipfile.ZipFile(jar).namelist(), f"{jar.name} carries META-INF/LICENSE")
    pom = next((DIST / "kotlin").glob("*.pom")).read_text()
    check(pom.count("<dependency>") == 3 and "<build>" not in pom and "<developers>" in pom,
          "the Kotlin POM names its three runtime dependencies and no build")


def foreign_only(connect: str, secure: tuple[str, str] | None) -> int:
    """`dist_check.py --foreign-only`: the macOS and Windows checks alone, for a partial dist
    (`dist.py --os darwin --os win32`)."""
    WORK.mkdir(parents=True, exist_ok=True)
    foreign = Foreign(check, report, WORK, partial=True)
    foreign.audit()
    foreign.windows_node(connect)
    foreign.windows_cli(connect, secure)
    print("native libraries:", *report, sep="\n  ")
    print(f"\ndist-check: {len(failures)} failed:", *failures, sep="\n  ") if failures else print("\ndist-check: all passed")
    return 1 if failures else 0


def main() -> int:
    connect = os.environ.get("ZK_CONNECT")
    if not connect:
        print("dist-check: run under tests/with-zk (ZK_CONNECT unset)", file=sys.stderr)
        return 2
    # Under tests/with-secure-zk (make dist-check), the musl builds also connect over TLS.
    secure = None
    if os.environ.get("ZK_TLS_CONNECT"):
        secure = (os.environ["ZK_TLS_CONNECT"], str(Path(os.environ["ZK_CERTS"]) / "ca.pem"))
    if sys.argv[1:] == ["--foreign-only"]:
        return foreign_only(connect, secure)
    WORK.mkdir(parents=True, exist_ok=True)
    musl = {arch: musl_exports(arch) for arch in ["x86_64", "aarch64"]}
    for artifact, arch, libc, lib in natives():
        audit_native(artifact, arch, libc, lib, musl)
    auditwheel()
    linux_artifacts_are_there()
    foreign = Foreign(check, report, WORK)
    foreign.audit()
    licenses_ship()
    aarch64_runs(connect)
    musl_core_runs(connect, secure)
    cli_binaries_run(connect)
    foreign.windows_node(connect)
    foreign.windows_cli(connect, secure)
    npm_installs_the_right_platform(connect)
    maven_dependency_works(connect)
    kotlin_aarch64_runs(connect, kotlin_consumer(connect))
    sdist_builds_and_passes(connect)
    rust_crate_builds_outside(connect)
    print("\nartifacts:")
    for path in sorted(DIST.rglob("*")):
        if path.is_file():
            print(f"  {path.relative_to(DIST)}  {path.stat().st_size:,} bytes")
    print("native libraries:")
    for line in report:
        print("  " + line)
    if failures:
        print(f"\ndist-check: {len(failures)} failed:", *failures, sep="\n  ")
        return 1
    print("\ndist-check: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
