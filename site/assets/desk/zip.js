// Just enough ZIP for exporting and importing batch files: stored entries
// written with a fixed timestamp; stored or deflated entries read back
// (deflate through the browser's DecompressionStream).

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const DOS_DATE = (0 << 9) | (1 << 5) | 1; // 1980-01-01, as deterministic archives use
const DOS_TIME = 0;

/** files: [{name, text}] -> Uint8Array of a zip (stored, sorted by name). */
export function writeZip(files) {
  const enc = new TextEncoder();
  const sorted = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const chunks = [];
  const central = [];
  let offset = 0;
  for (const file of sorted) {
    const name = enc.encode(file.name);
    const data = enc.encode(file.text);
    const crc = crc32(data);
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(4, 20, true);
    local.setUint16(6, 0x0800, true); // UTF-8 names
    local.setUint16(8, 0, true);
    local.setUint16(10, DOS_TIME, true);
    local.setUint16(12, DOS_DATE, true);
    local.setUint32(14, crc, true);
    local.setUint32(18, data.length, true);
    local.setUint32(22, data.length, true);
    local.setUint16(26, name.length, true);
    local.setUint16(28, 0, true);
    chunks.push(new Uint8Array(local.buffer), name, data);
    const entry = new DataView(new ArrayBuffer(46));
    entry.setUint32(0, 0x02014b50, true);
    entry.setUint16(4, 20, true);
    entry.setUint16(6, 20, true);
    entry.setUint16(8, 0x0800, true);
    entry.setUint16(10, 0, true);
    entry.setUint16(12, DOS_TIME, true);
    entry.setUint16(14, DOS_DATE, true);
    entry.setUint32(16, crc, true);
    entry.setUint32(20, data.length, true);
    entry.setUint32(24, data.length, true);
    entry.setUint16(28, name.length, true);
    entry.setUint32(38, 0o100644 * 65536, true); // regular file, rw-r--r--
    entry.setUint32(42, offset, true);
    central.push(new Uint8Array(entry.buffer), name);
    offset += 30 + name.length + data.length;
  }
  const size = central.reduce((n, c) => n + c.length, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, sorted.length, true);
  end.setUint16(10, sorted.length, true);
  end.setUint32(12, size, true);
  end.setUint32(16, offset, true);
  const all = [...chunks, ...central, new Uint8Array(end.buffer)];
  const out = new Uint8Array(all.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of all) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

// Limits for a zip a reader picks (a zip bomb must not take the tab down);
// the engine bundle and the desk's own exports are far below them.
export const ZIP_LIMITS = { entries: 1024, entryBytes: 8 * 1024 * 1024, totalBytes: 32 * 1024 * 1024 };

async function inflate(bytes, limit, what) {
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw")).getReader();
  const chunks = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > limit) {
        reader.cancel().catch(() => {});
        throw new Error(`${what} inflates to more than its declared size`);
      }
      chunks.push(value);
    }
  } catch (e) {
    throw new Error(e.message.startsWith(what) ? e.message : `${what} is damaged (${e.message})`);
  }
  if (size !== limit) throw new Error(`${what} inflates to ${size} bytes, not its declared ${limit}`);
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Uint8Array of a zip -> [{name, bytes}]; one-line errors. */
export async function readZip(bytes, label = "zip", limits = ZIP_LIMITS) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65535); i--) {
    if (view.getUint32(i, true) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error(`${label}: not a zip archive`);
  const count = view.getUint16(end + 10, true);
  if (count > limits.entries) throw new Error(`${label}: ${count} entries, more than ${limits.entries}`);
  let total = 0;
  let at = view.getUint32(end + 16, true);
  const dec = new TextDecoder("utf-8", { fatal: true });
  const entries = [];
  for (let n = 0; n < count; n++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== 0x02014b50) throw new Error(`${label}: damaged central directory`);
    const method = view.getUint16(at + 10, true);
    const compressed = view.getUint32(at + 20, true);
    const size = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const extra = view.getUint16(at + 30, true);
    const comment = view.getUint16(at + 32, true);
    const local = view.getUint32(at + 42, true);
    let name;
    try {
      name = dec.decode(bytes.subarray(at + 46, at + 46 + nameLength));
    } catch {
      throw new Error(`${label}: an entry's name is not UTF-8`);
    }
    at += 46 + nameLength + extra + comment;
    if (name.endsWith("/")) continue;
    if (local + 30 > bytes.length || view.getUint32(local, true) !== 0x04034b50) throw new Error(`${label}: ${name}: damaged local header`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (start + compressed > bytes.length) throw new Error(`${label}: ${name}: runs past the end of the archive`);
    const raw = bytes.subarray(start, start + compressed);
    if (method !== 0 && method !== 8) throw new Error(`${label}: ${name} uses an unsupported compression method ${method}`);
    if (size > limits.entryBytes) throw new Error(`${label}: ${name} is ${size} bytes, more than ${limits.entryBytes}`);
    total += size;
    if (total > limits.totalBytes) throw new Error(`${label}: more than ${limits.totalBytes} bytes in all`);
    if (method === 0 && raw.length !== size) throw new Error(`${label}: ${name}: stored size ${raw.length} is not its declared ${size}`);
    entries.push({ name, data: method === 0 ? raw : inflate(raw, size, `${label}: ${name}`) });
  }
  // Inflate every entry at once: one wait instead of one per entry, so a busy
  // thread (the runtime starting beside it) does not stretch the read.
  const data = await Promise.all(entries.map((e) => e.data));
  return entries.map((e, i) => ({ name: e.name, bytes: data[i] }));
}
