# zkrecipes — `make demo` and `make test` are the two commands users need.
SHELL := /bin/bash
# rustup's default place, for shells that have not sourced ~/.cargo/env.
export PATH := $(HOME)/.cargo/bin:$(PATH)
CARGO ?= cargo

# The build tools live in a project-local virtualenv made by tools/setup.sh.
TOOLS := $(CURDIR)/target/tools-venv
MATURIN := $(TOOLS)/bin/maturin

PYTHON ?= python3
WHEELS := target/wheels
PY_VENV := target/py-venv

NPM_OUT := target/npm
NODE_PROJECT := target/node-project

# The release version, defined once in Cargo.toml (`make version-check` holds the others to it).
VERSION := $(shell sed -n 's/^version = "\([^"]*\)".*/\1/p' Cargo.toml | head -1)
JAR := java/target/zkrecipes-$(VERSION).jar
KOTLIN_JAR := kotlin/target/zkrecipes-kotlin-$(VERSION).jar
NPM_TGZ := $(NPM_OUT)/zkrecipes-$(VERSION).tgz
APACHE_CP := /usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-recipes-lock.jar:/usr/share/java/zookeeper-recipes-queue.jar:/usr/share/java/zookeeper-recipes-election.jar:/usr/share/java/slf4j-nop.jar

# Release builds name the host triple, as napi-rs's CLI always does, so that the wheel, the Node
# addon, the JNI and uniffi libraries and the bench share one target/<triple>/release tree
# (without it cargo builds the whole tree twice: target/release and target/<triple>/release).
HOST := $(shell rustc -vV 2>/dev/null | sed -n 's/^host: //p')
RELEASE := target/$(HOST)/release
MVN := mvn -q -B -Dcargo.target=$(HOST)

# What each artifact is built from. The artifacts are files with these as prerequisites, so a
# step of `make test` that needs one another step built finds it up to date instead of
# building it again; a change to a source rebuilds what depends on it.
RUST_SOURCES := Cargo.toml Cargo.lock $(shell find core bindings cli bench tests/harness tests/torture \
	\( -name '*.rs' -o -name '*.toml' \) -not -path '*/target/*' 2>/dev/null)
# The debug build of the crates with tests, binaries and examples (the harness, the CLI, the
# torture driver, the reliability worker): one `cargo build --all-targets` builds them all with
# the features `cargo test` uses, so test-rust and every step that runs a binary share it.
# The bindings have no Rust tests; their release builds are the ones users get.
DEBUG_PACKAGES := -p zkrecipes -p zk-harness -p zk-torture -p zkrecipes-cli
DEBUG_STAMP := target/debug/.zkrecipes-debug-built
WHEEL_STAMP := $(WHEELS)/.built

.PHONY: bench-build cli test-cli test-readme setup setup-test setup-dist dist dist-check version-check torture torture-smoke bench-smoke soak test-reliability reliability-workers bench demo demo-rust test test-rust test-python test-node test-java test-kotlin kotlin-jar kotlin-classpath test-cross wheel npm-pack jar harness lint zk-jars clean

# What the commands below need on this machine (checks only, once installed):
# see tools/setup.sh for what it installs and where.
setup:
	@tools/setup.sh
setup-test:
	@tools/setup.sh --test
setup-dist:
	@tools/setup.sh --test --dist

# Python, Node.js, Java and Kotlin workers share one election, queue and lock; the demo checks itself.
# Flags: make demo DEMO_ARGS="--python 3 --node 2 --java 1 --kotlin 1 --jobs 500"
demo: wheel npm-pack jar kotlin-classpath harness
	$(PYTHON) demo/run.py --wheel $(CURDIR)/$(WHEELS)/zkrecipes-$(VERSION)-cp39-abi3-*.whl \
		--npm-tarball $(CURDIR)/$(NPM_OUT)/zkrecipes-$(VERSION).tgz --jar $(CURDIR)/$(JAR) \
		--kotlin-cp "$$(cat $(KOTLIN_CP))" \
		--harness $(CURDIR)/target/debug/zk-harness $(DEMO_ARGS)

