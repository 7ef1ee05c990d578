// Measures the page with a large memory: imports 1 000 / 10 000 lessons into a real page and prints the import time, the first question after the import, a question's own overhead, and reload-to-usable; ends with the summary line for 10 000.
//
//   node bench/memory-scale.mjs [--sizes 1000,10000] [--questions 5] [--reloads 5] [--reload-pause 2000] [--embedded | --import-embeddings] [--typing-pause MS] [--profile DIR | --trace DIR]
//
// A reload is usable when the page shows the memory's count (`#memory-count`), timed by
// the page's own clock from when the navigation began (an observer set before the
// page's scripts run); the median of --reloads reloads, --reload-pause ms apart, is
// the summary's figure.
//
// --typing-pause MS waits MS milliseconds between typing a question and asking it, as a
// person does (default 0: asked at once). The page embeds a question once typing
// pauses for 150 ms, so with a pause the embedding is not part of the ask. The
// summary's questions come one after the other, each just after the answer before;
// three more, each 2 s after the one before, are printed apart: by then the page has
// given the worker back to the background embedding of the imported lessons, which
// it holds for a second after each keystroke and answer.
//
// --import-embeddings imports a file that carries an embedding of the page's model for
// every lesson (an export made "with the embeddings"), so nothing is embedded after it.
//
// --profile DIR writes Chromium CPU profiles (DevTools' .cpuprofile) of the import (with
// --embedded, the first open), the first question after it, the reload and the last
// question, per size, into DIR; `node bench/profile-summary.mjs FILE` lists
// where their time went.
//
// --embedded measures a memory whose every lesson is already embedded by the page's
// model (what a memory looks like once the background embedding is done, and what a
// reload then reads: 384 numbers per lesson). An import file cannot hold that many
// vectors (5 MiB), so the lessons are put straight into a version-2 database, today's
// layout before schema 3, before the page first opens it: a page of schema 3 migrates
// it on that first open (its time is printed), and the reload after it reads the
// layout the page writes. Its questions are worded like stored lessons, so each
// applies one and writes its usage count.
//
// Needs dist/ from `trunk build --release` (REMIND_DIST picks another) and the embedder
// files (scripts/setup). The model is the fake server of the e2e tests, which answers
// at once (its own work is under a millisecond). A question's overhead is, as the issue
// defines it, its time minus the model's: from the click to the reply on screen, less
// the completion request's time by the page's Resource Timing (the fetch to the reply's
// last byte: 5–9 ms in most asks, the browser's network stack and a Node server sharing
// two cores); both are printed beside it. The first question after an import is its whole time.
// Each size uses a new browser profile. Figures are printed, never
// asserted. An import file is limited to 5 MiB, about 11 500 of these lessons, so
// 100 000 lessons cannot be imported in one file and are not measured here.
import fs from 'node:fs';
import path from 'node:path';
import { largeExport } from '../tests/e2e/large-export.mjs';
import { median, timedAsk as timedAskAfter } from './timed-ask.mjs';
import { startFakeLlm } from '../tests/e2e/fake-llm-server.mjs';
import {
  firstPage, freshProfileDir, launch, openApp, saveSettings, serveDist, waitForEmbedded, waitForEmbedder, waitForMemoryCount, waitForText, scratchDir,
} from '../tests/e2e/helpers.mjs';

const args = process.argv.slice(2);
const flag = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const SIZES = flag('--sizes', '1000,10000').split(',').map(Number);
const QUESTIONS = Number(flag('--questions', 5));
const RELOADS = Number(flag('--reloads', 5));
/** Between reloads: the page reloaded has its worker loading the model and its background embedding going on. */
const RELOAD_PAUSE_MS = Number(flag('--reload-pause', 2000));
const EMBEDDED = args.includes('--embedded');
const IMPORT_EMBEDDINGS = args.includes('--import-embeddings');
const PROFILE_DIR = flag('--profile', null);
const TRACE_DIR = flag('--trace', null);
const TYPING_PAUSE_MS = Number(flag('--typing-pause', 0));
/** The questions asked after a while away, and how long that is (the page holds the background embedding for a second after an answer or a keystroke). */
const AWAY_QUESTIONS = 3;
const AWAY_MS = 2000;
/** How the printed lines name this arm; the default run's summary line is the issue's. */
const ARM = `${IMPORT_EMBEDDINGS ? ' with embeddings' : ''}${TYPING_PAUSE_MS ? `, asked ${TYPING_PAUSE_MS} ms after typing` : ''}`;

