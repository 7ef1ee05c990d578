// Shared e2e helpers: launch Debian's Chromium through playwright-core, serve dist/, and drive the page by its DOM contract.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';
import { startFakeLlm } from './fake-llm-server.mjs';
import { startStaticServer } from './static-server.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DIST = process.env.REMIND_DIST ?? path.join(ROOT, 'dist');
export const ARTIFACTS = path.join(ROOT, 'artifacts');
export const CHROMIUM = process.env.REMIND_CHROMIUM ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Every directory a test or benchmark process makes lives under this one root, removed
 * when the process exits. A browser profile keeps the model and its converted copy in
 * its cache (about 80 MB), and a CI run opens over a hundred of them: left behind, they
 * filled the CI machine's disk mid-run.
 */
const SCRATCH_ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'remind-e2e-'));
process.on('exit', () => {
  try {
    fs.rmSync(SCRATCH_ROOT, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    console.error(`could not remove ${SCRATCH_ROOT}: ${err.message}`);
  }
});

/** A fresh, empty directory, removed with the rest of this process's scratch. */
export function scratchDir(label) {
  return fs.mkdtempSync(path.join(SCRATCH_ROOT, `${label}-`));
}

/** A fresh, empty browser profile directory. */
export function freshProfileDir(label = 'profile') {
  return scratchDir(label);
}

/**
 * Launches a persistent Chromium context on `profileDir` (so IndexedDB and localStorage
 * survive a close + relaunch on the same dir). Page console errors and failed loads are
 * echoed to stderr, to make a failing test explain itself.
 */
export async function launch(profileDir) {
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    timeout: 60_000,
  });
  context.setDefaultTimeout(15_000);
  const watch = (page) => {
    page.on('console', (msg) => {
      if (msg.type() !== 'error' && msg.type() !== 'warning') return;
      if (msg.text().startsWith('Failed to load resource')) return; // reported with its URL below
      console.error(`[page ${msg.type()}] ${msg.text()}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) console.error(`[page http ${r.status()}] ${r.request().method()} ${r.url()}`);
    });
    page.on('requestfailed', (r) => console.error(`[page request failed] ${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
    page.on('pageerror', (err) => console.error(`[page exception] ${err.message}`));
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  return context;
}

/** The context's first page (a persistent context opens one) or a new one. */
export async function firstPage(context) {
  return context.pages()[0] ?? (await context.newPage());
}

/**
 * Opens another page of the same profile in a window of its own, as a person puts two
 * windows side by side. A second tab in the first window would be a hidden tab, whose
 * animation frames Chromium pauses: every click there would wait seconds for the
 * element to be judged stable.
 */
export async function secondWindow(context) {
  const cdp = await context.newCDPSession(await firstPage(context));
  try {
    const [page] = await Promise.all([
      context.waitForEvent('page'),
      cdp.send('Target.createTarget', { url: 'about:blank', newWindow: true }),
    ]);
    return page;
  } finally {
    await cdp.detach().catch(() => {});
  }
}

/** Serves dist/ on a free port. */
export function serveDist(opts = {}) {
  return startStaticServer({ dir: DIST, ...opts });
}

/**
 * Starts the fake LLM and serves dist/ before a test file's tests, and stops both after
 * them. Returns the object whose `fake` and `site` the tests use.
 */
export function fakeLlmAndSite() {
  const env = { fake: null, site: null };
  before(async () => {
    env.fake = await startFakeLlm();
    env.site = await serveDist();
  });
  after(async () => {
    await env.site?.close();
    await env.fake?.close();
  });
  return env;
}

/** A fresh browser profile with the app open and its settings pointed at the fake LLM. */
export async function freshApp(env, label, settings = {}) {
  const context = await launch(freshProfileDir(label));
  const page = await firstPage(context);
  await openApp(page, env.site.url);
  await saveSettings(page, { baseUrl: env.fake.baseUrl, ...settings });
  return { context, page };
}

export function distExists() {
  return fs.existsSync(path.join(DIST, 'index.html'));
}

/**
 * Opens the app and waits until the wasm app has rendered its ask box and the matching
 * model has settled (ready, or failed and matching by wording), so every test asks with
 * the retriever a user would get once the page is loaded.
 */
export async function openApp(page, url, { embedder = ['ready', 'failed'] } = {}) {
  await page.goto(url, { waitUntil: 'load' });
  await page.locator('#ask-input').waitFor({ state: 'visible', timeout: 30_000 });
  await waitForEmbedder(page, embedder);
}

/** Waits until #embedder-status is in one of `states`; returns the state reached. */
export async function waitForEmbedder(page, states, timeout = 90_000) {
  const wanted = Array.isArray(states) ? states : [states];
  try {
    await page.waitForFunction(
      (wanted) => wanted.includes(document.querySelector('#embedder-status')?.dataset.state),
      wanted,
      { timeout },
    );
  } catch (e) {
    const now = await page.locator('#embedder-status').textContent().catch(() => '(absent)');
    throw new Error(`the embedder did not reach ${wanted.join(' or ')} in ${timeout} ms; it says: ${now}`);
  }
  return page.locator('#embedder-status').getAttribute('data-state');
}

/**
 * Unfolds the settings panel: it folds once a tested endpoint is saved, and a folded
 * field cannot be filled.
 */
export async function openSettings(page) {
  await page.evaluate(() => {
    const details = document.querySelector('details.settings');
    if (details && !details.open) details.open = true;
  });
}

/** Fills the settings form and saves it; waits for "Settings saved". */
export async function saveSettings(page, { baseUrl, mode, model, apiKey, timeoutSeconds } = {}) {
  await openSettings(page);
  if (baseUrl !== undefined) await page.fill('#settings-base-url', baseUrl);
  if (apiKey !== undefined) await page.fill('#settings-api-key', apiKey);
  if (model !== undefined) await page.fill('#settings-model', model);
  if (mode !== undefined) await page.selectOption('#settings-mode', mode);
  if (timeoutSeconds !== undefined) await page.fill('#settings-timeout', String(timeoutSeconds));
  await page.click('#settings-save');
  await waitForText(page, '#settings-status', 'Settings saved');
}

/** Waits until the element's text contains `needle`; the failure names the selector and its last text. */
export async function waitForText(page, selector, needle, timeout = 15_000) {
  try {
    await page.waitForFunction(
      ([sel, n]) => {
        const el = document.querySelector(sel);
        return !!el && el.textContent.includes(n);
      },
      [selector, needle],
      { timeout },
    );
  } catch (err) {
    const got = await page.locator(selector).first().textContent({ timeout: 1000 }).catch(() => '<element missing>');
    throw new Error(`waiting for ${selector} to contain ${JSON.stringify(needle)}: last text ${JSON.stringify(got)} (${err.message.split('\n')[0]})`);
  }
}

/**
 * Asks a question and waits for the turn to finish: "#turn-status" no longer says
 * "Asking…" and either an understanding or an error is shown.
 */
export async function ask(page, question, timeout = 20_000) {
  const before = await turnState(page);
  // Remember whether "Asking…" was ever shown, however briefly, so a fast reply that
  // equals the previous one still counts as this turn's.
  await page.evaluate(() => {
    window.__remindSawAsking = false;
    window.__remindObserver?.disconnect();
    const check = () => {
      const s = document.querySelector('#turn-status');
      if (s && s.textContent.includes('Asking')) window.__remindSawAsking = true;
    };
    window.__remindObserver = new MutationObserver(check);
    window.__remindObserver.observe(document.documentElement, { subtree: true, childList: true, characterData: true });
  });
  await page.fill('#ask-input', question);
  await page.click('#ask-submit');
  try {
    await page.waitForFunction(
      (prev) => {
        const text = (sel) => {
          const el = document.querySelector(sel);
          return el ? el.textContent.trim() : null;
        };
        const pending = (text('#turn-status') ?? '').includes('Asking');
        const u = text('#answer-understanding');
        const e = text('#turn-error');
        const done = !!u || !!e;
        const changed = u !== prev.understanding || e !== prev.error;
        return !pending && done && (window.__remindSawAsking || changed);
      },
      before,
      { timeout },
    );
  } catch (err) {
    const state = await turnState(page);
    throw new Error(`turn for ${JSON.stringify(question)} did not finish: ${JSON.stringify(state)} (${err.message.split('\n')[0]})`);
  }
  return turnState(page);
}

/** The visible state of the current turn, for assertions and failure messages. */
export async function turnState(page) {
  return page.evaluate(() => {
    const text = (sel) => {
      const el = document.querySelector(sel);
      return el ? el.textContent.trim() : null;
    };
    return {
      status: text('#turn-status'),
      understanding: text('#answer-understanding'),
      answer: text('#answer-answer'),
      error: text('#turn-error'),
      appliedMemory: text('#applied-memory'),
      memoryCount: text('#memory-count'),
    };
  });
}

/** Records a correction through the "not what I meant" flow; waits for the durable "saved" state. */
export async function correct(page, clarification) {
  await page.locator('#not-what-i-meant').waitFor({ state: 'visible' });
  await page.click('#not-what-i-meant');
  await page.locator('#clarification-input').waitFor({ state: 'visible' });
  await page.fill('#clarification-input', clarification);
  await page.click('#clarification-save');
  try {
    await page.locator('#clarification-status[data-state="saved"]').waitFor({ state: 'attached', timeout: 15_000 });
  } catch (err) {
    const state = await page
      .locator('#clarification-status')
      .evaluate((el) => ({ dataState: el.getAttribute('data-state'), text: el.textContent }))
      .catch(() => '<#clarification-status missing>');
    throw new Error(`#clarification-status never reached data-state=saved: ${JSON.stringify(state)}`);
  }
  const text = await page.locator('#clarification-status').textContent();
  if (!text.includes('Saved')) throw new Error(`#clarification-status is data-state=saved but its text is ${JSON.stringify(text)}`);
}

/** The request bodies the fake server has received. */
export async function fakeRequests(fake) {
  const r = await fetch(`${fake.url}/__requests`);
  return r.json();
}

/** A port nobody listens on (bound, then released). */
export async function closedPort() {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export async function screenshot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, name);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Waits until `n` current lessons have their embedding in (the memory badge's
 * `data-embedded`); `polling` as Playwright takes it (a number of ms times a wait).
 */
export async function waitForEmbedded(page, n, { timeout = 30_000, polling = 'raf' } = {}) {
  await page.waitForFunction((n) => document.querySelector('#memory-count')?.dataset.embedded === n, String(n), { timeout, polling });
}

/**
 * Merges the export `file` of `records` records through the import panel, as a person
 * does, and waits until the page reports them written.
 */
export async function mergeFile(page, file, records, timeout = 120_000) {
  await page.evaluate(() => { document.querySelector('#transfer').open = true; });
  await page.setInputFiles('#import-file', file);
  await page.click('#import-merge');
  await waitForText(page, '#memory-notice', `Merged: ${records} records written`, timeout);
}

/** Waits until #memory-count shows `n`; the failure shows the page state. */
export async function waitForMemoryCount(page, n, timeout = 15_000) {
  try {
    await page.waitForFunction((want) => document.querySelector('#memory-count')?.textContent.trim() === want, String(n), { timeout });
  } catch {
    throw new Error(`#memory-count should be ${n}: ${JSON.stringify(await turnState(page))}`);
  }
}

/**
 * Every row of the records store, read with IndexedDB itself, not through the page,
 * each with the embedding the embeddings store keeps under its id (schema 4) put back
 * in as `embedding`, as one record. An embedding's vector, stored as a Float32Array,
 * comes back as a plain array of its values, with `binary: true` beside it, so rows
 * compare as values. A record its block holds comes back as the JSON of its row would
 * be, read from the block's bytes by `blockRecords`.
 */
export async function storedRows(page) {
  const { rows, blocks, apart } = await page.evaluate(() => new Promise((resolve, reject) => {
    const open = indexedDB.open('remind');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction(['records', 'record_blocks', 'embeddings']);
      const rows = tx.objectStore('records').getAll();
      const blocks = tx.objectStore('record_blocks').getAll();
      const keys = tx.objectStore('embeddings').getAllKeys();
      const apart = tx.objectStore('embeddings').getAll();
      const plain = (row) => (row?.embedding?.vector instanceof Float32Array
        ? { ...row, embedding: { ...row.embedding, vector: Array.from(row.embedding.vector), binary: true } }
        : row);
      tx.oncomplete = () => {
        db.close();
        resolve({
          rows: rows.result.map(plain),
          blocks: blocks.result.map((bytes) => Array.from(bytes)),
          apart: keys.result.map((key, i) => [key, plain({ embedding: apart.result[i] }).embedding]),
        });
      };
      tx.onerror = () => { db.close(); reject(tx.error); };
    };
  }));
  const byId = new Map(apart);
  // The records in their blocks and the rows beside them, in the order of their ids,
  // as one row per record read before the blocks.
  const all = [...blocks.flatMap((bytes) => blockRecords(Uint8Array.from(bytes))), ...rows]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return all.map((row) => (byId.has(row.id) && row.embedding == null ? { ...row, embedding: byId.get(row.id) } : row));
}

/**
 * The records of a block as the records store holds it, each as the JSON of its row:
 * since schema 7 the binary form of `crates/remind-core/src/record_blocks/binary_block.rs`
 * (a 4-byte tag, then postcard: unsigned varints, signed ones zigzagged, a string or a
 * list as its length then its items, an option as 0 or 1 then its value, an enum as
 * its variant's position then its fields), read here on its own so the tests check
 * what the page wrote without the page's code; before it, the UTF-8 of a JSON text.
 */
export function blockRecords(bytes) {
  if (bytes[0] !== 0xFF) return JSON.parse(new TextDecoder().decode(bytes));
  if (bytes[1] !== 0x52 || bytes[2] !== 0x42 || bytes[3] !== 1) throw new Error(`not a block of Remind's: ${bytes.slice(0, 4)}`);
  let at = 4;
  const unsigned = () => {
    let value = 0;
    for (let scale = 1; ; scale *= 128) {
      const byte = bytes[at++];
      if (byte === undefined) throw new Error('the block ends inside a number');
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
    }
  };
  const signed = () => { const n = unsigned(); return n % 2 === 0 ? n / 2 : -(n + 1) / 2; };
  const text = () => { const n = unsigned(); const t = new TextDecoder().decode(bytes.subarray(at, at + n)); at += n; return t; };
  const list = (item) => Array.from({ length: unsigned() }, item);
  const option = (item) => (bytes[at++] === 1 ? item() : null);
  const named = (names) => () => {
    const name = names[unsigned()];
    if (name === undefined) throw new Error('an enum position no variant has');
    return name;
  };
  const record = () => {
    const row = { id: text(), key: text(), question: text(), clarification: text() };
    row.kind = named(['clarification', 'verified_example'])();
    if (row.kind === 'verified_example') Object.assign(row, { understanding: text(), answer: text() });
    row.scope = named(['always', 'every_question'])();
    const notFor = list(text);
    const appliesTo = list(text);
    if (notFor.length) row.not_for = notFor;
    if (appliesTo.length) row.applies_to = appliesTo;
    row.source = named(['user_stated', 'user_confirmed_proposal'])();
    row.created_at = signed();
    row.version = unsigned();
    row.supersedes = option(text);
    row.superseded_by = option(text);
    row.state = named(['current', 'superseded', 'withdrawn'])();
    row.stats = { times_applied: unsigned(), times_failed_after_applied: unsigned() };
    row.change = option(() => ({
      at: signed(),
      by: named(['user', 'import'])(),
      reason: named(['corrected', 'corrected_after_applied', 'edited', 'exceptions_changed', 'withdrawn', 'undone'])(),
    }));
    return row;
  };
  const records = list(record);
  if (at !== bytes.length) throw new Error(`${bytes.length - at} bytes follow the block's last record`);
  return records;
}

/** Puts raw rows into the records store beside the blocks, as a newer Remind, a hostile import of an earlier one or a damaged disk would leave them. */
export async function putRawRows(page, rows) {
  await page.evaluate((rows) => new Promise((resolve, reject) => {
    const open = indexedDB.open('remind');
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction('records', 'readwrite');
      for (const row of rows) tx.objectStore('records').put(row);
      tx.oncomplete = () => { db.close(); resolve(); };
      tx.onerror = () => { db.close(); reject(tx.error); };
    };
  }), rows);
}
