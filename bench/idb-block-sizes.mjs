// Measures how long a page takes to read the records of 10 000 lessons back from IndexedDB as blocks of UTF-8 bytes, for several block counts and for the same blocks compressed: the read a reload makes (src/adapters/idb_store.rs, `read_all_blocks`). Figures are printed, never asserted.
//
//   node bench/idb-block-sizes.mjs [--lessons 10000] [--runs 7]
//
// Chromium keeps a value over 64 KiB in a file of its own beside the database (a "wrapped"
// blob), read separately from the rest; 10 000 lessons in 64 blocks are about 70 KB a
// block. Runs in a blank page of the static server (no Remind code): each arm is written
// once, then read by a `get` per block, all issued together, through a connection opened
// anew for each read; the median of the runs is printed.
import { largeExport } from '../tests/e2e/large-export.mjs';
import { firstPage, freshProfileDir, launch, serveDist } from '../tests/e2e/helpers.mjs';
import { median } from './timed-ask.mjs';

const args = process.argv.slice(2);
const flag = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const LESSONS = Number(flag('--lessons', 10_000));
const RUNS = Number(flag('--runs', 7));

const { records } = largeExport(LESSONS);
const text = JSON.stringify(records);

const site = await serveDist();
const context = await launch(freshProfileDir('bench-idb-block-sizes'));
try {
  const page = await firstPage(context);
  await page.goto(`${site.url}/public/favicon.svg`);
  const arms = [[64, false], [128, false], [256, false], [64, true]];
  const results = await page.evaluate(async ({ text, arms, runs }) => {
    const request = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
    const open = (version, upgrade) => new Promise((resolve, reject) => {
      const o = indexedDB.open('block-sizes', version);
      o.onupgradeneeded = () => upgrade?.(o.result);
      o.onsuccess = () => resolve(o.result);
      o.onerror = () => reject(o.error);
    });
    const name = ([count, compressed]) => `${count}${compressed ? '-deflate' : ''}`;
    const deflate = async (bytes) => new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate-raw'))).arrayBuffer());
    const db = await open(1, (d) => arms.forEach((arm) => d.createObjectStore(name(arm))));
    const bytes = new TextEncoder().encode(text);
    const sizes = {};
    for (const arm of arms) {
      const [count, compressed] = arm;
      const step = Math.ceil(bytes.length / count);
      const blocks = [];
      for (let i = 0; i < count; i += 1) {
        const block = bytes.slice(i * step, (i + 1) * step);
        blocks.push(compressed ? await deflate(block) : block);
      }
      sizes[name(arm)] = Math.round(blocks.reduce((n, b) => n + b.length, 0) / count);
      const tx = db.transaction(name(arm), 'readwrite');
      blocks.forEach((block, i) => tx.objectStore(name(arm)).put(block, i));
      await new Promise((resolve, reject) => { tx.oncomplete = resolve; tx.onerror = () => reject(tx.error); });
    }
    db.close();
    const times = Object.fromEntries(arms.map((arm) => [name(arm), []]));
    for (let run = 0; run < runs; run += 1) {
      for (const arm of arms) {
        const started = performance.now();
        const d = await open(1);
        const store = d.transaction(name(arm)).objectStore(name(arm));
        const keys = await request(store.getAllKeys());
        const gets = keys.map((key) => request(store.get(key)));
        let total = 0;
        for (const get of gets) total += (await get).length;
        times[name(arm)].push(performance.now() - started);
        d.close();
        if (total === 0) throw new Error('nothing read');
      }
    }
    return { sizes, times };
  }, { text, arms, runs: RUNS });
  for (const [arm, times] of Object.entries(results.times)) {
    console.log(`${LESSONS} lessons in blocks of ${arm}: ${results.sizes[arm]} bytes a block, read in ${median(times).toFixed(1)} ms (median of ${times.length}; ${times.map((t) => t.toFixed(0)).join(', ')})`);
  }
} finally {
  await context.close().catch(() => {});
  await site.close?.();
}
