"""Start a game server image with the Docker SDK for Python, for ``from_docker_image``.

By default the container's port is published on a free port of 127.0.0.1; with
``host_network=True`` the container shares the host's network and listens on a free port
itself. The container is stopped and removed by ``RunningContainer.stop``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clients.errors import ConnectError
from clients.local_server import free_port, wait_healthy

CONTAINER_PORT = 8000
"""Port the arenagym image listens on (``ARENAGYM_PORT``)."""


@dataclass
class RunningContainer:
    container: Any
    url: str

    def stop(self) -> None:
        try:
            self.container.stop(timeout=10)
        finally:
            self.container.remove(force=True)


def start_container(
    image: str,
    *,
    host_network: bool = False,
    container_port: int = CONTAINER_PORT,
    environment: dict[str, str] | None = None,
    startup_timeout: float = 60.0,
) -> RunningContainer:
    """Run ``image`` detached and wait until ``/health`` answers."""
    try:
        import docker
    except ImportError:
        raise ConnectError("from_docker_image needs the Docker SDK: pip install docker") from None
    try:
        engine = docker.from_env()
    except docker.errors.DockerException as error:
        raise ConnectError(f"Docker is not usable here: {error}") from None
    port = free_port()
    env = dict(environment or {})
    options: dict[str, Any] = {"detach": True, "environment": env}
    if host_network:
        env["ARENAGYM_PORT"] = str(port)
        env.setdefault("ARENAGYM_HOST", "127.0.0.1")
        options["network_mode"] = "host"
    else:
        env.setdefault("ARENAGYM_PORT", str(container_port))
        env.setdefault("ARENAGYM_HOST", "0.0.0.0")
        options["ports"] = {f"{container_port}/tcp": ("127.0.0.1", port)}
    container = engine.containers.run(image, **options)
    running = RunningContainer(container, f"http://127.0.0.1:{port}")
    try:
        _wait_healthy(running, startup_timeout)
    except BaseException:
        running.stop()
        raise
    return running


def _wait_healthy(running: RunningContainer, timeout: float) -> None:
    def exited() -> str | None:
        running.container.reload()
        if running.container.status != "exited":
            return None
        return running.container.logs(tail=20).decode(errors="replace")

    wait_healthy(running.url, timeout, exited)
