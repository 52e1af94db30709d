"""Peak GPU memory of this machine's visible GPU while a block runs, read from ``nvidia-smi``
(so a subprocess's memory counts too); ``None`` where there is no GPU."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from typing import Any


class GpuMemory:
    """Polls ``nvidia-smi`` every ``interval`` seconds; ``peak_mib`` after the block."""

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval
        self.peak_mib: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"
        self._command = [
            "nvidia-smi",
            "--query-gpu=memory.used",
            "--format=csv,noheader,nounits",
            "-i",
            visible,
        ]

    def _read(self) -> int | None:
        try:
            text = subprocess.run(
                self._command, capture_output=True, text=True, timeout=10, check=True
            ).stdout
            return int(text.strip().splitlines()[0])
        except (OSError, subprocess.SubprocessError, ValueError, IndexError):
            return None

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            used = self._read()
            if used is not None:
                self.peak_mib = max(self.peak_mib or 0, used)

    def __enter__(self) -> GpuMemory:
        if shutil.which("nvidia-smi"):
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
