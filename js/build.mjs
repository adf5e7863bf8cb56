// Bundles js/src into agent_explorer/explorer/static/{widget.js,runs.js,widget.css}: the Explorer and the run list,
// one ES module each, sharing the stylesheet (the Graphviz WebAssembly ships inlined in @viz-js/viz and only in
// widget.js, so nothing is fetched at run time). `--watch` rebuilds on change.
import * as esbuild from "esbuild";
import { copyFile, mkdir } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = resolve(here, "../agent_explorer/explorer/static");
const watch = process.argv.includes("--watch");

const options = {
  entryPoints: [resolve(here, "src/widget.js"), resolve(here, "src/runs.js")],
  outdir,
  bundle: true,
  format: "esm",
  target: ["es2020"],
  minify: !watch,
  legalComments: "eof",
  logLevel: "info",
};

await mkdir(outdir, { recursive: true });
await copyFile(resolve(here, "src/widget.css"), resolve(outdir, "widget.css"));
if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
