// Smoke test against the real local LLM (scripts/llm-server.py on 127.0.0.1:8081): the page with default settings gets a parsed answer.
//
// Slow (model load plus CPU inference), so scripts/test runs it last and on its own:
//   node --test tests/e2e/real-llm.smoke.mjs
// REMIND_SKIP_LLM=1 skips it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ask, firstPage, freshProfileDir, launch, openApp, ROOT, screenshot, serveDist } from './helpers.mjs';

const SKIP = process.env.REMIND_SKIP_LLM === '1';
const CACHE = process.env.REMIND_CACHE ?? path.join(os.homedir(), '.cache', 'remind');
const PYTHON = path.join(CACHE, 'llm-venv', 'bin', 'python');
const HOST = '127.0.0.1';
const PORT = 8081; // the page's default base URL is http://127.0.0.1:8081/v1
const LOG = path.join(ROOT, 'artifacts', 'llm-server.smoke.log');

function portInUse(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: HOST, port }, () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  });
}

async function waitHealthy(proc, timeoutMs) {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (proc.exitCode !== null) throw new Error(`llm-server exited with ${proc.exitCode}; log tail:\n${tail(LOG)}`);
    try {
      const r = await fetch(`http://${HOST}:${PORT}/health`);
      if (r.ok) return Date.now() - t0;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`llm-server not healthy after ${timeoutMs / 1000}s; log tail:\n${tail(LOG)}`);
}

function tail(file, lines = 30) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '<no log>';
  }
}

