// Builds the candidate loops (src/lib.rs) for wasm with relaxed SIMD and prints each one's rate in headless Chromium, twice, as GFLOP/s of the f32 product it stands for.
//
//   node bench/int8-kernel-tiles/run.mjs
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TARGET = path.join(HERE, '..', '..', 'target', 'int8-kernel-tiles');
execFileSync('cargo', ['build', '--offline', '--release', '--target', 'wasm32-unknown-unknown', '--target-dir', TARGET], {
  cwd: HERE,
  stdio: 'inherit',
  env: { ...process.env, CARGO_ENCODED_RUSTFLAGS: '-Ctarget-feature=+simd128,+relaxed-simd' },
});
const bytes = [...fs.readFileSync(path.join(TARGET, 'wasm32-unknown-unknown', 'release', 'int8_kernel_tiles.wasm'))];
const KERNELS = ['f32_8x8', 'i8_8x8', 'i7_3x8', 'v3x8', 'v3x8r', 'v2x8', 'v3x4', 'v4x4', 'v5x4', 'v6x4', 'v6x4r', 'v4x8r'];

const browser = await chromium.launch({
  executablePath: process.env.REMIND_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  const page = await browser.newPage();
  const lines = await page.evaluate(async ({ bytes, kernels }) => {
    const { instance } = await WebAssembly.instantiate(new Uint8Array(bytes), {});
    instance.exports.init(0.5);
    instance.exports.init7();
    // Every loop multiplies the 10.6 M weights by 16 tokens.
    const flops = 2 * 10_600_000 * 16;
    const out = [];
    for (let rep = 0; rep < 2; rep++) {
      for (const name of kernels) {
        for (const k of [384, 1536]) {
          const run = instance.exports[name];
          run(k);
          const started = performance.now();
          for (let r = 0; r < 5; r++) run(k);
          const ms = (performance.now() - started) / 5;
          out.push(`${name.padEnd(8)} k=${String(k).padEnd(5)} ${ms.toFixed(2)} ms  ${(flops / ms / 1e6).toFixed(1)} GFLOP/s (f32-equivalent)`);
        }
      }
    }
    return out;
  }, { bytes, kernels: KERNELS });
  console.log(lines.join('\n'));
} finally {
  await browser.close();
}
