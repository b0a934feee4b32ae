// The worker's half of "verify this decision": run a decision's published rules
// (its rules.py: experiments/rules.py, standard library and integers only) in the
// engine worker's Pyodide and recompute the decision from its rows. The page
// (decisions.js) checks the source's sha256 against the decision's evidence
// before it sends it; the engine bundle is not involved.
//
// The one hook in site/assets/desk/worker.js: its import of `decide` and the call `decide: ({ py }, a) => decide(py, a[0], a[1])`.

const loaded = new Map();

/** recompute_json(payload) of the rules module `source`: the decision's figures as JSON text. */
export function decide(py, source, payloadText) {
  let rules = loaded.get(source);
  if (!rules) {
    const name = `fundbook_rules_${loaded.size}`;
    py.FS.mkdirTree("/decide");
    py.FS.writeFile(`/decide/${name}.py`, source);
    py.runPython('import sys\nif "/decide" not in sys.path: sys.path.insert(0, "/decide")');
    rules = py.pyimport(name);
    loaded.set(source, rules);
  }
  return rules.recompute_json(payloadText);
}
