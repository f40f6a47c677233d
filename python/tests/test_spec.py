"""The behaviour specs of tests/spec, run against the installed wheel: every scenario is a test.
The format and the calls are in tests/spec/README.md; the Node.js, Java and Kotlin runners run
the same files."""

from __future__ import annotations

import dataclasses
import os
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional

import pytest

import zkrecipes
from zkrecipes import ZkError

SPECS = Path(os.environ.get("ZKRECIPES_SPECS", Path(__file__).resolve().parents[2] / "tests" / "spec"))
WAIT = 10.0  # the seconds an `acquire` or `await_leadership` waits


class Step(NamedTuple):
    line: int
    words: List[str]
    expected: Optional[str]


class Scenario(NamedTuple):
    file: str
    name: str
    steps: List[Step]
    only: List[str]


def scenarios() -> List[Scenario]:
    found: List[Scenario] = []
    for spec in sorted(SPECS.glob("*.spec")):
        for number, raw in enumerate(spec.read_text().splitlines(), 1):
            text = raw.split("#", 1)[0].strip()
            if not text:
                continue
            if text.startswith("scenario "):
                found.append(Scenario(spec.stem, text[len("scenario ") :], [], []))
                continue
            if text.startswith("only "):
                found[-1].only.extend(text.split()[1:])
                continue
            call, _, expected = text.partition("=>")
            found[-1].steps.append(Step(number, call.split(), expected.strip() or None))
    return [s for s in found if not s.only or "python" in s.only]


def mutated(expected: Optional[str]) -> Optional[str]:
    """`ZKRECIPES_SPEC_MUTATE=1`: a wrong expectation, to show the runner can fail."""
    return "false" if expected == "true" and os.environ.get("ZKRECIPES_SPEC_MUTATE") else expected


