"""A Ray cluster on this machine: a head node and worker nodes, as `ray start` starts them on several hosts.

Each node is a `ray start --block` process in a process group of its own, with ports and a temporary folder of
the cluster's own, so that two clusters on one machine do not clash, a node can be killed as a host dies
(`kill`), and the cluster is torn down with its process groups, never by `ray stop` (which stops every Ray
process of the machine); a SIGTERM to the process that started it tears it down too. For the tests,
`benchmarks/bench_cluster.py`, and trying `lift explore --cluster` on one host.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from lift.errors import LiftError
from lift.explore.cluster import listening

OBJECT_STORE_BYTES = 100 << 20
WORKER_PORTS = 24  # the node's worker processes, one port each
_NODE_PORTS = ("node-manager", "object-manager", "metrics-export", "dashboard-agent-listen", "dashboard-agent-grpc",
               "runtime-env-agent")
# A node that misses three health checks a second apart is dead (Ray's default takes about 15 s): the nodes
# share this machine, so a dead one is known sooner.
HEALTH_CHECK = {"RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "3",
                "RAY_USAGE_STATS_ENABLED": "0"}


class LocalClusterError(LiftError):
    """The local Ray cluster did not come up."""


class LocalCluster:
    """A head and `workers` worker nodes of `cpus` CPUs each on this machine, for as long as the context lasts;
    the context is connected to it (`ray.init`) once every node is up."""

    def __init__(self, workers: int = 1, cpus: int = 1, timeout_s: float = 60.0):
        self.workers, self.cpus, self.timeout_s = workers, cpus, timeout_s
        self.root = Path(tempfile.mkdtemp(prefix="lray", dir="/tmp"))  # short: Ray's socket paths are under it
        self.ports = iter(_free_ports((1 + workers) * (len(_NODE_PORTS) + WORKER_PORTS) + 3))
        self.port = next(self.ports)
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: list = []
        self.terminate = None

    def __enter__(self) -> "LocalCluster":
        if threading.current_thread() is threading.main_thread():
            self.terminate = signal.signal(signal.SIGTERM, _exit_on_signal)  # a killed test still tears it down
        try:
            self._node("--head", f"--port={self.port}", f"--ray-client-server-port={next(self.ports)}",
                       f"--dashboard-port={next(self.ports)}", "--include-dashboard=false", f"--temp-dir={self.root}")
            for _ in range(self.workers):
                self._node(f"--address={self.address}")
            self._connect()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _node(self, *options: str) -> None:
        ports = [f"--{name}-port={next(self.ports)}" for name in _NODE_PORTS]
        workers = ",".join(str(next(self.ports)) for _ in range(WORKER_PORTS))
        command = [str(Path(sys.executable).with_name("ray")), "start", "--block", f"--num-cpus={self.cpus}",
                   f"--object-store-memory={OBJECT_STORE_BYTES}", "--disable-usage-stats", "--include-log-monitor=false",
                   *ports, f"--worker-port-list={workers}", *options]
        log = open(self.root / f"node{len(self.nodes)}.log", "wb")
        self.nodes.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                           env={**os.environ, **HEALTH_CHECK}))
        log.close()

    def _connect(self) -> None:
        import ray

        deadline = time.monotonic() + self.timeout_s
        while True:
            if not ray.is_initialized() and listening("127.0.0.1", self.port, 1.0):
                try:
                    ray.init(address=self.address, logging_level="ERROR", log_to_driver=False,
                             configure_logging=False)
                except (ConnectionError, RuntimeError):
                    pass
            if ray.is_initialized() and sum(n["Alive"] for n in ray.nodes()) == len(self.nodes):
                return
            dead = [i for i, p in enumerate(self.nodes) if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                log = (self.root / f"node{dead[0] if dead else 0}.log").read_text(errors="replace")[-2000:]
                raise LocalClusterError(f"the local Ray cluster did not start ({len(self.nodes)} nodes): {log}")
            time.sleep(0.5)

    def kill(self, node: int) -> None:
        """Kill node `node` (0 is the head) and every process it started at once, as a host that dies."""
        _signal_group(self.nodes[node], signal.SIGKILL)

    def stop(self) -> None:
        """Disconnect, stop every node (their process groups), and remove the temporary folder."""
        if "ray" in sys.modules and sys.modules["ray"].is_initialized():
            sys.modules["ray"].shutdown()
        for node in reversed(self.nodes):
            _signal_group(node, signal.SIGTERM)
        for node in self.nodes:
            try:
                node.wait(3)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(node, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)
        if self.terminate is not None:
            signal.signal(signal.SIGTERM, self.terminate)
            self.terminate = None


def _exit_on_signal(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def _free_ports(n: int) -> list:
    """`n` distinct ports free now (bound together, then released)."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()

