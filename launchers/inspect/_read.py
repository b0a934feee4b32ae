"""Reading an Inspect log with hard limits, before and while Inspect's own reader parses it.

A .eval log is a zip whose members Inspect decompresses with zipfile (zstd patched in, which also leaves it
only stored, deflate and zstd). Python's zipfile stops at a member's declared size, but Inspect's zstd
decompressor expands a whole compressed chunk first: a member of a few KB that declares a few KB can expand to
gigabytes in one call. So every member of a .eval log is first decompressed here, in bounded steps (at most
1 MiB of output at a time, the zstd window capped), and any other compression refused: it must expand to
exactly its declared size and CRC, and all of them together to at most MAX_UNPACKED_BYTES. Only then does Inspect read it, from a private copy of the bytes checked here (the
file cannot change in between), each member now bounded by the size it was measured at.

A URL in the eval's header that holds a credential (user:password@, a secret query parameter) is replaced by
REDACTED in the bytes that are kept and published, and Inspect reads that copy: nothing written holds it.
"""

import io
import json
import os
import stat
import struct
import tempfile
import zipfile
import zlib

import engine
from engine import read_limited, shown

from .._errors import InputError  # the launcher's: also the engine's InputError

from builders import inspect_format as F

STEP = 1 << 20  # output per decompression step
METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", 93: "zstd"}  # what Inspect reads
_LOCAL = struct.Struct("<4s5H3L2H")  # a zip local file header


def _line(text, n=200) -> str:
    """Text from outside (an exception's message) on one printable line."""
    return "".join(c if c.isprintable() else " " for c in " ".join(str(text).split()))[:n]


def extension(path) -> str:
    """ ".eval" or ".json", as Inspect's reader decides by the name; InputError for anything else."""
    for ext in (".eval", ".json"):
        if str(path).endswith(ext):
            return ext
    raise InputError(f"{path}: expected an Inspect log named .eval or .json")


def read_bytes(path) -> bytes:
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})")
    if not stat.S_ISREG(info.st_mode):  # a FIFO or a device would block the read or never end
        raise InputError(f"{path}: not a regular file (an Inspect log file expected)")
    if info.st_size > F.MAX_LOG_BYTES:
        raise InputError(f"{path}: larger than the {F.MAX_LOG_BYTES}-byte limit for an Inspect log")
    try:
        data = read_limited(path, F.MAX_LOG_BYTES)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})")
    if len(data) > F.MAX_LOG_BYTES:  # it grew since the stat
        raise InputError(f"{path}: larger than the {F.MAX_LOG_BYTES}-byte limit for an Inspect log")
    return data


# -- the members of a .eval log ---------------------------------------------------------------------------------
def members(label, data) -> list:
    """[(ZipInfo, offset of its data)] of a .eval log, every member measured by decompressing it in bounded
    steps; InputError names the member and the limit or the mismatch."""
    if not data.startswith(b"PK\x03\x04"):
        raise InputError(f"{label}: expected a .eval log (a zip file), the file does not start as one")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError, NotImplementedError) as exc:
        raise InputError(f"{label}: not a zip file Inspect can read ({_line(exc, 120)})")
    if len(infos) > F.MAX_MEMBERS:
        raise InputError(f"{label}: {len(infos)} zip members, over the limit of {F.MAX_MEMBERS} for an Inspect log")
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise InputError(f"{label}: two zip members named {shown(twice)}: a reader would pick one of them")
    declared = sum(i.file_size for i in infos)
    if declared > F.MAX_UNPACKED_BYTES:
        raise InputError(
            f"{label}: its {len(infos)} zip members declare {declared} bytes unpacked, over the limit "
            f"of {F.MAX_UNPACKED_BYTES} bytes for an Inspect log"
        )
    out = []
    for info in infos:  # each expands to exactly its declared size (checked above to sum within the limit)
        offset = _data_offset(label, data, info)
        for _ in _expand(label, data, info, offset):
            pass
        out.append((info, offset))
    return out


def _data_offset(label, data, info) -> int:
    name = shown(info.filename)
    if info.flag_bits & 0x1:
        raise InputError(f"{label}: zip member {name} is encrypted (an Inspect log's members are not)")
    if info.compress_type not in METHODS:
        raise InputError(
            f"{label}: zip member {name}: compression method {info.compress_type} is not one an "
            f"Inspect log uses ({', '.join(METHODS.values())})"
        )
    start = info.header_offset
    if start < 0 or start + _LOCAL.size > len(data):
        raise InputError(f"{label}: zip member {name}: its local header lies outside the file")
    sig, _, _, _, _, _, _, _, _, nlen, xlen = _LOCAL.unpack_from(data, start)
    offset = start + _LOCAL.size + nlen + xlen
    if sig != b"PK\x03\x04" or offset + info.compress_size > len(data):
        raise InputError(f"{label}: zip member {name}: its data lies outside the file")
    return offset