/**
 * Runs `work` under the CPU profiler when --profile is given, writing
 * DIR/<name>.cpuprofile, or under Chromium's tracing when --trace is, writing
 * DIR/<name>.trace.json (every thread, the worker's too: read it with
 * bench/trace-summary.mjs or chrome://tracing).
 */
async function profiled(page, name, work) {
  if (TRACE_DIR) return traced(page, name, work);
  if (!PROFILE_DIR) return work();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await cdp.send('Profiler.stop');
    fs.mkdirSync(PROFILE_DIR, { recursive: true });
    fs.writeFileSync(path.join(PROFILE_DIR, `${name}.cpuprofile`), JSON.stringify(profile));
    await cdp.detach().catch(() => {});
  }
}

async function traced(page, name, work) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Tracing.start', {
    transferMode: 'ReturnAsStream',
    traceConfig: { includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'v8.wasm', 'blink.user_timing', 'toplevel', 'loading', 'navigation'] },
  });
  try {
    return await work();
  } finally {
    const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    await cdp.send('Tracing.end');
    const { stream } = await complete;
    let text = '';
    for (;;) {
      const { data, eof } = await cdp.send('IO.read', { handle: stream, size: 1 << 20 });
      text += data;
      if (eof) break;
    }
    await cdp.send('IO.close', { handle: stream });
    fs.mkdirSync(TRACE_DIR, { recursive: true });
    fs.writeFileSync(path.join(TRACE_DIR, `${name}.trace.json`), text);
    await cdp.detach().catch(() => {});
  }
}

const ms = (x) => Math.round(x);

/**
 * The medians of the timed asks (`count` of them): `askMs`, Remind's own overhead (the
 * time minus the model's request), and, to show what it was taken from, `askTotalMs`
 * (click to reply) and `askModelMs` (the completion request).
 */
const askFigures = (asks) => ({
  count: asks.length,
  askMs: median(asks.map((a) => a.overheadMs)),
  askTotalMs: median(asks.map((a) => a.totalMs)),
  askModelMs: median(asks.map((a) => a.modelMs)),
});
/** How a line names the ask's figures. */
const askLine = (r) => `ask overhead ${ms(r.askMs)} ms (median of ${r.count}; click to reply ${ms(r.askTotalMs)} ms, of it the model's request ${ms(r.askModelMs)} ms)`;
/** Asks in the page as this run's arm says (at once, or after a typing pause). */
const timedAsk = (page, question) => timedAskAfter(page, question, TYPING_PAUSE_MS);

/**
 * Exports the memory with its embeddings once every lesson has one: the milliseconds
 * from the click to the download, and the file's size.
 */
async function timedExport(page, lessons) {
  await waitForEmbedded(page, lessons, { timeout: 120_000 });
  await page.evaluate(() => { document.querySelector('#transfer').open = true; });
  await page.check('#export-embeddings');
  const started = Date.now();
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), page.click('#export-button')]);
  const ms = Date.now() - started;
  const saved = path.join(scratchDir('bench-export'), 'export.json');
  await download.saveAs(saved);
  return { ms, bytes: fs.statSync(saved).size };
}