# Benchmarks against Apache's recipes, Curator and kazoo on one harness ZooKeeper:
# writes bench/results.{md,png,json}. `make bench BENCH_ARGS=--quick` for a smoke run.
bench: setup-test wheel npm-pack jar kotlin-classpath harness bench-build
	tests/with-zk bash -c '$(PYTHON) bench/run.py --connect "$$ZK_CONNECT" --rust-bench $(CURDIR)/$(RELEASE)/zkrecipes-bench \
		--wheel $(CURDIR)/$(WHEELS)/zkrecipes-$(VERSION)-cp39-abi3-*.whl \
		--npm-tarball $(CURDIR)/$(NPM_OUT)/zkrecipes-$(VERSION).tgz --jar $(CURDIR)/$(JAR) \
		--kotlin-cp "$$(cat $(KOTLIN_CP))" \
		--apache-cp "$(APACHE_CP)" --curator-cp "$$(target/debug/zk-harness curator-cp)" $(BENCH_ARGS)'

bench-build: setup
	$(CARGO) build --quiet --release --target $(HOST) -p zkrecipes-bench

# Every benchmark workload with tiny N, so that `make test` keeps them working: fails when a
# contestant errors or gives no figure.
bench-smoke:
	$(MAKE) bench BENCH_ARGS="--quick --strict --out-dir $(CURDIR)/target/bench-smoke"

# The Rust-only tour (lock, queue, election from three clients).
demo-rust:
	$(CARGO) run --quiet -p zkrecipes --example demo

# Each step is a `make STEP` of its own, timed (tools/steps.sh prints the table at the end). The
# artifacts are built in a lane of their own, in the order the tests need them, while the tests
# run: `test-python:wheel` starts once the wheel is built. Each artifact is built once.
TEST_FIRST := setup-test version-check
TEST_BUILDS := harness wheel lint npm-pack jar kotlin-classpath bench-build reliability-workers
TEST_STEPS := test-rust:harness test-python:wheel test-cli test-node:npm-pack test-java:jar \
	test-kotlin:kotlin-classpath test-readme test-cross test-reliability:reliability-workers \
	bench-smoke:bench-build torture-smoke
test:
	@MAKE="$(MAKE)" tools/steps.sh --first "$(TEST_FIRST)" --builds "$(TEST_BUILDS)" --tests "$(TEST_STEPS)"

# Rust core: unit tests + integration tests against real ZooKeeper (one harness server for the
# tests that do not start their own; standalone, 3-node ensembles, fault proxies, Apache's and
# Curator's recipes).
test-rust: harness
	tests/with-zk $(CARGO) test --quiet $(DEBUG_PACKAGES) -- --test-threads=4

$(DEBUG_STAMP): $(RUST_SOURCES) | setup
	$(CARGO) build --quiet --all-targets $(DEBUG_PACKAGES)
	touch $@

harness: $(DEBUG_STAMP)

# The abi3 wheel users install (`pip install target/wheels/zkrecipes-*.whl`).
$(WHEEL_STAMP): $(RUST_SOURCES) $(shell find python/zkrecipes python/pyproject.toml python/README.md -type f -not -path '*/__pycache__/*') | setup
	rm -f $(WHEELS)/zkrecipes-*.whl
	cd python && $(MATURIN) build --release --quiet --target $(HOST) -o ../$(WHEELS)
	touch $@

wheel: $(WHEEL_STAMP)

# Python: the installed wheel in a fresh virtualenv, against a harness ZooKeeper.
test-python: wheel harness
	rm -rf $(PY_VENV) && $(PYTHON) -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install --quiet $(WHEELS)/zkrecipes-*.whl pytest mypy kazoo==2.10.0
	cd $(PY_VENV) && bin/mypy --strict $(CURDIR)/python/examples/quickstart.py
	cd $(PY_VENV) && ZK_HARNESS=$(CURDIR)/target/debug/zk-harness bin/python -m pytest -q -p no:cacheprovider \
		--import-mode=importlib $(CURDIR)/python/tests

# The `zkrecipes` command (cargo install --path cli installs the same).
CLI := target/debug/zkrecipes
cli: $(DEBUG_STAMP)

