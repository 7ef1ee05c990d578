// Measures what reading an IndexedDB store costs after every row it held was deleted,
// against a store made anew: why schema 6 deletes and recreates the records store
// instead of clearing it (src/adapters/idb_store.rs, `records_store_anew`). Figures are
// printed, never asserted.
//
//   node bench/idb-cleared-store.mjs [--lessons 100000] [--runs 4]
//
// Runs in a blank page of the static server (no Remind code). Both stores get the same
// rows; one upgrade then clears the first and deletes and recreates the second, as the
// migration to blocks leaves the records store; each is then read as a reload reads it
// (`getAllKeys` and `getAll` in one transaction), then counted.
import { largeExport } from '../tests/e2e/large-export.mjs';
import { firstPage, freshProfileDir, launch, serveDist } from '../tests/e2e/helpers.mjs';

const args = process.argv.slice(2);
const flag = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const LESSONS = Number(flag('--lessons', 100_000));
const RUNS = Number(flag('--runs', 4));

const { records } = largeExport(LESSONS);
const site = await serveDist();
const context = await launch(freshProfileDir('bench-idb-cleared'));
try {
  const page = await firstPage(context);
  await page.goto(`${site.url}/public/favicon.svg`);
  const measured = await page.evaluate(async ({ records, runs }) => {
    const request = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
    const openAt = (version, upgrade) => new Promise((resolve, reject) => {
      const open = indexedDB.open('cleared', version);
      open.onupgradeneeded = () => upgrade(open.result, open.transaction);
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    const rowStore = (db, name) => db.createObjectStore(name, { keyPath: 'id' }).createIndex('key', 'key');
    let db = await openAt(1, (db) => { rowStore(db, 'cleared'); rowStore(db, 'anew'); });
    await new Promise((resolve, reject) => {
      const tx = db.transaction(['cleared', 'anew'], 'readwrite');
      for (const record of records) { tx.objectStore('cleared').put(record); tx.objectStore('anew').put(record); }
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
    });
    db.close();
    db = await openAt(2, (db, upgrade) => {
      upgrade.objectStore('cleared').clear();
      db.deleteObjectStore('anew');
      rowStore(db, 'anew');
    });
    const reads = {};
    for (const store of ['cleared', 'anew']) {
      reads[store] = [];
      for (let i = 0; i < runs; i += 1) {
        const started = performance.now();
        const tx = db.transaction(store);
        await Promise.all([request(tx.objectStore(store).getAllKeys()), request(tx.objectStore(store).getAll())]);
        const read = performance.now();
        await request(db.transaction(store).objectStore(store).count());
        reads[store].push([read - started, performance.now() - read]);
      }
    }
    db.close();
    return reads;
  }, { records, runs: RUNS });
  for (const [store, runs] of Object.entries(measured)) {
    const shown = runs.map(([read, count]) => `${read.toFixed(0)} ms (count ${count.toFixed(0)} ms)`).join(', ');
    console.log(`${LESSONS} rows deleted, store ${store === 'cleared' ? 'cleared' : 'made anew'}: read ${shown}`);
  }
} finally {
  await context.close().catch(() => {});
  await site.close();
}
