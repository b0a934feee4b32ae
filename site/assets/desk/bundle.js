// The engine bundle's integrity check, run before anything in it is imported.
// Plain module (no DOM, no Pyodide) so Node can test it too.
import { readZip } from "./zip.js";

export const BUNDLE_NAME = "fundbook-engine.zip";
export const MANIFEST_NAME = "manifest.json";
export const PROVENANCE_NAME = "provenance.json";

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sha256(bytes) {
  return hex(await crypto.subtle.digest("SHA-256", bytes));
}

function sameBytes(a, b) {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

// The bundle is checked before anything in it is imported:
// - the zip's sha256 and the manifest's are the subjects of provenance.json;
// - every file the manifest lists is in the zip with that sha256, the
//   zip holds nothing else, and the manifest inside equals the one beside it.
// Any difference is one plain sentence and nothing runs.
export async function checkBundle(zipBytes, manifestBytes, provenance) {
  const fail = (what) => {
    throw new Error(`engine bundle ${BUNDLE_NAME}: ${what}; nothing was run`);
  };
  let manifest;
  try {
    manifest = JSON.parse(new TextDecoder().decode(manifestBytes));
  } catch {
    fail("manifest.json is not valid JSON");
  }
  const bundleSha = await sha256(zipBytes);
  const manifestSha = await sha256(manifestBytes);
  const subjects = Object.fromEntries((provenance?.subject || []).map((s) => [s.name, s.digest?.sha256]));
  if (subjects[BUNDLE_NAME] !== bundleSha) fail(`sha256 ${bundleSha} does not match the manifest's provenance subject ${subjects[BUNDLE_NAME]}`);
  if (subjects[MANIFEST_NAME] !== manifestSha) fail(`manifest.json sha256 ${manifestSha} does not match its provenance subject ${subjects[MANIFEST_NAME]}`);
  if (!Array.isArray(manifest.files)) fail("manifest.json has no files list");
  const entries = new Map((await readZip(zipBytes, BUNDLE_NAME)).map((e) => [e.name, e.bytes]));
  for (const file of manifest.files) {
    if (!entries.has(file.path)) fail(`${file.path} is listed in the manifest but missing from the zip`);
  }
  // All digests in one wait (see readZip): the check finishes while the runtime starts.
  const digests = await Promise.all(manifest.files.map((file) => sha256(entries.get(file.path))));
  manifest.files.forEach((file, i) => {
    if (digests[i] !== file.sha256) fail(`${file.path} sha256 ${digests[i]} does not match the manifest's ${file.sha256}`);
    entries.delete(file.path);
  });
  const inner = entries.get(MANIFEST_NAME);
  if (!inner || !sameBytes(inner, manifestBytes)) fail("the manifest inside the zip differs from the one beside it");
  entries.delete(MANIFEST_NAME);
  if (entries.size) fail(`${[...entries.keys()][0]} is in the zip but not in the manifest`);
  return { manifest, bundleSha, manifestSha };
}
