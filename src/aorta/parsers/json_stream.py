"""Streaming the elements of one JSON array out of a document of any size, and opening a file
only when it is a regular one. A Chrome trace (`{"traceEvents": [ {...}, ... ], ...}` or a bare
list) can be gigabytes and `json.load` holds about 5.7 times the file; here blocks are read and
each element is decoded alone by `json`'s C scanner, so memory is one block plus one element.
Damage to the JSON is reported, never raised (`ArrayStream.cut`, `ArrayStream.broken`). A gzip
file (`*.pt.trace.json.gz`) streams through `gzip` alike; one cut short reads as a cut file,
while damaged gzip data (a bad CRC, a broken block) raises ValueError where it is found, so the
caller can call the whole file unreadable. A flipped byte inside a block can instead surface
as broken JSON.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import json.scanner
import os
import re
import stat
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BLOCK_CHARS = 1 << 20              # characters decoded per read
MAX_ELEMENT_CHARS = 1 << 28        # one element (or other member) larger than this is garbage
_WS = re.compile(r"[ \t\n\r]*")
_NEAR_END = 32                     # a decoding error this close to the text's end may be a cut


def open_regular(path: Path, flags: int = 0) -> io.BufferedReader:
    """`path` opened for reading in binary, only if it is a regular file: a FIFO or a device
    could block the read forever. Raises OSError when it cannot be opened, ValueError when it
    is not a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path.name}: not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


@contextmanager
def open_trace(path: Path) -> Iterator[io.BufferedIOBase]:
    """`open_regular(path)`, decompressed when the file starts with gzip's magic bytes."""
    with open_regular(path) as fh:
        if fh.peek(2)[:2] != b"\x1f\x8b":
            yield fh
        else:
            with gzip.GzipFile(fileobj=fh, mode="rb") as unzipped:
                yield unzipped


class _Incomplete(Exception):
    """The text ends inside a value."""


