"""Starts the cross-language agents (agent.py, agent.js, Agent.java, CrossAgent.kt) and talks to
them: one command line, one reply line, every read with a deadline.

Runs in the test virtualenv (the installed wheel); the Node agent runs from the test project that
installed the npm tarball, the Java agent with the JAR on a plain classpath, the Kotlin agent with
the Kotlin JAR and its three dependencies (kotlin-stdlib, kotlinx-coroutines, JNA) on a plain
classpath. Paths come from NODE_PROJECT, ZKRECIPES_JAR and ZKRECIPES_KOTLIN_CP.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
import time
from typing import Dict, Iterable, Optional

HERE = Path(__file__).resolve().parent
LANGS = ["python", "node", "java", "kotlin"]


class Agent:
    """One agent process; `zk` defaults to ZK_CONNECT, `secure` adds to its environment
    (ZKRECIPES_AGENT_CA/CERT/KEY, ZKRECIPES_AGENT_USER/PASSWORD, ZKRECIPES_AGENT_SESSION_TIMEOUT)."""

    def __init__(self, lang: str, zk: Optional[str] = None, secure: Optional[Dict[str, str]] = None) -> None:
        self.lang = lang
        zk = zk if zk is not None else os.environ["ZK_CONNECT"]
        env = {**os.environ, **(secure or {})}
        if lang == "python":
            cmd = [sys.executable, str(HERE / "agent.py"), zk]
        elif lang == "node":
            cmd = ["node", str(HERE / "agent.js"), zk]
            # The package as installed from the npm tarball into the test project.
            env["NODE_PATH"] = str(Path(os.environ["NODE_PROJECT"]) / "node_modules")
        elif lang == "java":
            cmd = ["java", "-cp", os.environ["ZKRECIPES_JAR"], str(HERE / "Agent.java"), zk]
        else:
            cmd = ["java", "-cp", os.environ["ZKRECIPES_KOTLIN_CP"], "io.zkrecipes.kotlin.CrossAgent", zk]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.lines: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 30.0) -> str:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"{self.lang} agent did not answer within {timeout} s") from None

    def ask(self, line: str, timeout: float = 30.0) -> str:
        self.send(line)
        return self.reply(timeout)

    def maybe_reply(self, timeout: float) -> Optional[str]:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        try:
            self.send("quit")
            self.proc.wait(timeout=15)
        except Exception:
            self.proc.kill()
            self.proc.wait(timeout=15)


def close_all(agents: Iterable[Agent], timeout: float = 15.0) -> None:
    """Asks every agent to quit at once, then kills the ones still running after `timeout` (one
    blocked in a command, a waiter's lock say, reads no more commands)."""
    agents = list(agents)
    for agent in agents:
        try:
            agent.send("quit")
        except OSError:
            pass
    deadline = time.monotonic() + timeout
    for agent in agents:
        try:
            agent.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            agent.proc.kill()
            agent.proc.wait(timeout=15)
