#!/usr/bin/env python3
"""`make dist`: every release artifact into target/dist/.

  python/  an sdist and abi3 wheels: manylinux2014 (glibc >= 2.17) and
           musllinux_1_2 for x86_64 and aarch64, macosx_10_12_x86_64,
           macosx_11_0_arm64 and win_amd64 (maturin + zig)
  npm/     the main `zkrecipes` package, whose optionalDependencies name one
           package per platform (linux-x64-gnu, linux-arm64-gnu,
           linux-x64-musl, linux-arm64-musl, darwin-x64, darwin-arm64,
           win32-x64-gnu), each carrying its `.node`
  java/    one JAR carrying native/<platform>/ (libzkrecipes_java.so, .dylib or
           zkrecipes_java.dll) for the same seven platforms, its sources and
           javadoc JARs, and its POM
  kotlin/  one JAR carrying native/<platform>/ libzkrecipes_kotlin for the same
           seven platforms, and its POM (kotlin-stdlib, kotlinx-coroutines, JNA)
  rust/    the core crate as `cargo package` makes it
  cli/     the `zkrecipes` command as static musl binaries for x86_64 and
           aarch64 (run on any Linux) and for macOS (x86_64, arm64), one .tar.gz
           each, and zkrecipes.exe for Windows in a .zip, with SHA256SUMS

Native code for glibc targets is linked against glibc 2.17 by zig
(cargo-zigbuild); musl targets link musl dynamically so that Node and the JVM
can load them. macOS is cross-compiled by zig as well, a newer one
(target/zig-macos-venv: the one above cannot link the sections that `linkme`
registries use in Mach-O); every Mach-O is signed ad hoc by rcodesign, as arm64
macOS refuses to load an unsigned one. Windows is built with Debian's MinGW-w64
(zig's linker left out the exports Rust asks for: no JNI function, no
napi_register_module_v1). Tools come from
target/tools-venv, target/zig-macos-venv and target/tools/bin
(tools/setup.sh --dist).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "target" / "dist"
TOOLS = ROOT / "target" / "tools-venv" / "bin"
# zig 0.15 for macOS targets (see above); rcodesign (apple-codesign) for the signatures.
ZIG_MACOS = ROOT / "target" / "zig-macos-venv" / "bin"
RCODESIGN = ROOT / "target" / "tools" / "bin" / "rcodesign"


@dataclass(frozen=True)
class Platform:
    triple: str  # Rust's target triple
    node: str  # napi-rs's platform name
    java: str  # the JAR's native/<dir>
    wheel_tag: str  # maturin --compatibility ("" for maturin's own tag: macOS, Windows)
    node_cpu: str
    libc: str  # "glibc", "musl", or "" off Linux

    @property
    def os(self) -> str:
        """npm's and Node's name of the OS: linux, darwin, win32."""
        return self.node.split("-")[0]

    @property
    def zig_target(self) -> str:
        # cargo-zigbuild reads the glibc version to link against from the triple.
        return f"{self.triple}.2.17" if self.libc == "glibc" else self.triple

    @property
    def rustflags(self) -> str:
        # Rust links musl statically by default, which rules out the shared
        # libraries that Node and the JVM load.
        if self.libc == "musl":
            return "-C target-feature=-crt-static"
        # zig signs arm64 Mach-O files itself but leaves x86-64 ones unsigned and without room
        # for the signature's load command, which rcodesign then cannot add.
        if self.os == "darwin":
            return "-C link-arg=-Wl,-headerpad_max_install_names"
        return ""

    def library(self, crate: str) -> str:
        """The file name cargo gives crate's cdylib here, which is also System.mapLibraryName's."""
        return {"darwin": f"lib{crate}.dylib", "win32": f"{crate}.dll"}.get(self.os, f"lib{crate}.so")

    @property
    def zig(self) -> bool:
        return self.os != "win32"

    def cargo(self, *args: str | Path) -> list[str | Path]:
        """A cargo build command for this platform: through zig, or with MinGW for Windows."""
        if self.zig:
            return [TOOLS / "cargo-zigbuild", "zigbuild", "--target", self.zig_target, *args]
        return ["cargo", "build", "--target", self.triple, *args]

    def env(self) -> dict[str, str]:
        """The build environment: zig and its version, the lowest macOS version, RUSTFLAGS."""
        extra = {"RUSTFLAGS": self.rustflags}
        if self.os == "win32":
            extra["LIBNODE_PATH"] = str(node_import_library())
        if self.os == "darwin":
            extra["PATH"] = f"{ZIG_MACOS}:{tool_env()['PATH']}"
            # Rust's own lowest versions (zig alone would write its default, macOS 13).
            extra["MACOSX_DEPLOYMENT_TARGET"] = MACOS_MIN[self.triple.split("-")[0]]
        return tool_env(extra)


# The lowest macOS each architecture's builds say they run on: Rust's defaults.
MACOS_MIN = {"x86_64": "10.12", "aarch64": "11.0"}

PLATFORMS = [
    Platform("x86_64-unknown-linux-gnu", "linux-x64-gnu", "linux-x86_64", "manylinux2014", "x64", "glibc"),
    Platform("aarch64-unknown-linux-gnu", "linux-arm64-gnu", "linux-aarch64", "manylinux2014", "arm64", "glibc"),
    Platform("x86_64-unknown-linux-musl", "linux-x64-musl", "linux-x86_64-musl", "musllinux_1_2", "x64", "musl"),
    Platform("aarch64-unknown-linux-musl", "linux-arm64-musl", "linux-aarch64-musl", "musllinux_1_2", "arm64", "musl"),
    Platform("x86_64-apple-darwin", "darwin-x64", "darwin-x86_64", "", "x64", ""),
    Platform("aarch64-apple-darwin", "darwin-arm64", "darwin-aarch64", "", "arm64", ""),
    Platform("x86_64-pc-windows-gnu", "win32-x64-gnu", "windows-x86_64", "", "x64", ""),
]


def node_import_library() -> Path:
    """napi-rs's build script links Windows GNU addons against `libnode.dll` (MSYS2's Node) and
    fails without one. The addon looks Node-API up at run time (napi's dyn-symbols), so it
    imports nothing from it: an import library of node.exe with one symbol satisfies the link
    (and names node.exe, the official Node.js, should anything ever be imported)."""
    staging = DIST.parent / "dist-staging" / "libnode"
    staging.mkdir(parents=True, exist_ok=True)
    (staging / "node.def").write_text("LIBRARY node.exe\nEXPORTS\n  napi_module_register\n")
    run(["x86_64-w64-mingw32-dlltool", "-d", staging / "node.def", "-l", staging / "libnode.dll.a"])
    (staging / "libnode.dll").touch()  # napi-build looks for this file before it links
    return staging


def sign_macho(path: Path) -> None:
    """An ad-hoc signature (no certificate): arm64 macOS loads no unsigned code, and a signature
    made before a file was changed (patched, stripped) no longer verifies."""
    run([RCODESIGN, "sign", path])


def run(cmd: list[str | Path], cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
    print("dist:", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, check=True)


def tool_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # maturin --zig and cargo-zigbuild find zig (the ziglang wheel) and each
    # other on PATH.
    env["PATH"] = f"{TOOLS}:{Path.home() / '.cargo' / 'bin'}:{env['PATH']}"
    env.update(extra or {})
    return env


def version() -> str:
    out = subprocess.run(
        [sys.executable, ROOT / "tools" / "version_check.py", "--print"],
        check=True, capture_output=True, text=True,
    )
    return out.stdout.strip()


def native_libraries(platform: Platform) -> Path:
    """Builds the Node, Java and Kotlin cdylibs for `platform`; returns their directory."""
    run(platform.cargo("--release", "--quiet", "-p", "zkrecipes-node", "-p", "zkrecipes-java", "-p", "zkrecipes-kotlin",
                       "--lib"), env=platform.env())
    built = ROOT / "target" / platform.triple / "release"
    for crate in ["zkrecipes_node", "zkrecipes_java", "zkrecipes_kotlin"]:
        if platform.libc == "musl":
            musl_libc_name(built / platform.library(crate), platform)
        if platform.os == "darwin":
            sign_macho(built / platform.library(crate))
    return built


def musl_libc_name(lib: Path, platform: Platform) -> None:
    """Names musl's libc as Alpine and PEP 656 do. zig links against a libc
    whose soname is plain `libc.so`; musl's loader takes either name for
    itself, but auditwheel (and tools like it) only know `libc.musl-<arch>.so.1`."""
    arch = platform.triple.split("-")[0]
    needed = subprocess.run([TOOLS / "patchelf", "--print-needed", lib],
                            check=True, capture_output=True, text=True).stdout.split()
    if "libc.so" in needed:
        run([TOOLS / "patchelf", "--replace-needed", "libc.so", f"libc.musl-{arch}.so.1", lib])


def fix_wheel(wheel: Path, fix: Callable[[Path], None]) -> None:
    """`fix` applied to every extension inside a built wheel (musl's libc name, a macOS
    signature), which is unpacked and packed again so that its RECORD hashes stay right."""
    unpacked = DIST.parent / "dist-staging" / "wheel"
    shutil.rmtree(unpacked, ignore_errors=True)
    run([TOOLS / "wheel", "unpack", "--dest", unpacked, wheel])
    for lib in unpacked.rglob("*.so"):
        fix(lib)
    wheel.unlink()
    (tree,) = unpacked.iterdir()
    run([TOOLS / "wheel", "pack", "--dest-dir", wheel.parent, tree])


def python(out: Path) -> None:
    out.mkdir(parents=True)
    for platform in PLATFORMS:
        compatibility = ["--compatibility", platform.wheel_tag] if platform.wheel_tag else []
        before = set(out.glob("*.whl"))
        zig = ["--zig"] if platform.zig else []
        run(
            [TOOLS / "maturin", "build", "--release", "--quiet", *zig,
             "--target", platform.triple, *compatibility, "-o", out],
            cwd=ROOT / "python",
            env=platform.env(),
        )
        (wheel,) = set(out.glob("*.whl")) - before
        if platform.libc == "musl":
            fix_wheel(wheel, lambda lib: musl_libc_name(lib, platform))
        if platform.os == "darwin":
            fix_wheel(wheel, sign_macho)
    run([TOOLS / "maturin", "sdist", "-o", out], cwd=ROOT / "python", env=tool_env())


def npm(out: Path, built: dict[str, Path], ver: str) -> None:
    out.mkdir(parents=True)
    staging = DIST.parent / "dist-staging" / "npm"
    shutil.rmtree(staging, ignore_errors=True)
    main = json.loads((ROOT / "node" / "package.json").read_text())
    for platform in PLATFORMS:
        name = f"zkrecipes-{platform.node}"
        binary = f"zkrecipes.{platform.node}.node"
        pkg = staging / name
        pkg.mkdir(parents=True)
        shutil.copy(built[platform.triple] / platform.library("zkrecipes_node"), pkg / binary)
        manifest = {
            "name": name,
            "version": ver,
            "description": f"The {platform.node} native addon of zkrecipes (installed by `zkrecipes`)",
            "main": binary,
            "files": [binary],
            "os": [platform.os],
            "cpu": [platform.node_cpu],
            **({"libc": [platform.libc]} if platform.libc else {}),
            "engines": main["engines"],
            "license": main["license"],
            "repository": main["repository"],
        }
        (pkg / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        shutil.copy(ROOT / "LICENSE", pkg / "LICENSE")
        (pkg / "README.md").write_text(
            f"# {name}\n\nThe `{platform.triple}` addon of [zkrecipes](https://www.npmjs.com/package/zkrecipes); "
            "install `zkrecipes`, which depends on it on that platform.\n"
        )
        run(["npm", "pack", "--silent", "--pack-destination", out], cwd=pkg)
    # The main package: the JavaScript, and no addon of its own.
    pkg = staging / "zkrecipes"
    pkg.mkdir(parents=True)
    for file in main["files"]:
        source = ROOT / "node" / file
        if file.endswith(".node"):
            continue
        if not source.exists():
            # native.js and native.d.ts are napi-rs's output (`make npm-pack`, which `make dist`
            # runs first): a package without them loads no addon at all.
            raise SystemExit(f"dist: node/{file} is missing: run `make npm-pack` first")
        if source.is_dir():  # lib/: one module per recipe
            shutil.copytree(source, pkg / file)
        else:
            shutil.copy(source, pkg / file)
    shutil.copy(ROOT / "LICENSE", pkg / "LICENSE")
    main["optionalDependencies"] = {f"zkrecipes-{p.node}": ver for p in PLATFORMS}
    main.pop("devDependencies", None)
    main.pop("scripts", None)
    (pkg / "package.json").write_text(json.dumps(main, indent=2) + "\n")
    run(["npm", "pack", "--silent", "--pack-destination", out], cwd=pkg)


def staged_natives(language: str, built: dict[str, Path]) -> Path:
    """Every platform's `zkrecipes_<language>` library in its own directory, as the JAR's build
    takes them (`-Dnative.from`)."""
    natives = DIST.parent / "dist-staging" / f"{language}-native"
    shutil.rmtree(natives, ignore_errors=True)
    for platform in PLATFORMS:
        (natives / platform.java).mkdir(parents=True)
        shutil.copy(built[platform.triple] / platform.library(f"zkrecipes_{language}"), natives / platform.java)
    return natives


def java(out: Path, built: dict[str, Path], ver: str) -> None:
    out.mkdir(parents=True)
    natives = staged_natives("java", built)
    build_dir = DIST.parent / "dist-staging" / "java-build"
    run(["mvn", "-q", "-B", "-f", ROOT / "java" / "pom.xml", "-P", "dist", "clean", "package",
         "-DskipTests", f"-Dnative.from={natives}", f"-Dbuild.dir={build_dir}"])
    for suffix in ["", "-sources", "-javadoc"]:
        shutil.copy(build_dir / f"zkrecipes-{ver}{suffix}.jar", out)
    (out / f"zkrecipes-{ver}.pom").write_text(consumer_pom(ver))


def kotlin(out: Path, built: dict[str, Path], ver: str) -> None:
    out.mkdir(parents=True)
    natives = staged_natives("kotlin", built)
    build_dir = DIST.parent / "dist-staging" / "kotlin-build"
    # The generated Kotlin is the same for every platform. uniffi reads it from a library built
    # by cargo itself: it finds no metadata in one linked by zig (the symbols are there).
    run(["cargo", "build", "--release", "--quiet", "-p", "zkrecipes-kotlin", "--lib"], env=tool_env())
    interface = ROOT / "target" / "release" / "libzkrecipes_kotlin.so"
    run(["mvn", "-q", "-B", "-f", ROOT / "kotlin" / "pom.xml", "-P", "dist", "clean", "package",
         "-DskipTests", f"-Dnative.from={natives}", f"-Dbuild.dir={build_dir}", f"-Dbindgen.library={interface}"])
    shutil.copy(build_dir / f"zkrecipes-kotlin-{ver}.jar", out)
    (out / f"zkrecipes-kotlin-{ver}.pom").write_text(kotlin_consumer_pom(ver))


def kotlin_consumer_pom(ver: str) -> str:
    """The Kotlin JAR's POM users resolve: its three runtime dependencies, none of the build."""
    pom = (ROOT / "kotlin" / "pom.xml").read_text()
    kotlin_version = pom.split("<kotlin.version>")[1].split("<")[0]
    return consumer_pom(
        ver, "zkrecipes-kotlin",
        "ZooKeeper locks, read/write locks, queues and leader election for Kotlin coroutines: suspend functions "
        "and Flows over the Rust core shared with Python, Node.js and Java. Carries its native library for Linux "
        "x86-64 and aarch64 (glibc and musl), macOS (x86-64, Apple silicon) and Windows x86-64.",
        [("org.jetbrains.kotlin", "kotlin-stdlib", kotlin_version),
         ("org.jetbrains.kotlinx", "kotlinx-coroutines-core", "1.11.0"),
         ("net.java.dev.jna", "jna", "5.19.1")],
    )


JAVA_DESCRIPTION = ("ZooKeeper locks, read/write locks, queues and leader election with fencing tokens: one Rust "
                    "core shared with Python and Node.js. Carries its native library for Linux x86-64 and aarch64 "
                    "(glibc and musl), macOS (x86-64, Apple silicon) and Windows x86-64. No runtime dependencies.")


def consumer_pom(ver: str, artifact: str = "zkrecipes", description: str = JAVA_DESCRIPTION,
                 dependencies: list[tuple[str, str, str]] | None = None) -> str:
    """The POM users resolve: coordinates, metadata and runtime dependencies, none of the
    build (the native build and the test dependencies stay in the project's pom.xml)."""
    deps = "".join(
        f"    <dependency><groupId>{g}</groupId><artifactId>{a}</artifactId><version>{v}</version></dependency>\n"
        for g, a, v in dependencies or [])
    deps = f"  <dependencies>\n{deps}  </dependencies>\n" if deps else ""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.zkrecipes</groupId>
  <artifactId>{artifact}</artifactId>
  <version>{ver}</version>
  <packaging>jar</packaging>
  <name>{artifact}</name>
  <description>{description}</description>
  <url>https://github.com/zkrecipes/zkrecipes</url>
  <licenses>
    <license>
      <name>Apache-2.0</name>
      <url>https://www.apache.org/licenses/LICENSE-2.0.txt</url>
    </license>
  </licenses>
  <developers>
    <developer>
      <name>The zkrecipes developers</name>
      <url>https://github.com/zkrecipes/zkrecipes</url>
    </developer>
  </developers>
{deps}  <scm>
    <url>https://github.com/zkrecipes/zkrecipes</url>
    <connection>scm:git:https://github.com/zkrecipes/zkrecipes.git</connection>
  </scm>
</project>
"""


def rust(out: Path) -> None:
    out.mkdir(parents=True)
    run(["cargo", "package", "--quiet", "--allow-dirty", "-p", "zkrecipes", "-p", "zkrecipes-zookeeper-client",
         "-p", "zkrecipes-gssapi-sys"], env=tool_env())
    ver = version()
    shutil.copy(ROOT / "target" / "package" / f"zkrecipes-{ver}.crate", out)
    # The core depends on our fork of zookeeper-client (vendor/zookeeper-client/FORK.md), and the
    # fork on the GSS-API loader (tools/gssapi-runtime): they are published beside it.
    for crate in ("zkrecipes-zookeeper-client", "zkrecipes-gssapi-sys"):
        for packaged in (ROOT / "target" / "package").glob(f"{crate}-*.crate"):
            shutil.copy(packaged, out)


# The command line's platforms: static musl binaries for Linux (any distribution), macOS
# (zig, signed) and Windows (MinGW; its supervisor is a job object, cli/src/supervise_windows.rs).
CLI_TRIPLES = ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl", "x86_64-apple-darwin",
               "aarch64-apple-darwin", "x86_64-pc-windows-gnu"]


def cli(out: Path, ver: str) -> None:
    """One archive per platform with SHA256SUMS: a .tar.gz of `zkrecipes` (Linux, macOS), a .zip
    of `zkrecipes.exe` (Windows); nothing to install but the file."""
    import hashlib
    import tarfile
    import zipfile

    out.mkdir(parents=True)
    sums = []
    for triple in CLI_TRIPLES:
        platform = next(p for p in PLATFORMS if p.triple == triple)
        # A target directory of its own: the shared libraries above are built
        # with other RUSTFLAGS (dynamic musl), which would rebuild each other.
        target_dir = ROOT / "target" / "cli-dist"
        env = platform.env()
        if platform.libc == "musl":
            env["RUSTFLAGS"] = ""  # static: the point of a musl command line
        run(platform.cargo("--release", "--quiet", "-p", "zkrecipes-cli", "--bin", "zkrecipes",
                           "--target-dir", target_dir), env=env)
        arch = triple.split("-")[0]
        os_name = {"linux": "linux", "darwin": "macos", "win32": "windows"}[platform.os]
        stem = f"zkrecipes-{ver}-{arch}-{os_name}"
        if platform.os == "win32":
            binary = target_dir / triple / "release" / "zkrecipes.exe"
            archive = out / f"zkrecipes-cli-{ver}-{arch}-windows.zip"
            with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
                zipped.write(binary, f"{stem}/zkrecipes.exe")
                zipped.write(ROOT / "LICENSE", f"{stem}/LICENSE")
        else:
            binary = target_dir / triple / "release" / "zkrecipes"
            if platform.os == "darwin":
                sign_macho(binary)
            archive = out / f"zkrecipes-cli-{ver}-{arch}-{os_name}.tar.gz"
            with tarfile.open(archive, "w:gz") as tar:
                tar.add(binary, arcname=f"{stem}/zkrecipes")
                tar.add(ROOT / "LICENSE", arcname=f"{stem}/LICENSE")
        sums.append(f"{hashlib.sha256(archive.read_bytes()).hexdigest()}  {archive.name}\n")
    (out / "SHA256SUMS").write_text("".join(sums))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ["python", "npm", "java", "kotlin", "rust", "cli"]
    parser.add_argument("--only", choices=parts, action="append")
    parser.add_argument("--os", choices=["linux", "darwin", "win32"], action="append",
                        help="only these OSes' builds: a partial dist, for working on a port")
    args = parser.parse_args()
    only = set(args.only or parts)
    if args.os:
        PLATFORMS[:] = [p for p in PLATFORMS if p.os in args.os]
        CLI_TRIPLES[:] = [t for t in CLI_TRIPLES if any(p.triple == t for p in PLATFORMS)]
    run([sys.executable, ROOT / "tools" / "version_check.py"])
    ver = version()
    for part in only:
        shutil.rmtree(DIST / part, ignore_errors=True)
    built: dict[str, Path] = {}
    if only & {"npm", "java", "kotlin"}:
        for platform in PLATFORMS:
            built[platform.triple] = native_libraries(platform)
    if "python" in only:
        python(DIST / "python")
    if "npm" in only:
        npm(DIST / "npm", built, ver)
    if "java" in only:
        java(DIST / "java", built, ver)
    if "kotlin" in only:
        kotlin(DIST / "kotlin", built, ver)
    if "rust" in only:
        rust(DIST / "rust")
    if "cli" in only:
        cli(DIST / "cli", ver)
    for path in sorted(DIST.rglob("*")):
        if path.is_file():
            print(f"{path.relative_to(ROOT)}  {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
