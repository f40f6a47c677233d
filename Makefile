# zkrecipes — `make demo` and `make test` are the two commands users need.
SHELL := /bin/bash
CARGO ?= cargo

PYTHON ?= python3
WHEELS := target/wheels
PY_VENV := target/py-venv

NPM_OUT := target/npm
NODE_PROJECT := target/node-project

JAR := java/target/zkrecipes-0.1.0.jar
APACHE_CP := /usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-recipes-lock.jar:/usr/share/java/zookeeper-recipes-queue.jar:/usr/share/java/zookeeper-recipes-election.jar:/usr/share/java/slf4j-nop.jar

.PHONY: torture torture-smoke bench-smoke soak test-reliability reliability-workers bench demo demo-rust test test-rust test-python test-node test-java test-cross wheel npm-pack jar harness lint zk-jars clean

# Python, Node.js and Java workers share one election, queue and lock; the demo checks itself.
# Flags: make demo DEMO_ARGS="--python 3 --node 2 --java 1 --jobs 500"
demo: wheel npm-pack jar harness
	$(PYTHON) demo/run.py --wheel $(CURDIR)/$(WHEELS)/zkrecipes-0.1.0-cp39-abi3-*.whl \
		--npm-tarball $(CURDIR)/$(NPM_OUT)/zkrecipes-0.1.0.tgz --jar $(CURDIR)/$(JAR) \
		--harness $(CURDIR)/target/debug/zk-harness $(DEMO_ARGS)

# Benchmarks against Apache's recipes, Curator and kazoo on one harness ZooKeeper:
# writes bench/results.{md,png,json}. `make bench BENCH_ARGS=--quick` for a smoke run.
bench: wheel npm-pack jar harness
	$(CARGO) build --quiet --release -p zkrecipes-bench
	tests/with-zk bash -c '$(PYTHON) bench/run.py --connect "$$ZK_CONNECT" \
		--wheel $(CURDIR)/$(WHEELS)/zkrecipes-0.1.0-cp39-abi3-*.whl \
		--npm-tarball $(CURDIR)/$(NPM_OUT)/zkrecipes-0.1.0.tgz --jar $(CURDIR)/$(JAR) \
		--apache-cp "$(APACHE_CP)" --curator-cp "$$(target/debug/zk-harness curator-cp)" $(BENCH_ARGS)'

# Every benchmark workload with tiny N, so that `make test` keeps them working.
bench-smoke:
	$(MAKE) bench BENCH_ARGS="--quick --out-dir $(CURDIR)/target/bench-smoke"

# The Rust-only tour (lock, queue, election from three clients).
demo-rust:
	$(CARGO) run --quiet -p zkrecipes --example demo

test: lint test-rust test-python test-node test-java test-cross test-reliability bench-smoke torture-smoke

# Rust core: unit tests + integration tests against real ZooKeeper
# (standalone, 3-node ensemble, fault proxy, Apache's own recipes).
test-rust:
	$(CARGO) test --workspace -- --test-threads=4

harness:
	$(CARGO) build --quiet -p zk-harness --bin zk-harness

# The abi3 wheel users install (`pip install target/wheels/zkrecipes-*.whl`).
wheel:
	rm -f $(WHEELS)/zkrecipes-*.whl
	cd python && maturin build --release --quiet -o ../$(WHEELS)

# Python: the installed wheel in a fresh virtualenv, against a harness ZooKeeper.
test-python: wheel harness
	rm -rf $(PY_VENV) && $(PYTHON) -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install --quiet $(WHEELS)/zkrecipes-*.whl pytest mypy
	cd $(PY_VENV) && bin/mypy --strict $(CURDIR)/python/examples/quickstart.py
	cd $(PY_VENV) && ZK_HARNESS=$(CURDIR)/target/debug/zk-harness bin/python -m pytest -q -p no:cacheprovider \
		--import-mode=importlib $(CURDIR)/python/tests

# The npm tarball users install; it carries the Linux x86-64 addon.
npm-pack:
	cd node && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build
	mkdir -p $(NPM_OUT) && rm -f $(NPM_OUT)/zkrecipes-*.tgz
	cd node && npm pack --silent --pack-destination ../$(NPM_OUT)

# Node: the packed tarball installed into a fresh project, against a harness ZooKeeper.
test-node: npm-pack harness
	rm -rf $(NODE_PROJECT) && mkdir -p $(NODE_PROJECT)
	cd $(NODE_PROJECT) && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error \
		$(CURDIR)/$(NPM_OUT)/zkrecipes-*.tgz typescript@5.9.3 @types/node@20.19.43
	cp -r node/test node/examples/example.ts $(NODE_PROJECT)/
	cd $(NODE_PROJECT) && npx tsc --strict --noEmit --target es2022 --module nodenext --moduleResolution nodenext \
		--lib es2022,esnext.disposable --types node example.ts
	cd $(NODE_PROJECT) && $(CURDIR)/tests/with-zk node --test --test-concurrency=1 test/

# The JAR users put on their classpath; it carries libzkrecipes_java.so.
jar:
	mvn -q -B -f java/pom.xml package -DskipTests

# Java: JUnit 5 tests run by failsafe against the packaged JAR, against a harness ZooKeeper.
test-java: harness
	tests/with-zk mvn -q -B -f java/pom.xml verify

# Python, Node.js and Java agents (installed artifacts) on the same lock, queue and election.
test-cross: harness jar
	test -x $(PY_VENV)/bin/pytest -a -d $(NODE_PROJECT)/node_modules/zkrecipes || $(MAKE) test-python test-node
	NODE_PROJECT=$(CURDIR)/$(NODE_PROJECT) ZKRECIPES_JAR=$(CURDIR)/$(JAR) tests/with-zk \
		$(PY_VENV)/bin/python -m pytest -q -p no:cacheprovider $(CURDIR)/tests/cross

# Faults on a 3-node ensemble with workers in every language: `make test` runs the
# short profile, `make soak` the long one (>= 30 minutes).
RELIABILITY = $(PYTHON) tests/reliability/run.py --harness $(CURDIR)/target/debug/zk-harness \
	--python $(CURDIR)/$(PY_VENV)/bin/python --node-project $(CURDIR)/$(NODE_PROJECT) --jar $(CURDIR)/$(JAR) \
	--java-classes $(CURDIR)/target/reliability-classes --rust-worker $(CURDIR)/target/debug/examples/reliability_worker

reliability-workers: harness jar
	test -x $(PY_VENV)/bin/pytest -a -d $(NODE_PROJECT)/node_modules/zkrecipes || $(MAKE) test-python test-node
	$(CARGO) build --quiet -p zkrecipes --example reliability_worker
	javac -nowarn -d target/reliability-classes -cp $(JAR) tests/reliability/Worker.java

test-reliability: reliability-workers
	$(RELIABILITY) --profile short

soak: reliability-workers
	$(RELIABILITY) --profile soak --minutes 30

lint:
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

torture:
	$(CARGO) build --quiet -p zk-torture -p zk-harness
	$(TORTURE) loop --minutes $(MINUTES) $(TORTURE_JAVA)

# The bounded run of `make test`: fixed seeds on a standalone server, one on a 3-node ensemble.
torture-smoke:
	$(CARGO) build --quiet -p zk-torture -p zk-harness
	rc=0; $(TORTURE) run --seeds 1,2 --seconds 15 $(TORTURE_JAVA) || rc=1; \
		$(TORTURE) run --seed 3 --seconds 20 --ensemble $(TORTURE_JAVA) || rc=1; exit $$rc