def shown(value: Any) -> str:
    """A result as the spec writes it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, zkrecipes.Updated):
        return str(value.post_value)
    return str(value)


def joined(ids: Any) -> str:
    return ",".join(sorted(ids))


class Runner:
    def __init__(self, connect: str, root: str) -> None:
        self.connect = connect
        self.root = root
        self.clients: Dict[str, zkrecipes.Client] = {}
        self.objects: Dict[str, Any] = {}
        self.kinds: Dict[str, str] = {}
        self.kept: Dict[str, List[Any]] = {}  # leases, jobs: what a later call releases

    def path(self, word: str) -> str:
        return word[1:] if word.startswith("=") else f"{self.root}/{word}"

    def make(self, client: zkrecipes.Client, kind: str, path: str, args: List[str]) -> Any:
        makers: Dict[str, Callable[[], Any]] = {
            "lock": lambda: client.write_lock(path),
            "multi_lock": lambda: client.multi_lock([path] + [self.path(word) for word in args]),
            "read_lock": lambda: client.read_write_lock(path).read_lock(),
            "write_lock": lambda: client.read_write_lock(path).write_lock(),
            "queue": lambda: client.queue(path),
            "atomic_long": lambda: client.atomic_long(path),
            "shared_count": lambda: client.shared_count(path, int(args[0])),
            "semaphore": lambda: client.semaphore(path, int(args[0])),
            "latch": lambda: client.leader_latch(path),
            "barrier": lambda: client.barrier(path),
            "double_barrier": lambda: client.double_barrier(path, int(args[0])),
            "work_queue": lambda: client.work_queue(path),
            "election": lambda: client.leader_election(path, args[0]),
            "persistent_node": lambda: client.persistent_node(path, args[1].encode(), args[0]),
            "node_cache": lambda: client.node_cache(path),
            "group_member": lambda: client.group_member(path, args[0], args[1].encode()),
            "service_discovery": lambda: client.service_discovery(path),
        }
        return makers[kind]()

    def keep(self, name: str, thing: Any) -> bool:
        if thing is not None:
            self.kept.setdefault(name, []).append(thing)
        return thing is not None

    def call(self, name: str, verb: str, args: List[str]) -> Any:
        obj = self.objects[name]
        kept = self.kept.setdefault(name, [])
        lock = {
            "acquire": lambda: obj.acquire(timeout=WAIT),
            "try_acquire": lambda: obj.acquire(blocking=False),
            "release": lambda: obj.release(),
            "held": lambda: obj.is_held,
        }
        calls: Dict[str, Dict[str, Callable[[], Any]]] = {
            "lock": lock,
            "multi_lock": lock,
            "read_lock": lock,
            "write_lock": lock,
            "queue": {"offer": lambda: obj.offer(args[0].encode()), "poll": lambda: obj.poll(), "size": lambda: obj.size()},
            "atomic_long": {
                "get": lambda: obj.get(),
                "increment": lambda: obj.increment(),
                "add": lambda: obj.add(int(args[0])),
                "compare_and_set": lambda: obj.compare_and_set(int(args[0]), int(args[1])),
            },
            "shared_count": {
                "start": lambda: obj.start(),
                "get": lambda: obj.get(),
                "set": lambda: obj.set(int(args[0])),
                "close": lambda: obj.close(),
            },
            "semaphore": {
                "acquire": lambda: self.keep(name, obj.acquire(timeout=WAIT)),
                "try_acquire": lambda: self.keep(name, obj.acquire(blocking=False)),
                "release": lambda: kept.pop(0).release(),
                "held": lambda: obj.held,
            },
            "latch": {
                "start": lambda: obj.start(),
                "await_leadership": lambda: obj.await_leadership(timeout=WAIT) is not None,
                "has_leadership": lambda: obj.has_leadership(),
                "close": lambda: obj.close(),
            },
            "barrier": {
                "set": lambda: obj.set(),
                "remove": lambda: obj.remove(),
                "is_set": lambda: obj.is_set(),
                "wait": lambda: obj.wait(timeout=0),
            },
            "double_barrier": {
                "enter": lambda: obj.enter(timeout=WAIT),
                "try_enter": lambda: obj.enter(timeout=0),
                "leave": lambda: obj.leave(timeout=WAIT),
            },
            "work_queue": {
                "offer": lambda: obj.offer(args[0].encode()),
                "consume": lambda: self.kept_data(name, obj.consume(timeout=WAIT)),
                "try_consume": lambda: self.kept_data(name, obj.consume(timeout=0)),
                "ack": lambda: kept.pop(0).ack(),
                "nack": lambda: kept.pop(0).nack(),
                "size": lambda: obj.size(),
            },
            "election": {
                "start": lambda: obj.start(),
                "await_leadership": lambda: obj.await_leadership(timeout=WAIT),
                "is_leader": lambda: obj.is_leader(),
                "stop": lambda: obj.stop(),
            },
            "persistent_node": {"start": lambda: obj.start(), "close": lambda: obj.close()},
            "node_cache": {
                "start": lambda: obj.start(),
                "data": lambda: None if obj.get(obj.path) is None else obj.get(obj.path).data,
                "close": lambda: obj.close(),
            },
            "group_member": {
                "start": lambda: obj.start(),
                "members": lambda: joined(obj.members()),
                "close": lambda: obj.close(),
            },
            "service_discovery": {
                "register": lambda: obj.register(
                    zkrecipes.ServiceInstance(args[0], id=args[1], port=int(args[2]), service_type=args[3])
                ),
                "update": lambda: obj.update(self.registered_instance(obj, args[0], args[1], port=int(args[2]))),
                "unregister": lambda: obj.unregister(zkrecipes.ServiceInstance(args[0], id=args[1])),
                "registered": lambda: any((i.name, i.id) == (args[0], args[1]) for i in obj.registered()),
                "names": lambda: joined(obj.query_for_names()) or None,
                "ids": lambda: joined(i.id for i in obj.query_for_instances(args[0])) or None,
                "port": lambda: getattr(obj.query_for_instance(args[0], args[1]), "port", None),
                "close": lambda: obj.close(),
            },
        }
        return calls[self.kinds[name]][verb]()

    @staticmethod
    def registered_instance(registry: Any, name: str, id: str, **changes: Any) -> Any:
        """The instance `registry` keeps as `name`'s `id` with `changes` (a new one if it keeps none)."""
        kept = [i for i in registry.registered() if (i.name, i.id) == (name, id)]
        return dataclasses.replace(kept[0] if kept else zkrecipes.ServiceInstance(name, id=id), **changes)

    def kept_data(self, name: str, job: Any) -> Any:
        return job.data if self.keep(name, job) else None

    def step(self, step: Step) -> None:
        words = step.words
        if words[0] == "client":
            self.clients[words[1]] = zkrecipes.Client(self.connect)
            return
        actor, verb, args = words[0], words[1], words[2:]
        expected = mutated(step.expected)
        try:
            if actor in self.clients and verb == "close":
                result: Any = self.clients[actor].close()
            elif actor in self.clients:
                self.kinds[args[0]] = verb
                self.objects[args[0]] = self.make(self.clients[actor], verb, self.path(args[1]), args[2:])
                result = None
            else:
                result = self.call(actor, verb, args)
        except ZkError as err:
            assert expected == f"error {err.code}", f"line {step.line}: {' '.join(words)} raised {err!r}"
            return
        if expected is not None:
            got = "ok" if expected == "ok" else shown(result)
            assert got == expected, f"line {step.line}: {' '.join(words)} gave {got}, not {expected}"

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


@pytest.mark.parametrize("scenario", scenarios(), ids=lambda s: f"{s.file}: {s.name}")
def test_spec(scenario: Scenario, zk_connect: str) -> None:
    runner = Runner(zk_connect, f"/spec-{uuid.uuid4().hex[:12]}")
    try:
        for step in scenario.steps:
            runner.step(step)
    finally:
        runner.close()