def _expand(label, data, info, offset):
    """The member's bytes, at most STEP at a time; InputError once it passes its declared size, or when it ends
    short of it or with another CRC."""
    name = shown(info.filename)
    raw = memoryview(data)[offset : offset + info.compress_size]
    crc, size = 0, 0
    for chunk in _decompressed(label, name, info.compress_type, raw):
        size += len(chunk)
        if size > info.file_size:
            raise InputError(
                f"{label}: zip member {name} expands past the {info.file_size} bytes it declares "
                f"(stopped at {size}; a decompression bomb)"
            )
        crc = zlib.crc32(chunk, crc)
        yield chunk
    if size != info.file_size or crc != info.CRC:
        raise InputError(
            f"{label}: zip member {name}: expands to {size} bytes with CRC {crc:08x}, the zip "
            f"declares {info.file_size} bytes with CRC {info.CRC:08x}"
        )


def _decompressed(label, name, method, raw):
    try:
        if method == zipfile.ZIP_STORED:
            for i in range(0, len(raw), STEP):
                yield bytes(raw[i : i + STEP])
        elif method == 93:
            yield from _zstd(raw)
        else:
            yield from _inflate(raw)
    except engine.InputError:
        raise
    except (zlib.error, OSError, ValueError, EOFError, MemoryError) as exc:
        raise InputError(
            f"{label}: zip member {name}: cannot decompress its {METHODS[method]} data within the "
            f"limits ({_line(exc, 80)})"
        ) from None
    except Exception as exc:  # zstandard.ZstdError and the like: damaged, or a window over MAX_WINDOW_BYTES
        raise InputError(
            f"{label}: zip member {name}: cannot decompress its {METHODS[method]} data within the "
            f"limits ({type(exc).__name__}: {_line(exc, 80)})"
        ) from None


def _inflate(raw):
    """deflate, at most STEP bytes of output a call (the rest of the input waits in unconsumed_tail)."""
    d = zlib.decompressobj(-15)
    pos, pending = 0, b""
    while True:
        if not pending and pos < len(raw):
            pending, pos = bytes(raw[pos : pos + STEP]), pos + STEP
        out = d.decompress(pending, STEP)
        pending = d.unconsumed_tail
        if out:
            yield out
        if d.eof or (not out and not pending and pos >= len(raw)):
            return


def _zstd(raw):
    import zstandard  # Inspect's own dependency (its .eval logs are zstd)

    reader = zstandard.ZstdDecompressor(max_window_size=F.MAX_WINDOW_BYTES).stream_reader(
        io.BytesIO(raw), read_across_frames=True
    )
    while True:
        out = reader.read(STEP)
        if not out:
            return
        yield out


def member_bytes(label, data, info, offset) -> bytes:
    return b"".join(_expand(label, data, info, offset))


# -- Inspect's reader, on the checked bytes ---------------------------------------------------------------------
def inspect_read(label, data, ext):
    """EvalLog of `data` through Inspect's public reader (read_eval_log), from a private copy of exactly these
    bytes; InputError names the file."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise InputError("inspect-ai is not installed: `make inspect` (or pip install 'fundbook[inspect]')")
    with tempfile.TemporaryDirectory(prefix="fundbook-inspect-") as tmp:
        path = os.path.join(tmp, "log" + ext)
        with open(path, "wb") as fh:
            fh.write(data)
        try:
            return read_eval_log(path)
        except Exception as exc:  # Inspect's reader raises many kinds on a damaged file
            raise InputError(f"{label}: not an Inspect log Inspect can read ({type(exc).__name__}: {_line(exc)})")


# -- credentials out of the kept bytes ----------------------------------------------------------------------------
def _replace(blob, found):
    for _, original, clean in found:
        for ascii_ in (False, True):
            blob = blob.replace(
                json.dumps(original, ensure_ascii=ascii_).encode(), json.dumps(clean, ensure_ascii=ascii_).encode()
            )
    return blob


def _secrets(found) -> list:
    """The substrings that must not survive anywhere: each URL's user:password@ part and secret query pairs."""
    out = []
    for _, original, clean in found:
        for a, b in zip(F.URL_IN_TEXT.findall(original), F.URL_IN_TEXT.findall(clean)):
            head_a, head_b = a.split("://", 1)[1].split("/", 1)[0], b.split("://", 1)[1].split("/", 1)[0]
            if head_a != head_b and "@" in head_a:
                out.append(head_a.rsplit("@", 1)[0] + "@")
            out += [
                p
                for p in a.partition("?")[2].partition("#")[0].split("&")
                if p and p not in b.partition("?")[2].split("&")
            ]
    return [s.encode() for s in out if s]


