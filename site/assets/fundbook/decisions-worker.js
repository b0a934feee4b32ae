// The worker's half of "verify this decision" and "verify this board": run published Python (a decision's
// rules.py: experiments/rules.py, standard library and integers only; the board's bands.py beside it) in the engine
// worker's Pyodide. The page (decisions.js, board.js) checks each source's sha256 before it sends it; the engine
// bundle is not involved.
//
// The hooks in site/assets/desk/worker.js: its import of `decide` and `bands`, and the calls
// `decide: ({ py }, a) => decide(py, a[0], a[1])`, `bands: ({ py }, a) => bands(py, a[0], a[1], a[2])`.

const loaded = new Map();

/** The module of Python `source` (imported once per source, under a name of its own). */
function load(py, source) {
  let module = loaded.get(source);
  if (!module) {
    const name = `fundbook_rules_${loaded.size}`;
    py.FS.mkdirTree("/decide");
    py.FS.writeFile(`/decide/${name}.py`, source);
    py.runPython('import sys\nif "/decide" not in sys.path: sys.path.insert(0, "/decide")');
    module = py.pyimport(name);
    loaded.set(source, module);
  }
  return module;
}

/** recompute_json(payload) of the rules module `source`: the decision's figures as JSON text. */
export function decide(py, source, payloadText) {
  return load(py, source).recompute_json(payloadText);
}

/** builders/site/bands.py recompute_json(rules, payload): the board's ranking as JSON text, its `rules` the module
 * of rules.py's published source. */
export function bands(py, rulesSource, bandsSource, payloadText) {
  return load(py, bandsSource).recompute_json(load(py, rulesSource), payloadText);
}
