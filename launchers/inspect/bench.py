"""`make bench-inspect`: the measured peak memory of `fundbook inspect import`, `fundbook inspect verify` and the
`inspect:` sweep arm, each in a fresh process, on normal logs and on hostile ones built here at the limits
(printed, never asserted: tests/inspect/test_memory.py asserts the 512 MiB bound on the same builders).

Peak memory is the largest resident set of the command and everything it waited for (its Pyodide runtime
included): getrusage(RUSAGE_CHILDREN).ru_maxrss of a small wrapper process that runs only that command.

Hostile logs (each a few KB to a few MB on disk):
  zstd-bomb      a member declaring 4 KiB whose zstd data expands to 1 GiB
  deflate-bomb   the same in deflate (about 1 MB of compressed zeros)
  lzma, bz2      a bzip2 or lzma member (Inspect's zipfile reads neither: refused before any decompression)
  eval-at-limit  a .eval whose members unpack to just under the limit (one model answer inflated)
  json-at-limit  a .json log just under the file size limit (one model answer inflated)
"""

import argparse
import bz2
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib

from builders import inspect_format as F

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE_LOG = os.path.join(REPO, "tests", "inspect", "data", "smollm2-FUND_03-seed-1.eval")
WORLD = ("FUND_03", 1)  # the base log's world
_WRAP = (
    "import json, resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(json.dumps({'rc': done.returncode, 'out': done.stdout[-2000:], 'err': done.stderr[-2000:],\n"
    "                  'peak_kib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n"
)


def measure(cmd, cwd=REPO) -> dict:
    """{rc, out, err, peak_mib, seconds} of one command run alone in a fresh wrapper process."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", _WRAP, *cmd], capture_output=True, text=True, cwd=cwd)
    got = json.loads(done.stdout)
    got["peak_mib"] = got.pop("peak_kib") / 1024
    got["seconds"] = time.monotonic() - started
    return got


# -- building logs ------------------------------------------------------------------------------------------------------
def raw_zip(entries, flags=0) -> bytes:
    """A zip of [(name, method, raw compressed bytes, crc, declared size)], declared as given (a lie included)."""
    body, central = bytearray(), bytearray()
    for name, method, raw, crc, size in entries:
        at, n = len(body), name.encode()
        version = 63 if method == 93 else 20
        body += struct.pack("<4s5H3L2H", b"PK\x03\x04", version, flags, method, 0, 33, crc, len(raw), size, len(n), 0)
        body += n + raw
        central += (
            struct.pack(
                "<4s6H3L5H2L",
                b"PK\x01\x02",
                20,
                version,
                flags,
                method,
                0,
                33,
                crc,
                len(raw),
                size,
                len(n),
                0,
                0,
                0,
                0,
                0,
                at,
            )
            + n
        )
    return bytes(
        body
        + central
        + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(body), 0)
    )


def base_members(path=BASE_LOG) -> list:
    """[(name, bytes)] of a trusted log (the kept real run), read with Inspect's own zip support."""
    import zipfile
    import inspect_ai._util.zipfile  # noqa: F401  (zstd in zipfile)

    with zipfile.ZipFile(path) as archive:
        return [(i.filename, archive.read(i)) for i in archive.infolist()]


def _zstd(data) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor(level=3).compress(data)