# The command line against a harness ZooKeeper, with Apache's, Curator's and kazoo's nodes.
test-cli: cli harness
	test -x $(PY_VENV)/bin/pytest || $(MAKE) test-python
	ZKRECIPES_CLI=$(CURDIR)/$(CLI) tests/with-zk $(PY_VENV)/bin/python -m pytest -q -p no:cacheprovider \
		$(CURDIR)/tests/cli

# The npm tarball users install; it carries the Linux x86-64 addon.
$(NPM_TGZ): $(RUST_SOURCES) $(wildcard node/*.js node/*.mjs node/*.d.ts) node/package.json node/package-lock.json node/README.md | setup
	cd node && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build -- --target $(HOST)
	mkdir -p $(NPM_OUT) && rm -f $(NPM_OUT)/zkrecipes-*.tgz
	cd node && npm pack --silent --pack-destination ../$(NPM_OUT)

npm-pack: $(NPM_TGZ)

# Node: the packed tarball installed into a fresh project, against a harness ZooKeeper.
test-node: npm-pack harness
	rm -rf $(NODE_PROJECT) && mkdir -p $(NODE_PROJECT)
	cd $(NODE_PROJECT) && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error \
		$(CURDIR)/$(NPM_OUT)/zkrecipes-*.tgz typescript@5.9.3 @types/node@20.19.43
	cp -r node/test node/examples/example.ts $(NODE_PROJECT)/
	cd $(NODE_PROJECT) && npx tsc --strict --noEmit --target es2022 --module nodenext --moduleResolution nodenext \
		--lib es2022,esnext.disposable --types node example.ts
	cd $(NODE_PROJECT) && $(CURDIR)/tests/with-zk node --test --test-concurrency=1 test/

# Every example of README.md, python/README.md and node/README.md, run as written against the
# installed wheel, npm package and JAR (and the core crate), so the docs cannot drift.
test-readme: harness cli npm-pack jar kotlin-jar
	test -x $(PY_VENV)/bin/python -a -d $(NODE_PROJECT)/node_modules/zkrecipes || $(MAKE) test-python test-node
	tests/with-zk $(PYTHON) tools/readme_examples.py --python $(CURDIR)/$(PY_VENV)/bin/python \
		--node-project $(NODE_PROJECT) --jar $(JAR) --kotlin-jar $(KOTLIN_JAR) --cli $(CLI) --npm-tarballs $(NPM_TGZ)

# The JAR users put on their classpath; it carries libzkrecipes_java.so.
JAVA_SOURCES := java/pom.xml $(shell find java/src -type f)
$(JAR): $(RUST_SOURCES) $(JAVA_SOURCES) | setup
	$(MVN) -f java/pom.xml package -DskipTests

jar: $(JAR)

# Java: JUnit 5 tests run by failsafe against the packaged JAR, against a harness ZooKeeper
# (with the native library `jar` built).
test-java: harness jar
	tests/with-zk $(MVN) -f java/pom.xml verify -Dcargo.skip=true

# The Kotlin JAR (uniffi-generated layer over JNA, carrying libzkrecipes_kotlin.so), its three
# runtime dependencies and the compiled test agents, as a plain classpath (for tests/cross, the
# demo and the bench).
KOTLIN_CP := kotlin/target/classpath.txt
KOTLIN_SOURCES := kotlin/pom.xml $(shell find kotlin/src -type f)
KOTLIN_CLASSPATH_GOALS := dependency:build-classpath -DincludeScope=runtime -Dmdep.outputFile=$(CURDIR)/kotlin/target/deps.txt
define write-kotlin-cp
	echo "$(CURDIR)/$(KOTLIN_JAR):$(CURDIR)/kotlin/target/test-classes:$$(cat kotlin/target/deps.txt)" > $(KOTLIN_CP)
endef
$(KOTLIN_CP): $(RUST_SOURCES) $(KOTLIN_SOURCES) | setup
	$(MVN) -f kotlin/pom.xml package -DskipTests $(KOTLIN_CLASSPATH_GOALS)
	$(write-kotlin-cp)

kotlin-jar kotlin-classpath: $(KOTLIN_CP)

# Kotlin: coroutine tests run by failsafe against the packaged JAR, against a harness ZooKeeper
# (with the native library and the generated Kotlin of `kotlin-classpath`; the JAR is packaged
# again, so its classpath is written again).
test-kotlin: harness kotlin-classpath
	tests/with-zk $(MVN) -f kotlin/pom.xml verify -Dcargo.skip=true $(KOTLIN_CLASSPATH_GOALS)
	$(write-kotlin-cp)

# Python, Node.js and Java agents (installed artifacts) on the same lock, queue and election.
test-cross: harness jar kotlin-classpath
	test -x $(PY_VENV)/bin/pytest -a -d $(NODE_PROJECT)/node_modules/zkrecipes || $(MAKE) test-python test-node
	NODE_PROJECT=$(CURDIR)/$(NODE_PROJECT) ZKRECIPES_JAR=$(CURDIR)/$(JAR) \
		ZKRECIPES_KOTLIN_CP=$$(cat $(KOTLIN_CP)) tests/with-zk \
		$(PY_VENV)/bin/python -m pytest -q -p no:cacheprovider $(CURDIR)/tests/cross

# Faults on a 3-node ensemble with workers in every language: `make test` runs the
# short profile, `make soak` the long one (>= 30 minutes).
RELIABILITY = $(PYTHON) tests/reliability/run.py --harness $(CURDIR)/target/debug/zk-harness \
	--python $(CURDIR)/$(PY_VENV)/bin/python --node-project $(CURDIR)/$(NODE_PROJECT) --jar $(CURDIR)/$(JAR) \
	--java-classes $(CURDIR)/target/reliability-classes --rust-worker $(CURDIR)/target/debug/examples/reliability_worker

reliability-workers: harness jar
	javac -nowarn -d target/reliability-classes -cp $(JAR) tests/reliability/Worker.java

# The Python and Node.js workers run from the test virtualenv and npm project.
test-reliability soak: reliability-workers
	test -x $(PY_VENV)/bin/pytest -a -d $(NODE_PROJECT)/node_modules/zkrecipes || $(MAKE) test-python test-node
	$(RELIABILITY) $(if $(filter soak,$@),--profile soak --minutes 30,--profile short)

# Release artifacts for Linux x86-64 and aarch64, glibc >= 2.17 and musl, into target/dist/
# (tools/dist.py says what each is); `make dist-check` proves them (tools/dist_check.py).
dist: setup-dist
	$(PYTHON) tools/dist.py

dist-check: dist harness
	tests/with-zk $(PYTHON) tools/dist_check.py

version-check:
	$(PYTHON) tools/version_check.py

lint: setup-test
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The ZooKeeper 3.9 server jars the harness runs, and Curator for the interop tests
# (both fetched on first use otherwise).
zk-jars:
	mvn -q -B -f tests/harness/pom.xml dependency:copy-dependencies -DoutputDirectory=$(CURDIR)/target/zk-jars
	mvn -q -B -f tests/interop/curator-pom.xml dependency:copy-dependencies -DoutputDirectory=$(CURDIR)/target/curator-jars

clean:
	$(CARGO) clean

# Randomized schedule torture (tests/torture): worker processes draw every recipe
# operation at random under faults; the driver judges one global history.
# `make torture MINUTES=30` runs fresh seeds; replay one with the printed command.
# When the JAR is built, one worker slot is the Java worker (tests/torture/JavaWorker.java).
MINUTES ?= 5
TORTURE := target/debug/zk-torture
# Checked when the recipe runs (the JAR may be built earlier in the same `make test`).
TORTURE_JAVA = $$(test -f $(JAR) && echo --java-jar $(CURDIR)/$(JAR))

torture: harness
	$(TORTURE) loop --minutes $(MINUTES) $(TORTURE_JAVA)

# The bounded run of `make test`: fixed seeds on a standalone server, one on a 3-node ensemble.
torture-smoke: harness
	rc=0; $(TORTURE) run --seeds 1,2 --seconds 15 $(TORTURE_JAVA) || rc=1; \
		$(TORTURE) run --seed 3 --seconds 20 --ensemble $(TORTURE_JAVA) || rc=1; exit $$rc
