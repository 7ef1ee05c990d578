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

test('the real local LLM answers through the page with default settings', { skip: SKIP && 'REMIND_SKIP_LLM=1', timeout: 400_000 }, async () => {
  const context = await launch(freshProfileDir('smoke'));
  try {
    const page = await firstPage(context);
    await openApp(page, site.url);
    assert.equal(await page.inputValue('#settings-base-url'), `http://${HOST}:${PORT}/v1`, 'default base URL');
    const t0 = Date.now();
    const state = await ask(page, 'What is the synonym for < happy > ?', 120_000);
    console.log(`# real LLM turn took ${((Date.now() - t0) / 1000).toFixed(1)}s: ${JSON.stringify(state)}`);
    await screenshot(page, 'real-llm-smoke.png');
    assert.equal(state.error ?? '', '', `#turn-error: ${state.error}`);
    assert.ok((state.understanding ?? '') !== '', `#answer-understanding is empty: ${JSON.stringify(state)}`);
    assert.ok((state.answer ?? '') !== '', `#answer-answer is empty: ${JSON.stringify(state)}`);
  } finally {
    await context.close().catch(() => {});
  }
});
