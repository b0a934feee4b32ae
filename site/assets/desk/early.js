// Started from the practice desk's <head> (site/overrides/main.html): the
// engine worker begins loading Pyodide and the bundle at once, instead of
// after the theme's script and the desk's modules have run. client.js adopts
// this worker and replays what it said in the meantime. A classic script, so
// it runs as soon as it arrives; whichever of the two runs first starts the
// one worker.
(() => {
  if (window.fbEngineStarted) return; // the desk's modules ran first and started it (async scripts race)
  window.fbEngineStarted = true;
  const url = new URL("worker.js", document.currentScript.src);
  // ?start=cold on the page: the worker skips the snapshot (the tests and the benchmark compare the two)
  if (new URLSearchParams(location.search).get("start") === "cold") url.search = "?start=cold";
  const worker = new Worker(url, { type: "module" });
  const early = [];
  worker.onmessage = (event) => early.push(event);
  worker.onerror = (event) => early.push(event);
  window.fbEarlyWorker = { worker, early };
})();
