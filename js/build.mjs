// Builds the front end into synth_nb/static/ (committed; `make js-check` rebuilds and diffs it).
// Minified: every saved notebook stores the widget's whole ESM text in its widget state.
import { buildSync } from "esbuild";
import { fileURLToPath } from "node:url";

export const OPTIONS = {
  entryPoints: ["wizard.js", "wizard.css", "monitor.js", "live_region.js", "monitor.css"],
  absWorkingDir: fileURLToPath(new URL(".", import.meta.url)),
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: true,
  legalComments: "none",
  outdir: "../synth_nb/static",
  logLevel: "warning",
};

if (process.argv[1] === fileURLToPath(import.meta.url)) buildSync(OPTIONS);
