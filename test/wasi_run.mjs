// Runs a wasm32-wasi build (gna, gna_test, the README example) under node's WASI: the host's "/" is
// preopened, and PWD tells the program (test/wasi_cwd.c) which folder to start in.
//   node --no-warnings test/wasi_run.mjs build/wasm/gna.wasm logits -m test/fixtures/mamba_f32 --tokens 1,2
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import process from 'node:process';
const [file, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: 'preview1', args: [file, ...args], env: { PWD: process.cwd() }, preopens: { '/': '/' },
                        returnOnExit: true });
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