class ArrayStream:
    """The elements of `key`'s array in a top-level object (or of a top-level array). Iterate
    `elements()` once; then `cut`, `broken` and `found` say how it ended."""

    def __init__(self, fh: io.BufferedIOBase, key: str, label: str) -> None:
        self.fh, self.key, self.label = fh, key, label
        self.text, self.pos, self.eof = "", 0, False
        self.offset = 0                 # characters dropped before `text`
        self.found = False              # the array was found
        self.cut = ""                   # how the document ended early, if it did
        self.broken = ""                # where it stops being JSON, if it does
        self.gzip_cut = False           # the gzip stream ended before its end marker
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._scan: Any = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[arg-type]

    def elements(self) -> Iterator[Any]:
        """Each element of the array, in order. Raises ValueError when the document is not an
        object or array, or has no `key` array (before yielding anything)."""
        first = self._next_char()
        if first == "[":
            self.found = True
            yield from self._array()
        elif first == "{":
            yield from self._object()
            if not self.found and not (self.cut or self.broken):
                raise ValueError(f"{self.label}: no {self.key} list")
        else:
            raise ValueError(f"{self.label}: not a JSON object or array "
                             f"(starts with {first[:1]!r})" if first else
                             f"{self.label}: {'gzip cut short' if self.gzip_cut else 'empty file'}")
        if not (self.cut or self.broken) and self._next_char():
            self.broken = f"text after the end of the JSON document at character {self._at()}"
        if self.gzip_cut and not self.cut:
            self.cut = "the gzip stream ends before its end marker: cut short"

    # --- the document's structure -----------------------------------------------------------

    def _object(self) -> Iterator[Any]:
        self.pos += 1
        if self._next_char() == "}":
            self.pos += 1
            return
        while True:
            char = self._next_char()
            key = self._value() if char == '"' else None
            if not char or key is _STOP:
                self.cut = self.cut or "the file ends inside the top-level object: cut short"
                return
            if not isinstance(key, str) or self._next_char() != ":":
                self._stop(f"a malformed member of the top-level object at character "
                           f"{self._at()}")
                return
            self.pos += 1
            if key == self.key and self._next_char() == "[":
                self.found = True
                yield from self._array()
            elif self._value() is _STOP:
                return
            if self.cut or self.broken or not self._separator("}", "the top-level object"):
                return

    def _array(self) -> Iterator[Any]:
        """The array's elements. The loop decodes straight from the buffer while a whole
        element lies in it (an element ending at the buffer's end might go on: read again)."""
        self.pos += 1
        if self._next_char() == "]":
            self.pos += 1
            return
        scan, blanks = self._scan, _WS.match
        while True:
            text, pos = self.text, self.pos
            try:
                element, end = scan(text, pos)
            except (StopIteration, ValueError):
                element, end = _STOP, len(text)
            if element is _STOP or (end >= len(text) and not self.eof):
                element = self._value()           # the slow way: read more, say why not
                if element is _STOP:
                    return
            else:
                self.pos = end
            yield element
            text = self.text
            pos = blanks(text, self.pos).end()  # type: ignore[union-attr]
            char = text[pos:pos + 1]
            if char == "," and pos + 1 < len(text):
                self.pos = blanks(text, pos + 1).end()  # type: ignore[union-attr]
                continue
            self.pos = pos
            if not self._separator("]", "the event list"):
                return
            self._next_char()

    def _separator(self, close: str, inside: str) -> bool:
        """Step past the comma after an element (True), or past `close` (False); anything else
        is noted as damage (False)."""
        char = self._next_char()
        if char in (",", close):
            self.pos += 1
            return char == ","
        if char:
            self._stop(f"{char!r} where a comma or {close} belongs at character {self._at()}")
        else:
            self.cut = f"the file ends inside {inside}: cut short"
        return False

    # --- values and the buffer --------------------------------------------------------------

    def _value(self) -> Any:
        """The JSON value at `pos` (reading more as needed), or _STOP after noting why."""
        self._next_char()
        want = BLOCK_CHARS
        while True:
            try:
                value, end = self._decode()
            except _Incomplete:
                if self.eof:
                    self.cut = "the file ends inside a value: cut short"
                    return _STOP
                if len(self.text) - self.pos > MAX_ELEMENT_CHARS:
                    self.broken = (f"a value longer than {MAX_ELEMENT_CHARS} characters at "
                                   f"character {self._at()}")
                    return _STOP
                want *= 2
                self._fill(want)
                continue
            except ValueError as exc:
                self._stop(f"not JSON at character {self._at()} ({exc})")
                return _STOP
            self.pos = end
            return value

    def _decode(self) -> tuple[Any, int]:
        """Decode at `pos`; _Incomplete when the text may simply end too soon (the error lies
        within a literal's length of its end, or a string is left open)."""
        near_end = len(self.text.rstrip()) - 5 if self.eof else len(self.text) - _NEAR_END
        try:
            found: tuple[Any, int] = self._scan(self.text, self.pos)
            return found
        except StopIteration as stop:
            if stop.value >= near_end:
                raise _Incomplete from None
            raise ValueError("expecting a value") from None
        except json.JSONDecodeError as exc:
            if exc.pos >= near_end or exc.msg.startswith("Unterminated string"):
                raise _Incomplete from None
            raise ValueError(exc.msg) from None
        except RecursionError:
            raise ValueError("nested too deeply") from None

    def _next_char(self) -> str:
        """The next character after blanks ('' at the end of the file), not consumed."""
        while True:
            self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text) or self.eof:
                return self.text[self.pos:self.pos + 1]
            self._fill(BLOCK_CHARS)

    def _fill(self, want: int) -> None:
        """Read until `want` characters lie ahead of `pos`, or the file ends."""
        if self.pos:
            self.offset += self.pos
            self.text, self.pos = self.text[self.pos:], 0
        parts = [self.text]
        have = len(self.text)
        while have < want and not self.eof:
            try:
                block = self.fh.read1(BLOCK_CHARS)   # read1: what came before an error stays
            except EOFError:        # gzip: the compressed stream ends early
                block, self.gzip_cut = b"", True
            except (gzip.BadGzipFile, zlib.error) as exc:
                raise ValueError(f"{self.label}: damaged gzip data ({exc}); the trace cannot "
                                 f"be read, export it again") from None
            try:
                chunk = self._utf8.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                raise ValueError(f"{self.label}: not UTF-8 text ({exc.reason} near byte "
                                 f"{self.fh.tell()})") from None
            self.eof = not block
            parts.append(chunk)
            have += len(chunk)
        self.text = "".join(parts)

    def _stop(self, why: str) -> None:
        self.broken = self.broken or why

    def _at(self) -> int:
        return self.offset + self.pos


_STOP: Any = object()
