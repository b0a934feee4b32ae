"""A JSON-lines channel to the worker, read by a thread so every wait has a deadline."""

import queue
import threading

from .worker import protocol

EOF_MARK = object()
MAX_LINE = 4 * 1024 * 1024  # a worker line longer than this is a protocol error, not a memory problem


class ChannelTimeout(Exception):
    pass


class ProtocolError(Exception):
    pass


class Channel:
    def __init__(self, write, lines):
        """`write(bytes)` sends to the worker; `lines` yields the worker's stdout lines (bytes or str)."""
        self._write = write
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(lines,), daemon=True)
        self._thread.start()

    def _pump(self, lines):
        try:
            for line in lines:
                self._queue.put(line)
        except Exception as exc:  # the transport broke: surface it as the end of the stream
            self._queue.put(("error", f"{type(exc).__name__}: {exc}"))
        self._queue.put(EOF_MARK)

    def send(self, obj):
        self._write(protocol.encode(obj))

    def receive(self, timeout):
        """The next message, None at end of stream; ChannelTimeout if nothing came in time."""
        try:
            line = self._queue.get(timeout=max(0.0, timeout))
        except queue.Empty:
            raise ChannelTimeout()
        if line is EOF_MARK:
            self._queue.put(EOF_MARK)
            return None
        if isinstance(line, tuple):
            raise ProtocolError(f"the worker's output stream broke ({line[1]})")
        if isinstance(line, bytes):
            line = line.decode("utf-8", errors="replace")
        if len(line) > MAX_LINE:
            raise ProtocolError(f"a worker message of {len(line)} characters (limit {MAX_LINE})")
        try:
            return protocol.decode(line)
        except ValueError as exc:
            raise ProtocolError(f"the worker wrote a line that is not a protocol message ({exc}): {line[:120]!r}")


def split_lines(chunks):
    """Lines from a stream of text or byte chunks that may split or join lines."""
    buf = ""
    for chunk in chunks:
        buf += chunk.decode("utf-8", errors="replace") if isinstance(chunk, bytes) else chunk
        while "\n" in buf:
            line, buf = buf.split("\n", 1)
            if line.strip():
                yield line
    if buf.strip():
        yield buf
