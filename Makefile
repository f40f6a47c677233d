# zkrecipes — `make demo` and `make test` are the two commands users need.
SHELL := /bin/bash
CARGO ?= cargo

.PHONY: demo test test-rust lint zk-jars clean

demo:
	$(CARGO) run --quiet -p zkrecipes --example demo

test: lint test-rust

# Rust core: unit tests + integration tests against real ZooKeeper
# (standalone, 3-node ensemble, fault proxy, Apache's own recipes).
test-rust:
	$(CARGO) test --workspace -- --test-threads=4

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The ZooKeeper 3.9 server jars the harness runs (fetched on first use otherwise).
zk-jars:
	mvn -q -B -f tests/harness/pom.xml dependency:copy-dependencies -DoutputDirectory=$(CURDIR)/target/zk-jars

clean:
	$(CARGO) clean