async function measure(site, fake, lessons) {
  const file = path.join(scratchDir('bench-scale'), 'memory.json');
  const embeddingModel = IMPORT_EMBEDDINGS ? pageModelId() : undefined;
  fs.writeFileSync(file, JSON.stringify(largeExport(lessons, { embeddingModel })));
  const context = await launch(freshProfileDir('bench-scale'));
  try {
    const page = await firstPage(context);
    await page.addInitScript(noteModelKept);
    await openApp(page, site.url, { embedder: ['ready'] });
    await saveSettings(page, { baseUrl: fake.baseUrl });
    // A new profile's first load converts the model once the worker is idle (0.5 s of
    // one core on this machine) and keeps the conversion for later visits; measured
    // after it, as a returning visitor's page runs, the import does not share the
    // machine with it.
    await page.waitForFunction(() => window.__benchModelKept, null, { timeout: 60_000 });
    // The import's time is the page's own: from the file picked to the preview shown,
    // and from the click on "Merge" to the merge reported. The time between the
    // preview and the click is the person's (here Playwright's, 0.1–0.3 s of finding the
    // button and checking that it holds still), so it is not counted. The page stamps
    // each moment itself, as it happens.
    await page.evaluate((lessons) => {
      document.querySelector('#transfer').open = true;
      const at = (name) => { window.__bench[name] ??= performance.now(); };
      window.__bench = {};
      document.addEventListener('change', (ev) => { if (ev.target?.id === 'import-file') at('picked'); }, true);
      document.addEventListener('click', (ev) => { if (ev.target?.id === 'import-merge') at('clicked'); }, true);
      new MutationObserver(() => {
        if (window.__bench.picked && document.querySelector('#import-merge')) at('previewed');
        if (document.querySelector('#memory-notice')?.textContent.includes(`Merged: ${lessons} records written`)) at('merged');
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    }, lessons);
    await profiled(page, `import-${lessons}`, async () => {
      await page.setInputFiles('#import-file', file);
      await page.locator('#import-merge').waitFor({ timeout: 300_000 });
      await page.click('#import-merge');
      await waitForText(page, '#memory-notice', `Merged: ${lessons} records written`, 300_000);
    });
    const { previewMs, mergeMs } = await page.evaluate(() => {
      const { picked, previewed, clicked, merged } = window.__bench;
      return { previewMs: previewed - picked, mergeMs: merged - clicked };
    });
    const importMs = previewMs + mergeMs;
    await waitForMemoryCount(page, lessons, 60_000);

    const first = await profiled(page, `first-question-${lessons}`, () => timedAsk(page, 'What is the river garden like < fast > in lesson 7?'));
    const overheads = [];
    for (let i = 0; i < QUESTIONS; i += 1) {
      // Each of its own kind (key), so none is answered from the vector of the one
      // before (the session remembers the last few questions it embedded).
      const question = `What is like < word${i} > in question ${i}?`;
      overheads.push(await (i === QUESTIONS - 1 ? profiled(page, `ask-${lessons}`, () => timedAsk(page, question)) : timedAsk(page, question)));
    }
    // Each of those came just after the answer before, while the page still held the
    // background embedding for the person; these come after a while away, when it has
    // taken the worker again (the lessons still waiting at this point: thousands).
    const afterAway = [];
    for (let i = 0; i < AWAY_QUESTIONS; i += 1) {
      await page.waitForTimeout(AWAY_MS);
      afterAway.push(await timedAsk(page, `Where is the < away${i} > of room ${i}?`));
    }

    const { reloadMs, reloadsMs, stepsMs } = await timedReload(page, `reload-${lessons}`, lessons);
    const exported = IMPORT_EMBEDDINGS ? await timedExport(page, lessons) : null;
    return { lessons, importMs, previewMs, mergeMs, firstMs: first.totalMs, ...askFigures(overheads), awayMs: askFigures(afterAway), reloadMs, reloadsMs, stepsMs, bytes: fs.statSync(file).size, exported };
  } finally {
    await context.close().catch(() => {});
  }
}

/**
 * Runs in the page before its scripts: notes, as `window.__benchMemoryShownAt`, the
 * page's clock (milliseconds since navigation began) when `#memory-count` first reads
 * `lessons`: the moment itself, where any wait from outside the page (Playwright's
 * polled once a frame) sees it 10–25 ms later.
 */
function noteMemoryShown(lessons) {
  const want = String(lessons);
  const observer = new MutationObserver(() => {
    if (document.getElementById('memory-count')?.textContent.trim() === want) {
      window.__benchMemoryShownAt = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { subtree: true, childList: true, characterData: true });
}

/**
 * Reloads `page` RELOADS times, RELOAD_PAUSE_MS apart, and returns the median of when
 * its memory of `lessons` was shown, by the page's clock (`reloadMs`, each in
 * `reloadsMs`). The last reload is profiled.
 *
 * The bench waits for the count by asking for `__benchMemoryShownAt` over a raw
 * DevTools session, never through Playwright's waits: those evaluate Playwright's own
 * 330 KB script in the new page as it loads, which a trace showed taking the page's
 * main thread for 20–24 ms while the page's wasm arrived, a cost no user's reload has.
 */
async function timedReload(page, name, lessons) {
  await page.addInitScript(noteMemoryShown, lessons);
  const devtools = await page.context().newCDPSession(page);
  const shownAt = async () => {
    const answer = await devtools.send('Runtime.evaluate', { expression: 'window.__benchMemoryShownAt', returnByValue: true });
    return answer.result?.value;
  };
  const shown = [];
  const steps = [];
  for (let i = 0; i < RELOADS; i += 1) {
    if (i > 0) await page.waitForTimeout(RELOAD_PAUSE_MS);
    const reload = async () => {
      await page.reload({ waitUntil: 'commit' });
      const deadline = Date.now() + 120_000;
      while (typeof (await shownAt().catch(() => undefined)) !== 'number') {
        if (Date.now() > deadline) throw new Error(`#memory-count did not read ${lessons} within 120 s of a reload`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await (i === RELOADS - 1 ? profiled(page, name, reload) : reload());
    shown.push(await shownAt());
    steps.push(await page.evaluate(reloadSteps));
  }
  await devtools.detach();
  const stepsMs = Object.fromEntries(Object.keys(steps[0]).map((step) => [step, median(steps.map((s) => s[step]))]));
  return { reloadMs: median(shown), reloadsMs: shown, stepsMs };
}

/**
 * Runs in the page: when each step of its load came, in milliseconds since the
 * navigation began (Navigation Timing, and the page's own marks, src/adapters/load_marks.rs).
 */
function reloadSteps() {
  const nav = performance.getEntriesByType('navigation')[0];
  const mark = (name) => performance.getEntriesByName(name, 'mark')[0]?.startTime ?? NaN;
  return {
    'old page unloaded': nav.unloadEventEnd,
    'page received': nav.responseEnd,
    'DOMContentLoaded': nav.domContentLoadedEventEnd,
    'wasm started': mark('remind:wasm-started'),
    'drawn': mark('remind:mounted'),
    'database open': mark('remind:database-open'),
    'records read': mark('remind:records-read'),
    'memory shown': window.__benchMemoryShownAt,
  };
}

/** One line of when each step of a reload came (medians over the reloads). */
const stepsLine = (stepsMs) => Object.entries(stepsMs).map(([step, at]) => `${step} ${ms(at)}`).join(', ');

/**
 * Runs in the page before its scripts: notes the embedder worker's `converted` message
 * (the model converted and kept, after a load from the ONNX file) as
 * `window.__benchModelKept`.
 */
function noteModelKept() {
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function postNoting(...args) {
    if (!this.__benchNoting) {
      this.__benchNoting = true;
      this.addEventListener('message', (ev) => { if (ev.data?.kind === 'converted') window.__benchModelKept = true; });
    }
    return post.apply(this, args);
  };
}

/** The page's model id (src/wiring.rs `embedder_model_id`), so seeded embeddings count as its own. */
function pageModelId() {
  const pins = fs.readFileSync(new URL('../scripts/embedder.sha256', import.meta.url), 'utf8');
  const sha = pins.split('\n').map((l) => l.trim().split(/\s+/)).find(([, name]) => name === 'model.onnx')[0];
  return `all-minilm-l6-v2-int8-${sha.slice(0, 12)}`;
}

/**
 * Creates the page's database at schema version 2 (as idb_store.rs made it) holding
 * `lessons` records of large-export.mjs, each with a 384-value unit vector of `model`
 * stored as JSON numbers rounded to 32 bits, as Remind stored them before schema 3.
 */
async function seedVersion2(page, records, model) {
  await page.evaluate(({ records, model }) => new Promise((resolve, reject) => {
    const open = indexedDB.open('remind', 2);
    open.onupgradeneeded = () => {
      const db = open.result;
      db.createObjectStore('records', { keyPath: 'id' }).createIndex('key', 'key');
      db.createObjectStore('turn_events', { autoIncrement: true });
    };
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction('records', 'readwrite');
      let seed = 1;
      const next = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 - 0.5; };
      for (const record of records) {
        const raw = Array.from({ length: 384 }, next);
        const length = Math.hypot(...raw);
        const vector = raw.map((x) => Math.fround(x / length));
        tx.objectStore('records').put({
          ...record,
          stats: { times_applied: 0, times_failed_after_applied: 0 },
          change: null,
          embedding: { model, vector },
        });
      }
      tx.oncomplete = () => { db.close(); resolve(); };
      tx.onerror = () => { db.close(); reject(tx.error); };
    };
  }), { records, model });
}

async function measureEmbedded(site, fake, lessons) {
  const { records } = largeExport(lessons);
  const context = await launch(freshProfileDir('bench-scale-embedded'));
  try {
    const page = await firstPage(context);
    // A document of the site's origin that does not run the page (which would create
    // the database at its own version first): the favicon.
    await page.goto(`${site.url}/public/favicon.svg`);
    await seedVersion2(page, records, pageModelId());
    await profiled(page, `first-open-embedded-${lessons}`, async () => {
      // The migration of 100 000 rows takes longer than openApp waits for the model,
      // which starts once the memory is shown.
      await page.goto(site.url, { waitUntil: 'load' });
      await waitForMemoryCount(page, lessons, 300_000);
      await waitForEmbedder(page, ['ready']);
    });
    const firstOpenMs = await page.evaluate(() => performance.now());
    await saveSettings(page, { baseUrl: fake.baseUrl });
    const overheads = [];
    for (let i = 0; i < QUESTIONS; i += 1) {
      const lesson = records[(i * 97) % lessons];
      const question = lesson.question.replace('< fast >', `< word${i} >`);
      overheads.push(await (i === QUESTIONS - 1 ? profiled(page, `ask-embedded-${lessons}`, () => timedAsk(page, question)) : timedAsk(page, question)));
    }
    const { reloadMs, reloadsMs, stepsMs } = await timedReload(page, `reload-embedded-${lessons}`, lessons);
    // The lessons are shown first; their embeddings are read and attached after.
    await waitForEmbedded(page, lessons, { timeout: 120_000, polling: 5 });
    const embeddingsMs = await page.evaluate(() => performance.now());
    return { lessons, firstOpenMs, ...askFigures(overheads), reloadMs, reloadsMs, stepsMs, embeddingsMs };
  } finally {
    await context.close().catch(() => {});
  }
}

const site = await serveDist();
// Replies in one event, at once: a question's time is then Remind's own, not the fake's
// pacing of a stream (30 ms an event by default).
const fake = await startFakeLlm({ streamMs: 1, wordsPerEvent: 1000 });
try {
  const embeddedResults = [];
  for (const lessons of EMBEDDED ? SIZES : []) {
    const r = await measureEmbedded(site, fake, lessons);
    embeddedResults.push(r);
    console.log(`${lessons} embedded lessons${ARM}: first open of the version-2 database ${ms(r.firstOpenMs)} ms, ${askLine(r)}, reload to usable ${ms(r.reloadMs)} ms (median of ${r.reloadsMs.map(ms).join(', ')}), to every embedding in ${ms(r.embeddingsMs)} ms`);
    console.log(`${lessons} embedded lessons${ARM}, a reload's steps (median ms since the navigation began): ${stepsLine(r.stepsMs)}`);
  }
  const embedded = embeddedResults.find((r) => r.lessons === 10_000);
  if (embedded) {
    const r = embedded;
    console.log(`memory-scale 10000 embedded${ARM}: reload ${ms(r.reloadMs)} ms, ask overhead ${ms(r.askMs)} ms, first open of the version-2 database ${ms(r.firstOpenMs)} ms`);
  }
  const results = [];
  for (const lessons of EMBEDDED ? [] : SIZES) {
    const r = await measure(site, fake, lessons);
    results.push(r);
    console.log(`${lessons} lessons${ARM} (${(r.bytes / 1e6).toFixed(1)} MB file): import ${ms(r.importMs)} ms (preview ${ms(r.previewMs)} ms, merge ${ms(r.mergeMs)} ms), first question after import ${ms(r.firstMs)} ms, ${askLine(r)}, reload to usable ${ms(r.reloadMs)} ms (median of ${r.reloadsMs.map(ms).join(', ')})`);
    console.log(`${lessons} lessons${ARM}, asked ${AWAY_MS / 1000} s after the answer before, during the background embedding: ${askLine(r.awayMs)}`);
    console.log(`${lessons} lessons${ARM}, a reload's steps (median ms since the navigation began): ${stepsLine(r.stepsMs)}`);
    if (r.exported) console.log(`${lessons} lessons: export with the embeddings ${ms(r.exported.ms)} ms from the click to the download (${(r.exported.bytes / 1e6).toFixed(1)} MB)`);
  }
  const tenThousand = results.find((r) => r.lessons === 10_000);
  if (tenThousand) {
    const r = tenThousand;
    console.log(`memory-scale 10000${ARM}: reload ${ms(r.reloadMs)} ms, ask overhead ${ms(r.askMs)} ms, import ${ms(r.importMs)} ms, first question after import ${ms(r.firstMs)} ms`);
  }
} finally {
  await fake.close();
  await site.close();
}
