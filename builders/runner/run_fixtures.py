"""Inside the pinned Pyodide: check the bundle, then execute fixtures from it.

Each fixture starts from fresh module state: every `engine` module is dropped
from sys.modules and imported again from the bundle's .pyc, so nothing one
fixture leaves in module globals can reach the next. Every imported engine
module must come from the bundle; anything else stops the run.

The bytecode is read, checked against the manifest and unmarshalled once per
bundle (BundleImporter); each import then executes the module body afresh
from those code objects. Code objects are immutable, so sharing them carries
no state; it saves the zip lookups, inflating and unmarshalling that made a
per-fixture re-import cost a quarter of a fixture's run in Pyodide.
"""

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import marshal
import sys
import time
import zipfile
import zipimport

ZIP = "/bundle/fundbook-engine.zip"
MANIFEST = "manifest.json"


class Stop(Exception):
    """A one-line reason to stop the whole run."""


def _sha(data):
    return hashlib.sha256(data).hexdigest()


def verify(bundle_label, manifest_beside, manifest_label, pyodide_version):
    """Every zip entry against the manifest inside; that manifest against the
    one beside; the manifest's runtime against this runtime."""
    _forget_bundle()
    try:
        zf = zipfile.ZipFile(ZIP)
        inner = zf.read(MANIFEST)
        manifest = json.loads(inner)
    except Exception as exc:  # any damage to the central directory or the manifest
        raise Stop(f"{bundle_label}: unreadable bundle or manifest ({exc})")
    files = {}
    with zf:
        listed = {f["path"]: f["sha256"] for f in manifest["files"]}
        names = set(zf.namelist()) - {MANIFEST}
        for name in sorted(names | set(listed)):
            try:
                files[name] = zf.read(name) if name in names else None
            except Exception as exc:  # bad CRC, bad deflate stream
                raise Stop(f"{bundle_label}!{name}: sha256 expected {listed.get(name)} ({MANIFEST}), "
                           f"actual unreadable ({exc})")
            got = _sha(files[name]) if files[name] is not None else None
            if got != listed.get(name):
                raise Stop(f"{bundle_label}!{name}: sha256 expected {listed.get(name)} ({MANIFEST}), actual {got}")
    if manifest_beside is not None:
        manifest_beside = manifest_beside.to_bytes()
    if manifest_beside is not None and manifest_beside != inner:
        raise Stop(f"{manifest_label}: sha256 expected {_sha(inner)} ({bundle_label}!{MANIFEST}), "
                   f"actual {_sha(manifest_beside)}")
    runtime = manifest["runtime"]
    here = {"pyodide_version": pyodide_version, "python_version": sys.version.split()[0],
            "pyc_magic": importlib.util.MAGIC_NUMBER.hex()}
    for key, value in here.items():
        if runtime.get(key) != value:
            raise Stop(f"{bundle_label}: compiled for {key} {runtime.get(key)}, this runtime has {value} (run `npm ci`)")
    sys.meta_path.insert(0, BundleImporter(files, bundle_label))
    return json.dumps({"manifest_sha256": _sha(inner), "engine_version": manifest["engine_version"],
                       "runtime": runtime, "hash_randomization": sys.flags.hash_randomization})


class BundleImporter(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `engine` and `engine.*`, and only them, from the bundle's
    verified bytes: modules from its unchecked-hash .pyc (unmarshalled here,
    once), data (pkgutil.get_data: the episodes) from its entries."""

    def __init__(self, files, label):
        self.files = files
        self.codes = {}
        for name, data in files.items():
            if not name.endswith(".pyc"):
                continue
            if data[:4] != importlib.util.MAGIC_NUMBER or int.from_bytes(data[4:8], "little") != 0b01:
                raise Stop(f"{label}!{name}: not an unchecked-hash .pyc for this runtime")
            module = name[:-len(".pyc")].replace("/", ".")
            package = module.endswith(".__init__")
            if package:
                module = module[:-len(".__init__")]
            self.codes[module] = (marshal.loads(data[16:]), package, f"{ZIP}/{name}")

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.codes:
            return None
        _code, package, origin = self.codes[fullname]
        spec = importlib.machinery.ModuleSpec(fullname, self, origin=origin, is_package=package)
        spec.has_location = True
        if package:
            spec.submodule_search_locations = [origin.rsplit("/", 1)[0]]
        return spec

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.codes[module.__name__][0], module.__dict__)

    def get_data(self, path):
        relative = path[len(ZIP) + 1:] if path.startswith(ZIP + "/") else None
        if self.files.get(relative) is None:
            raise OSError(f"{path}: not in the bundle")
        return self.files[relative]


def _forget_bundle():
    """A session may run a second bundle at the same path: drop the engine
    modules, the previous bundle's importer and any cached view of the zip."""
    for name in [n for n in sys.modules if n == "engine" or n.startswith("engine.")]:
        del sys.modules[name]
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, BundleImporter)]
    if ZIP in sys.path:
        sys.path.remove(ZIP)
    sys.path_importer_cache.pop(ZIP, None)
    getattr(zipimport, "_zip_directory_cache", {}).pop(ZIP, None)


