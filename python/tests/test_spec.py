"""The behaviour specs of tests/spec, run against the installed wheel: every scenario is a test.
The format and the calls are in tests/spec/README.md; the Node.js, Java and Kotlin runners run
the same files."""

from __future__ import annotations

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


def scenarios() -> List[Scenario]:
    found: List[Scenario] = []
    for spec in sorted(SPECS.glob("*.spec")):
        for number, raw in enumerate(spec.read_text().splitlines(), 1):
            text = raw.split("#", 1)[0].strip()
            if not text:
                continue
            if text.startswith("scenario "):
                found.append(Scenario(spec.stem, text[len("scenario ") :], []))
                continue
            call, _, expected = text.partition("=>")
            found[-1].steps.append(Step(number, call.split(), expected.strip() or None))
    return found


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


class Runner:
    def __init__(self, connect: str, root: str) -> None:
        self.connect = connect
        self.root = root
        self.clients: Dict[str, zkrecipes.Client] = {}
        self.objects: Dict[str, Any] = {}
        self.leases: Dict[str, List[zkrecipes.Lease]] = {}

    def path(self, word: str) -> str:
        return word[1:] if word.startswith("=") else f"{self.root}/{word}"

    def make(self, client: zkrecipes.Client, kind: str, path: str, args: List[str]) -> Any:
        makers: Dict[str, Callable[[], Any]] = {
            "lock": lambda: client.write_lock(path),
            "read_lock": lambda: client.read_write_lock(path).read_lock(),
            "write_lock": lambda: client.read_write_lock(path).write_lock(),
            "queue": lambda: client.queue(path),
            "atomic_long": lambda: client.atomic_long(path),
            "shared_count": lambda: client.shared_count(path, int(args[0])),
            "semaphore": lambda: client.semaphore(path, int(args[0])),
            "latch": lambda: client.leader_latch(path),
        }
        return makers[kind]()

    def call(self, name: str, obj: Any, verb: str, args: List[str]) -> Any:
        if isinstance(obj, zkrecipes.Semaphore):
            leases = self.leases.setdefault(name, [])
            if verb == "try_acquire":
                lease = obj.acquire(blocking=False)
                if lease is not None:
                    leases.append(lease)
                return lease is not None
            if verb == "release":
                return leases.pop(0).release()
            if verb == "held":
                return obj.held
        calls: Dict[str, Callable[[], Any]] = {
            "acquire": lambda: obj.acquire(timeout=WAIT),
            "try_acquire": lambda: obj.acquire(blocking=False),
            "release": lambda: obj.release(),
            "held": lambda: obj.is_held,
            "offer": lambda: obj.offer(args[0].encode()),
            "poll": lambda: obj.poll(),
            "size": lambda: obj.size(),
            "get": lambda: obj.get(),
            "increment": lambda: obj.increment(),
            "add": lambda: obj.add(int(args[0])),
            "compare_and_set": lambda: obj.compare_and_set(int(args[0]), int(args[1])),
            "set": lambda: obj.set(int(args[0])),
            "start": lambda: obj.start(),
            "close": lambda: obj.close(),
            "await_leadership": lambda: obj.await_leadership(timeout=WAIT) is not None,
            "has_leadership": lambda: obj.has_leadership(),
        }
        return calls[verb]()

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
                self.objects[args[0]] = self.make(self.clients[actor], verb, self.path(args[1]), args[2:])
                result = None
            else:
                result = self.call(actor, self.objects[actor], verb, args)
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