def _zstd_stream(pattern, total) -> bytes:
    """zstd of `total` bytes of `pattern` repeated, compressed a chunk at a time (never all in memory)."""
    import zstandard

    c = zstandard.ZstdCompressor(level=19).compressobj()
    chunk, out, left = pattern * ((16 << 20) // len(pattern)), [], total
    while left > 0:
        out.append(c.compress(chunk[: min(left, len(chunk))]))
        left -= min(left, len(chunk))
    out.append(c.flush())
    return b"".join(out)


def zipped(members, method=93) -> bytes:
    """A well-formed zip (honest sizes) of [(name, bytes)], every member compressed with `method`."""
    entries = []
    for name, data in members:
        raw = _zstd(data) if method == 93 else (data if method == 0 else _deflate(data))
        entries.append((name, method, raw, zlib.crc32(data), len(data)))
    return raw_zip(entries)


def _deflate(data) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def bomb(kind) -> bytes:
    """A .eval whose header.json declares 4 KiB and expands far past it (or asks for a huge window)."""
    declared = 4096
    members = [(n, d) for n, d in base_members() if n != "header.json"]
    if kind == "zstd":
        raw, method = _zstd_stream(b"\0", 1 << 30), 93
    elif kind == "deflate":
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        raw, method = b"".join(c.compress(b"\0" * (16 << 20)) for _ in range(64)) + c.flush(), 8
    elif kind == "bz2":
        c = bz2.BZ2Compressor(9)
        raw, method = b"".join(c.compress(b"\0" * (16 << 20)) for _ in range(16)) + c.flush(), 12
    elif kind == "window":  # a zstd frame that asks for a 2 GiB window (no content size, so no smaller one)
        import zstandard

        params = zstandard.ZstdCompressionParameters.from_level(
            3, window_log=31, enable_ldm=True, write_content_size=False
        )
        c = zstandard.ZstdCompressor(compression_params=params).compressobj()
        raw, method = c.compress(b"x" * 4096) + c.flush(), 93
    else:  # lzma: Inspect's zipfile cannot read it at all
        raw, method = struct.pack("<BBH", 9, 20, 5) + bytes([0x5D]) + struct.pack("<L", 3 << 29) + b"\0" * 64, 14
    entries = [(n, 93, _zstd(d), zlib.crc32(d), len(d)) for n, d in members]
    return raw_zip([("header.json", method, raw, 0, declared)] + entries)


def inflated_sample(size) -> list:
    """The base log's members with its first model answer grown to `size` bytes of text (still valid JSON)."""
    out = []
    for name, data in base_members():
        if name.startswith("samples/"):
            doc = json.loads(data)
            first = next(m for m in doc["messages"] if m["role"] == "assistant")
            pad = size - len(data)
            first["content"] = (first["content"] if isinstance(first["content"], str) else "") + "x" * max(0, pad)
            data = json.dumps(doc).encode()
        out.append((name, data))
    return out


def eval_at_limit() -> bytes:
    """A .eval whose members unpack to just under MAX_UNPACKED_BYTES: valid for Inspect, refused by the importer
    (a model answer over MAX_MESSAGE_BYTES) only once Inspect has parsed all of it."""
    rest = sum(len(d) for n, d in base_members() if not n.startswith("samples/"))
    return zipped(inflated_sample(F.MAX_UNPACKED_BYTES - rest - 4096))


def json_at_limit(tmp) -> bytes:
    """The base log as a .json log of just under MAX_LOG_BYTES (one model answer inflated)."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(BASE_LOG)
    path = os.path.join(tmp, "base.json")
    write_eval_log(log, path, format="json")
    size = os.path.getsize(path)
    first = next(m for m in log.samples[0].messages if m.role == "assistant")
    first.content = first.text + "x" * (F.MAX_LOG_BYTES - size - 4096)
    write_eval_log(log, path, format="json")
    with open(path, "rb") as fh:
        return fh.read()


HOSTILE = {
    "zstd-bomb": lambda tmp: bomb("zstd"),
    "deflate-bomb": lambda tmp: bomb("deflate"),
    "zstd-window": lambda tmp: bomb("window"),
    "bz2-bomb": lambda tmp: bomb("bz2"),
    "eval-at-limit": lambda tmp: eval_at_limit(),
    "json-at-limit": json_at_limit,
}


def write_case(tmp, name) -> str:
    path = os.path.join(tmp, f"{name}.{'json' if name.startswith('json') else 'eval'}")
    with open(path, "wb") as fh:
        fh.write(HOSTILE[name](tmp))
    return path


def hand_placed(tmp, log_path) -> str:
    """An attempts folder holding an Inspect record (the published one's) whose kept log is `log_path`'s bytes under
    its own extension: what `fundbook inspect verify` re-imports."""
    import glob
    import shutil

    src = sorted(glob.glob(os.path.join(REPO, "runs", "attempts", "inspect-*")))[0]
    attempts = os.path.join(tmp, f"attempts-{os.path.basename(log_path)}")
    folder = os.path.join(attempts, os.path.basename(src))
    shutil.copytree(src, folder)
    with open(os.path.join(folder, "record.json"), encoding="utf-8") as fh:
        rec = json.load(fh)
    kept = rec["content"]["inspect"]["log"]["path"]
    os.unlink(os.path.join(folder, kept))
    kept = kept.rsplit(".", 1)[0] + os.path.splitext(log_path)[1]
    rec["content"]["inspect"]["log"]["path"] = kept
    with open(os.path.join(folder, "record.json"), "w", encoding="utf-8") as fh:
        json.dump(rec, fh)
    shutil.copyfile(log_path, os.path.join(folder, kept))
    return attempts


# -- the three commands ---------------------------------------------------------------------------------------------------
def fundbook():
    return os.path.join(os.path.dirname(sys.executable), "fundbook")


def run_import(log, tmp):
    return measure([fundbook(), "inspect", "import", log, "--attempts", os.path.join(tmp, "imported")])


def run_verify(attempts):
    return measure([fundbook(), "inspect", "verify", "--attempts", attempts])


def run_arm(log, tmp, world=WORLD):
    return measure(
        [
            fundbook(),
            "sweep",
            "--out",
            os.path.join(tmp, f"sweep-{os.path.basename(log)}"),
            "--family",
            world[0],
            "--seeds",
            str(world[1]),
            "--arm",
            f"a=inspect:{log}",
            "--pyodide-sample",
            "0",
            "--no-progress",
        ]
    )


def _row(case, command, got):
    line = (got["err"] or got["out"]).strip().splitlines()
    print(
        f"{case:<15} {command:<8} peak {got['peak_mib']:7.1f} MiB  {got['seconds']:6.1f} s  exit {got['rc']}  "
        f"{(line[-1] if line else '')[:110]}"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the zstd bomb and the normal log only")
    args = parser.parse_args(argv)
    print(
        f"limits: log {F.MAX_LOG_BYTES} bytes, unpacked {F.MAX_UNPACKED_BYTES} bytes, message "
        f"{F.MAX_MESSAGE_BYTES} bytes; load average {os.getloadavg()[0]:.2f}"
    )
    cases = ["zstd-bomb"] if args.quick else list(HOSTILE)
    with tempfile.TemporaryDirectory(prefix="fundbook-bench-inspect-") as tmp:
        got = run_import(BASE_LOG, tmp)
        _row("normal", "import", got)
        _row("normal", "verify", run_verify(os.path.join(tmp, "imported")))
        _row("normal", "arm", run_arm(BASE_LOG, tmp))
        for case in cases:
            path = write_case(tmp, case)
            print(f"{case}: {os.path.getsize(path)} bytes on disk")
            _row(case, "import", run_import(path, tmp))
            _row(case, "verify", run_verify(hand_placed(tmp, path)))
            _row(case, "arm", run_arm(path, tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
