"""A payload's output stream, written to its log file with a cap and without credentials: up
to half the cap is written as it arrives (the head); past that only the last half-cap bytes are
kept (the tail), written after a line saying how much was cut when the stream ends. Known
secrets are replaced even when split between two reads. A failed write (a full disk) stops the
writing, not the reading: the payload is never blocked on a pipe nobody drains.
"""

from __future__ import annotations

import os
import re
from collections import deque
from contextlib import suppress

_REDACTED = b"<redacted>"
_MAX_HOLD = 1 << 16    # never hold back more than this, whatever the stream looks like


class CappedLog:
    def __init__(self, fd: int, limit: int, secrets: list[bytes], pattern: re.Pattern[bytes]
                 | None = None) -> None:
        """`fd` is the open log file (owned from now on), `limit` the cap in bytes.
        `pattern` matches credential shapes to hide as well (bounded length)."""
        self.fd = fd
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.secrets = sorted(secrets, key=len, reverse=True)
        self.pattern = pattern
        self.hold = max([len(s) for s in secrets] + [1]) - 1
        self.pending = b""
        self.written = 0           # bytes the payload wrote
        self.in_head = 0
        self.tail: deque[bytes] = deque()
        self.tail_bytes = 0
        self.overflow = 0          # bytes past the head: the tail, and what was cut
        self.problem: str | None = None

    def feed(self, data: bytes) -> None:
        self.written += len(data)
        text = self.pending + data
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, _REDACTED)
        # Hold back the last bytes (a secret may be split across reads) and any credential
        # shape that reaches them (it may go on in the next read).
        cut = max(0, len(text) - self.hold)
        if self.pattern is not None:
            for match in self.pattern.finditer(text):
                if match.end() > cut or match.end() == len(text):
                    cut = min(cut, match.start()) if len(text) < _MAX_HOLD else cut
                    break
            self._keep(self.pattern.sub(_REDACTED, text[:cut]))
        else:
            self._keep(text[:cut])
        self.pending = text[cut:]

    def close(self) -> tuple[int, int, str | None]:
        """Flush what is held back, write the tail, close the file.
        Returns (bytes written by the payload, bytes kept in the file, problem or None)."""
        pending = self.pattern.sub(_REDACTED, self.pending) if self.pattern else self.pending
        self._keep(pending)
        self.pending = b""
        tail = b"".join(self.tail)[-self.tail_limit:] if self.tail_limit else b""
        cut = self.overflow - len(tail)
        if cut > 0:
            self._write(f"\n[aorta: {cut} bytes of output cut here; the log keeps its first "
                        f"{self.head_limit} and last {self.tail_limit} bytes (max_log_mib)]\n"
                        .encode())
        self._write(tail)
        with suppress(OSError):
            os.close(self.fd)
        return self.written, min(self.in_head + len(tail), self.written), self.problem

    def _keep(self, data: bytes) -> None:
        room = self.head_limit - self.in_head
        if room > 0:
            self._write(data[:room])
            self.in_head += min(room, len(data))
            data = data[room:]
        if not data:
            return
        self.overflow += len(data)
        self.tail.append(data)
        self.tail_bytes += len(data)
        while self.tail and self.tail_bytes - len(self.tail[0]) >= self.tail_limit:
            self.tail_bytes -= len(self.tail.popleft())

    def _write(self, data: bytes) -> None:
        if self.problem is not None or not data:
            return
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except OSError as exc:
            self.problem = exc.strerror or str(exc)   # "No space left on device"
