// Measures a question's own time in a page whose turn log holds many questions (the
// learning curve's log, which grows by one entry an ask): why the chart reads the log
// only while it is open (src/ui/learning_chart.rs). Figures are printed, never asserted.
//
//   N=5000 node bench/turn-log.mjs          # REMIND_DIST=dir for another build
//
// Seeds N copies of a real logged turn, reloads, then asks seven questions 300 ms
// after typing each, as a person asks, against the e2e tests' fake model.
import { startFakeLlm } from '../tests/e2e/fake-llm-server.mjs';
import { firstPage, freshProfileDir, launch, openApp, saveSettings, serveDist, ask } from '../tests/e2e/helpers.mjs';
import { median, timedAsk } from './timed-ask.mjs';
const N = Number(process.env.N || 5000);
const site = await serveDist();
const fake = await startFakeLlm({ streamMs: 1, wordsPerEvent: 1000 });
const context = await launch(freshProfileDir('turnlog'));
const page = await firstPage(context);
await openApp(page, site.url, { embedder: ['ready'] });
await saveSettings(page, { baseUrl: fake.baseUrl });
await ask(page, 'What is like < seed > ?');
await page.evaluate((n) => new Promise((resolve, reject) => {
  const open = indexedDB.open('remind');
  open.onsuccess = () => {
    const db = open.result;
    const tx = db.transaction('turn_events', 'readwrite');
    const store = tx.objectStore('turn_events');
    const first = store.getAll();
    first.onsuccess = () => {
      const sample = first.result[0];
      for (let i = 0; i < n; i += 1) store.add({ ...sample, turn: typeof sample.turn === 'string' ? `${sample.turn}-${i}` : sample.turn });
    };
    tx.oncomplete = () => { db.close(); resolve(); };
    tx.onerror = () => reject(tx.error);
  };
}), N);
await page.reload();
await page.locator('#ask-input').waitFor();
await page.waitForTimeout(2000);
const times = [];
for (let i = 0; i < 7; i += 1) {
  times.push((await timedAsk(page, `What is like < word${i} > in question ${i}?`, 300)).overheadMs);
  await page.waitForTimeout(500);
}
console.log(`${N} logged turns: ask overhead (the time minus the model's request) median ${median(times).toFixed(0)} ms (${times.map((t) => t.toFixed(0)).join(', ')})`);
await context.close(); await site.close(); fake.close?.(); process.exit(0);
