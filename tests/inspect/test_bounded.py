"""Bounded reading of a log (launchers/inspect/_read.py): every member of a .eval log is decompressed in bounded
steps and must expand to exactly what the zip declares before Inspect reads it; a bomb, an oversize window, a lie
about a size or a CRC, a compression Inspect cannot read (bzip2, lzma: refused before any decompression), an
encrypted member, a duplicate name, too many members or too large a file is refused in one line naming the file
and the member. Honest logs in every compression Inspect reads (stored, deflate, zstd) read as Inspect reads them. (Peak memory of the commands: test_memory.py.)"""

import io
import zipfile
import zlib

import pytest

from builders import inspect_format as F
from engine import InputError
from launchers.inspect import bench
from launchers.inspect._read import read_log

from . import policies as P

pytestmark = P.WARNINGS
BASE = bench.base_members()


def write(tmp_path, data, name="log.eval"):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def refusal(path) -> str:
    with pytest.raises(InputError) as err:
        read_log(path)
    assert "\n" not in err.value.message and err.value.message.startswith(path)
    return err.value.message[len(path) + 2 :]


def honest(method=93, members=BASE):
    return bench.raw_zip(
        [
            (
                n,
                method,
                bench._zstd(d) if method == 93 else (bench._deflate(d) if method == 8 else d),
                zlib.crc32(d),
                len(d),
            )
            for n, d in members
        ]
    )


@pytest.mark.parametrize(
    "kind, message",
    [
        (
            "zstd",
            "zip member 'header.json' expands past the 4096 bytes it declares (stopped at 1048576; a decompression "
            "bomb)",
        ),
        (
            "deflate",
            "zip member 'header.json' expands past the 4096 bytes it declares (stopped at 1048576; a "
            "decompression bomb)",
        ),
        (
            "bz2",
            "zip member 'header.json': compression method 12 is not one an Inspect log uses (stored, deflate, zstd)",
        ),
        (
            "lzma",
            "zip member 'header.json': compression method 14 is not one an Inspect log uses (stored, deflate, zstd)",
        ),
    ],
)
def test_a_bomb_in_any_compression_is_refused_at_its_declared_size(tmp_path, kind, message):
    data = bench.bomb(kind)
    assert len(data) < 1_100_000  # a small file: gigabytes only once expanded
    assert refusal(write(tmp_path, data)) == message


def test_a_zstd_window_over_the_limit_is_refused(tmp_path):
    """A frame may ask its decoder for up to 2 GiB of window: over MAX_WINDOW_BYTES it is never allocated."""
    message = refusal(write(tmp_path, bench.bomb("window")))
    assert message == (
        "zip member 'header.json': cannot decompress its zstd data within the limits (ZstdError: zstd decompress error: Frame requires "
        "too much memory for decoding)"
    )


def _lie(tmp_path, edit):
    entries = [(n, 8, bench._deflate(d), zlib.crc32(d), len(d)) for n, d in BASE]
    return refusal(write(tmp_path, bench.raw_zip(edit(entries))))


def test_a_member_that_is_not_what_the_zip_declares_is_refused(tmp_path):
    name, data = BASE[-1]
    crc = zlib.crc32(data)
    assert _lie(tmp_path, lambda e: e[:-1] + [(name, 8, e[-1][2], 0, len(data))]) == (
        f"zip member {name!r}: expands to {len(data)} bytes with CRC {crc:08x}, the zip declares {len(data)} bytes "
        f"with CRC 00000000"
    )
    assert _lie(tmp_path, lambda e: e[:-1] + [(name, 8, e[-1][2], crc, len(data) + 10)]) == (
        f"zip member {name!r}: expands to {len(data)} bytes with CRC {crc:08x}, the zip declares {len(data) + 10} "
        f"bytes with CRC {crc:08x}"
    )
    assert _lie(tmp_path, lambda e: e[:-1] + [(name, 93, b"not zstd at all", crc, len(data))]).startswith(
        f"zip member {name!r}: cannot decompress its zstd data within the limits (ZstdError: "
    )
    assert _lie(tmp_path, lambda e: e[:-1] + [(name, 98, e[-1][2], crc, len(data))]) == (
        f"zip member {name!r}: compression method 98 is not one an Inspect log uses (stored, deflate, zstd)"
    )
    assert _lie(tmp_path, lambda e: e + [e[0]]) == (
        f"two zip members named {BASE[0][0]!r}: a reader would pick one of them"
    )


def test_an_encrypted_member_is_refused(tmp_path):
    entries = [(n, 0, d, zlib.crc32(d), len(d)) for n, d in BASE]
    assert (
        refusal(write(tmp_path, bench.raw_zip(entries, flags=1)))
        == f"zip member {BASE[0][0]!r} is encrypted (an Inspect log's members are not)"
    )


def test_counts_sizes_names_and_shapes(tmp_path, monkeypatch):
    data = honest()
    monkeypatch.setattr(F, "MAX_MEMBERS", len(BASE) - 1)
    assert refusal(write(tmp_path, data)) == (
        f"{len(BASE)} zip members, over the limit of {len(BASE) - 1} for an Inspect log"
    )
    monkeypatch.setattr(F, "MAX_MEMBERS", 10_000)
    monkeypatch.setattr(F, "MAX_LOG_BYTES", len(data) - 1)
    assert refusal(write(tmp_path, data)) == f"larger than the {len(data) - 1}-byte limit for an Inspect log"
    monkeypatch.setattr(F, "MAX_LOG_BYTES", 32 << 20)
    assert (
        refusal(write(tmp_path, b"junk" + data)) == "expected a .eval log (a zip file), the file does not start as one"
    )
    assert refusal(write(tmp_path, data[: len(data) // 2])).startswith("not a zip file Inspect can read (")
    assert refusal(write(tmp_path, data, "log.txt")) == "expected an Inspect log named .eval or .json"
    assert (
        refusal(write(tmp_path, b'{"version": 2}', "log.eval"))
        == "expected a .eval log (a zip file), the file does not start as one"
    )


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, 93])
def test_an_honest_log_in_every_compression_reads_as_inspect_reads_it(tmp_path, method):
    if method == 93:
        data = honest(93)
    else:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", method) as archive:
            for name, member in BASE:
                archive.writestr(name, member)
        data = buf.getvalue()
    log, kept, members = read_log(write(tmp_path, data))
    assert kept == data and [i.filename for i, _ in members] == [n for n, _ in BASE]
    assert [str(s.id) for s in log.samples] == ["FUND_03-seed-1"] and log.eval.model.endswith(
        "SmolLM2-135M-Instruct.Q4_1"
    )
