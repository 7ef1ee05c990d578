// Measures how long a page takes to read 10 000 lessons back from IndexedDB in three row layouts: today's JSON-shaped objects (then one JSON.stringify, as the page reads them), the same rows as JSON text strings, and the rows packed in blocks of 500 as one text each. Figures are printed, never asserted.
//
//   node bench/idb-layouts.mjs [--lessons 10000] [--runs 5]
//
// Runs in a blank page of the static server (no Remind code), so what it times is
// IndexedDB's read and the crossing into text alone: the part of a reload a different
// layout of the records store would change (docs/performance.md).
import { largeExport } from '../tests/e2e/large-export.mjs';
import { firstPage, freshProfileDir, launch, serveDist } from '../tests/e2e/helpers.mjs';
import { median } from './timed-ask.mjs';

const args = process.argv.slice(2);
const flag = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const LESSONS = Number(flag('--lessons', 10_000));
const RUNS = Number(flag('--runs', 5));

const { records } = largeExport(LESSONS);
const rows = records.map((r) => ({ ...r, stats: { times_applied: 0, times_failed_after_applied: 0 }, change: null }));

const site = await serveDist();
const context = await launch(freshProfileDir('bench-idb-layouts'));
try {
  const page = await firstPage(context);
  await page.goto(`${site.url}/public/favicon.svg`);
  const times = await page.evaluate(async ({ rows, runs }) => {
    const request = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
    const db = await new Promise((resolve, reject) => {
      const open = indexedDB.open('layouts', 1);
      open.onupgradeneeded = () => {
        open.result.createObjectStore('objects', { keyPath: 'id' });
        open.result.createObjectStore('texts');
        open.result.createObjectStore('blocks');
      };
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    await new Promise((resolve, reject) => {
      const tx = db.transaction(['objects', 'texts', 'blocks'], 'readwrite');
      for (const row of rows) {
        tx.objectStore('objects').put(row);
        tx.objectStore('texts').put(JSON.stringify(row), row.id);
      }
      for (let i = 0; i < rows.length; i += 500) {
        tx.objectStore('blocks').put(JSON.stringify(rows.slice(i, i + 500)), i);
      }
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
    });
    const read = async (store, toText) => {
      const started = performance.now();
      const tx = db.transaction(store);
      const values = await request(tx.objectStore(store).getAll());
      const text = toText(values);
      return { ms: performance.now() - started, chars: text.length };
    };
    const result = { objects: [], texts: [], blocks: [] };
    for (let i = 0; i < runs; i += 1) {
      result.objects.push(await read('objects', (values) => JSON.stringify(values)));
      result.texts.push(await read('texts', (values) => values.join('\n')));
      result.blocks.push(await read('blocks', (values) => values.join('\n')));
    }
    db.close();
    return result;
  }, { rows, runs: RUNS });
  for (const [layout, runs] of Object.entries(times)) {
    console.log(`${LESSONS} lessons as ${layout}: read and made text in ${median(runs.map((r) => r.ms)).toFixed(1)} ms (median of ${RUNS}; ${(runs[0].chars / 1e6).toFixed(1)} M characters)`);
  }
} finally {
  await context.close().catch(() => {});
  await site.close();
}
