// The practice desk's entry point. It starts the engine worker first, so
// Pyodide and the bundle load while the rest of the desk's modules arrive.
import { warmUp } from "./client.js";

if (document.getElementById("fb-desk")) {
  warmUp();
  import("./ui.js");
}