PROBE = "__fundbook_previous_fixture__"


def _engine():
    """Import `engine` afresh from the bundle. The modules being dropped are
    marked first; finding a mark afterwards would mean state carried over."""
    for name in [n for n in sys.modules if n == "engine" or n.startswith("engine.")]:
        vars(sys.modules[name])[PROBE] = True
        del sys.modules[name]
    import engine
    return engine


def _fresh():
    stale = [n for n in sys.modules if (n == "engine" or n.startswith("engine.")) and PROBE in vars(sys.modules[n])]
    if stale:
        raise Stop(f"module {stale[0]} carried state over from the previous fixture")
    return True


def _modules():
    out = []
    for name in sorted(n for n in sys.modules if n == "engine" or n.startswith("engine.")):
        module = sys.modules[name]
        origin = getattr(module, "__file__", None) or ""
        loader = getattr(getattr(module, "__spec__", None), "loader", None)
        if not (isinstance(loader, BundleImporter) and origin.startswith(ZIP + "/") and origin.endswith(".pyc")):
            raise Stop(f"module {name} was loaded from {origin or 'nowhere'}, not from the bundle's bytecode")
        out.append({"module": name, "origin": "fundbook-engine.zip/" + origin[len(ZIP) + 1:]})
    return out


def plan(text, label):
    """Fixture specs from a plan file: one {"run_id", "spec", "sha256"} per line."""
    engine = _engine()
    specs = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            spec, claimed = entry["spec"], entry["sha256"]
        except (ValueError, KeyError, TypeError) as exc:
            raise Stop(f"{label} line {number}: fixture does not parse ({exc}); sha256 expected a JSON "
                       f"{{run_id, spec, sha256}} line, actual line sha256 {_sha(line.encode())}")
        actual = engine.content_sha256(spec) if isinstance(spec, dict) else _sha(json.dumps(spec).encode())
        if actual != claimed:
            raise Stop(f"{label} line {number} ({entry.get('run_id')}): fixture sha256 expected {claimed}, actual {actual}")
        specs.append(spec)
    return json.dumps(specs)


def all_specs():
    return json.dumps(_engine().fixture_specs())


def published_run_ids():
    return json.dumps([spec["run_id"] for spec in _engine().fixture_specs()])


def execute(spec_json):
    """One fixture from fresh module state; what the record and its files need.
    (The input file's content hash is checked by the build on the bytes it
    publishes, not here.)"""
    spec = json.loads(spec_json)
    t0 = time.perf_counter()
    engine = _engine()
    t1 = time.perf_counter()
    try:
        execution = engine.execute_fixture(spec)
        t2 = time.perf_counter()
        inputs = engine.fixture_input(spec)
    except engine.InputError as exc:
        raise Stop(f"fixture {json.dumps(spec, sort_keys=True)} does not parse: {exc}; "
                   f"sha256 {engine.content_sha256(spec)}")
    t3 = time.perf_counter()
    fields = engine.engine_fields(execution)
    receipts = {"schema": "fundbook.receipts/1", "run_id": execution["run_id"],
                "receipts_head": execution["receipts_head"], "receipts": execution["receipts"]}
    out = {
        "run_id": execution["run_id"], "fields": fields, "fields_sha256": engine.content_sha256(fields),
        "candidate_sha256": execution["candidate_sha256"], "modules": _modules(), "fresh_modules": _fresh(),
        "receipts_text": engine.pretty_json(receipts), "input_text": engine.pretty_json(inputs),
    }
    out["timings_us"] = {"import": _us(t1 - t0), "execute_fixture": _us(t2 - t1), "fixture_input": _us(t3 - t2),
                         "serialise": _us(time.perf_counter() - t3)}
    return json.dumps(out)


def _us(seconds):
    return round(seconds * 1_000_000)