def _rezip(data, entries, replaced) -> bytes:
    """The zip again: every member's compressed bytes copied, those in `replaced` stored anew (no compression)."""
    body, central = bytearray(), bytearray()
    for info, offset in entries:
        nlen = struct.unpack_from("<H", data, info.header_offset + 26)[0]
        name = bytes(data[info.header_offset + 30 : info.header_offset + 30 + nlen])
        if info.filename in replaced:
            blob, method, crc, usize, version = (
                replaced[info.filename],
                0,
                zlib.crc32(replaced[info.filename]),
                len(replaced[info.filename]),
                20,
            )
        else:
            blob, method, crc, usize, version = (
                data[offset : offset + info.compress_size],
                info.compress_type,
                info.CRC,
                info.file_size,
                info.extract_version,
            )
        y, mo, d, h, mi, s = info.date_time
        dtime, ddate = (h << 11) | (mi << 5) | (s // 2), ((y - 1980) << 9) | (mo << 5) | d
        flags = info.flag_bits & 0x800  # keep only "the name is UTF-8"
        at = len(body)
        body += (
            struct.pack(
                "<4s5H3L2H", b"PK\x03\x04", version, flags, method, dtime, ddate, crc, len(blob), usize, len(name), 0
            )
            + name
            + blob
        )
        central += (
            struct.pack(
                "<4s6H3L5H2L",
                b"PK\x01\x02",
                20,
                version,
                flags,
                method,
                dtime,
                ddate,
                crc,
                len(blob),
                usize,
                len(name),
                0,
                0,
                0,
                0,
                info.external_attr,
                at,
            )
            + name
        )
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), len(body), 0)
    return bytes(body + central + end)


def without_credentials(label, data, ext, entries, found) -> bytes:
    """The log's bytes with each credential-holding URL of its header replaced by its redaction; InputError if
    any credential would survive (in another spelling, or anywhere else in the log)."""
    secrets = _secrets(found)
    if ext == ".json":
        kept = _replace(data, found)
        blobs = [("the log", kept)]
    else:
        replaced, blobs = {}, []
        for info, offset in entries:
            blob = member_bytes(label, data, info, offset)
            new = _replace(blob, found)
            if new != blob:
                replaced[info.filename] = new
            blobs.append((f"zip member {shown(info.filename)}", new))
        kept = _rezip(data, entries, replaced)
    for where, blob in blobs:
        for secret in secrets:
            if secret in blob:
                raise InputError(
                    f"{label}: {where} holds a credential of the eval's {found[0][0]} that fundbook "
                    f"cannot remove (the log is kept and published with the record); remove it and "
                    f"import again"
                )
    return kept


def read_log(path):
    """(EvalLog, the bytes kept, their zip members) of one log, read within the limits; InputError names the file
    and the check."""
    label = str(path)
    data = read_bytes(path)
    ext = extension(path)
    entries = members(label, data) if ext == ".eval" else []
    log = inspect_read(label, data, ext)
    try:
        spec = log.eval.model_dump(mode="json")
    except Exception as exc:  # a value pydantic cannot dump again
        raise InputError(f"{label}: eval: the log's header cannot be read as JSON ({type(exc).__name__})")
    found = F.credentials(spec, "eval")
    named = [f for f in found if f[1] is None]
    if named:
        raise InputError(
            f"{label}: {named[0][0]}: a credential the log holds in a field named like one; fundbook "
            f"keeps and publishes the log with the record: remove it from the log and import again"
        )
    if found:
        data = without_credentials(label, data, ext, entries, found)
        if ext == ".eval":
            entries = members(label, data)
        log = inspect_read(label, data, ext)
        if F.credentials(log.eval.model_dump(mode="json"), "eval"):
            raise InputError(f"{label}: {found[0][0]}: a credential fundbook could not remove from the kept log")
    return log, data, entries