let site;
let llm;
before(async () => {
  if (SKIP) return;
  site = await serveDist();
  if (await portInUse(PORT)) {
    throw new Error(`port ${PORT} is already in use (is scripts/run running?); stop it so the smoke test can start its own LLM server`);
  }
  fs.mkdirSync(path.dirname(LOG), { recursive: true });
  const out = fs.openSync(LOG, 'w');
  const origin = new URL(site.url).origin;
  llm = spawn(PYTHON, [path.join(ROOT, 'scripts', 'llm-server.py'), '--host', HOST, '--port', String(PORT), '--cors-origin', origin], {
    stdio: ['ignore', out, out],
  });
  const ms = await waitHealthy(llm, 180_000);
  console.log(`# llm-server healthy after ${(ms / 1000).toFixed(1)}s (log: ${LOG})`);
});
after(async () => {
  if (llm && llm.exitCode === null) {
    const exited = new Promise((r) => llm.once('exit', r));
    llm.kill('SIGTERM');
    const timer = setTimeout(() => llm.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  await site?.close();
});

test('the real local LLM streams its answer through the page with default settings', { skip: SKIP && 'REMIND_SKIP_LLM=1', timeout: 400_000 }, async () => {
  const context = await launch(freshProfileDir('smoke'));
  try {
    const page = await firstPage(context);
    await openApp(page, site.url);
    assert.equal(await page.inputValue('#settings-base-url'), `http://${HOST}:${PORT}/v1`, 'default base URL');
    // Every text the turn shows while the reply streams in.
    await page.evaluate(() => {
      window.__streamed = [];
      new MutationObserver(() => {
        const text = document.querySelector('#conversation-turns > .turn:last-child .turn-streamed')?.textContent ?? '';
        if (text && text !== 'Asking…' && window.__streamed.at(-1) !== text) window.__streamed.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    const t0 = Date.now();
    const state = await ask(page, 'What is the synonym for < happy > ?', 120_000);
    console.log(`# real LLM turn took ${((Date.now() - t0) / 1000).toFixed(1)}s: ${JSON.stringify(state)}`);
    const streamed = await page.evaluate(() => window.__streamed);
    console.log(`# the reply was shown ${streamed.length} times while it streamed; first: ${JSON.stringify(streamed[0])}`);
    assert.ok(streamed.length >= 2, `the reply appeared as it was generated: ${JSON.stringify(streamed)}`);
    await screenshot(page, 'real-llm-smoke.png');
    assert.equal(state.error ?? '', '', `#turn-error: ${state.error}`);
    assert.ok((state.understanding ?? '') !== '', `#answer-understanding is empty: ${JSON.stringify(state)}`);
    assert.ok((state.answer ?? '') !== '', `#answer-answer is empty: ${JSON.stringify(state)}`);
  } finally {
    await context.close().catch(() => {});
  }
});

/** Opens the correction form under the current reply and saves `text` with the chosen scope. */
async function correctWith(page, text, scope) {
  await page.click('#not-what-i-meant');
  await page.fill('#clarification-input', text);
  await page.check(scope);
  await page.click('#clarification-save');
}

async function appliedTexts(page) {
  return page.locator('#applied-memory .applied-clarification').allTextContents();
}

test('with the real LLM, a lesson on Lyon reaches Berlin but not "How old is Lyon?", a standing "I use Zed" reaches the editor question, and a one-time "miles" is never stored', { skip: SKIP && 'REMIND_SKIP_LLM=1', timeout: 900_000 }, async () => {
  const context = await launch(freshProfileDir('smoke-stories'));
  try {
    const page = await firstPage(context);
    await openApp(page, site.url);
    const KM = 'I always want distances in kilometres.';
    await ask(page, 'How far is Lyon from Paris?', 180_000);
    await correctWith(page, KM, '#clarification-reach-similar');
    await page.locator('#clarification-status[data-state="saved"]').waitFor({ timeout: 15_000 });

    let state = await ask(page, 'How far is Berlin from Munich?', 180_000);
    console.log(`# Berlin: ${JSON.stringify(state)}`);
    assert.deepEqual(await appliedTexts(page), [KM], 'the Lyon lesson reaches Berlin by its kind of request');
    assert.match(state.answer ?? '', /\bkm\b|kilomet/i, `the answer is in kilometres: ${JSON.stringify(state)}`);
    state = await ask(page, 'How old is Lyon?', 180_000);
    console.log(`# Lyon's age: ${JSON.stringify(state)}`);
    assert.deepEqual(await appliedTexts(page), [], 'another request about Lyon gets no lesson');

    const ZED = 'I no longer use VS Code. I use Zed.';
    await ask(page, 'Which editor should I open this project in?', 180_000);
    await correctWith(page, ZED, '#clarification-reach-every');
    await page.locator('#clarification-status[data-state="saved"]').waitFor({ timeout: 15_000 });
    state = await ask(page, 'What editor should I use for this repo?', 180_000);
    console.log(`# editor: ${JSON.stringify(state)}`);
    assert.ok((await appliedTexts(page)).includes(ZED), 'the standing preference goes with the question');
    assert.match(`${state.understanding} ${state.answer}`, /\bzed\b/i, `the answer follows it: ${JSON.stringify(state)}`);

    await ask(page, 'How far is the warehouse from the port for this delivery?', 180_000);
    await correctWith(page, 'For this one shipment, use miles.', '#clarification-once');
    await page.waitForFunction(() => {
      const p = document.querySelector('#prompt-sent');
      return p && p.textContent.includes('For this one shipment, use miles.');
    }, null, { timeout: 180_000 });
    state = await ask(page, 'How far is Berlin from Munich?', 180_000);
    console.log(`# Berlin again: ${JSON.stringify(state)}`);
    assert.ok((await appliedTexts(page)).includes(KM), 'the lasting lesson still applies');
    assert.ok(!(await page.locator('#prompt-sent').textContent()).includes('miles'), 'the one-time instruction is gone');
    // The memory browser draws its lessons once opened.
    await page.evaluate(() => { document.querySelector('#memory-browser').open = true; });
    await page.locator('#memory-list .memory-item').first().waitFor();
    assert.equal(await page.locator('#memory-list .memory-item').count(), 2, 'only the two lasting lessons are stored');
    await screenshot(page, 'real-llm-stories.png');
  } finally {
    await context.close().catch(() => {});
  }
});
