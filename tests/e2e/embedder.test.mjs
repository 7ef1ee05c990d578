// E2E: matching by meaning in the page — the MiniLM worker downloads the model with a progress bar, reuses a lesson for a rephrased question (not for the opposite one), is loaded from the Cache API on the next visit, and when the model cannot load the page says so and matches by wording.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { queryFromPrompt } from './fake-llm-server.mjs';
import {
  ask, correct, DIST, fakeLlmAndSite, fakeRequests, firstPage, freshProfileDir, launch, openApp, saveSettings, serveDist,
  waitForEmbedder, waitForMemoryCount, scratchDir,
} from './helpers.mjs';

const CLARIFICATION = 'when I ask for like, I want a synonym.';

const env = fakeLlmAndSite();

/** Records every state #embedder-status passes through, from the first paint on. */
function recordEmbedderStates(page) {
  return page.addInitScript(() => {
    window.__embedderStates = [];
    new MutationObserver(() => {
      const state = document.querySelector('#embedder-status')?.dataset.state;
      if (state && window.__embedderStates.at(-1) !== state) window.__embedderStates.push(state);
    }).observe(document, { subtree: true, childList: true, attributes: true });
  });
}

test('a rephrased question reuses a lesson by meaning, and the next visit loads the model from the cache', { timeout: 240_000 }, async () => {
  const context = await launch(freshProfileDir('embedder'));
  try {
    const page = await firstPage(context);
    await recordEmbedderStates(page);
    await openApp(page, env.site.url, { embedder: 'ready' });
    const states = await page.evaluate(() => window.__embedderStates);
    assert.ok(states.includes('downloading'), `the first visit downloads the model: ${states}`);
    assert.match(await page.locator('#embedder-status').textContent(), /matched to lessons by meaning.*downloaded/);
    await saveSettings(page, { baseUrl: env.fake.baseUrl, mode: 'completion' });

    await ask(page, 'What is like < fast > ?');
    await correct(page, CLARIFICATION);
    await waitForMemoryCount(page, 1);

    // The same request in other words: too far for edit distance (8 edits), close in
    // meaning (cosine about 0.92).
    await fetch(`${env.fake.url}/__reset`, { method: 'POST' });
    const state = await ask(page, 'Tell me what is like < slow > ?');
    assert.equal(state.error ?? '', '', `unexpected #turn-error: ${state.error}`);
    const applied = page.locator('#applied-memory .applied-lesson').first();
    await applied.waitFor({ state: 'visible' });
    const score = Number(await applied.getAttribute('data-score'));
    assert.ok(score >= 0.8 && score < 1, `a paraphrase is applied by cosine, got data-score ${score}`);
    assert.match(await applied.textContent(), /cosine/);
    const [request] = await fakeRequests(env.fake);
    assert.equal(queryFromPrompt(request.prompt), `Tell me what is like < slow > ? | clarification: ${CLARIFICATION}`);

    // The opposite request must not get the lesson.
    await ask(page, 'What is unlike < slow > ?');
    assert.equal(await page.locator('#applied-memory').count(), 0, 'the lesson for "like" is not applied to "unlike"');

    // Second visit: the model comes from the Cache API, not the network.
    const modelRequests = [];
    context.on('request', (r) => { if (r.url().includes('/minilm/')) modelRequests.push(r.url()); });
    await page.reload({ waitUntil: 'load' });
    await waitForEmbedder(page, 'ready');
    assert.match(await page.locator('#embedder-status').textContent(), /loaded from this browser's cache/);
    assert.deepEqual(modelRequests, [], 'no model file is downloaded again');
  } finally {
    await context.close().catch(() => {});
  }
});

test('when the model cannot load, the page says so and matches questions by wording', { timeout: 180_000 }, async () => {
  // The same page, served without its model files.
  const dir = scratchDir('no-model');
  for (const entry of fs.readdirSync(DIST)) {
    if (entry !== 'minilm') fs.symlinkSync(path.join(DIST, entry), path.join(dir, entry));
  }
  const site = await serveDist({ dir });
  const context = await launch(freshProfileDir('no-model'));
  try {
    const page = await firstPage(context);
    await openApp(page, site.url, { embedder: 'failed' });
    const status = await page.locator('#embedder-status').textContent();
    assert.match(status, /could not load.*404.*matched by wording/, status);
    await saveSettings(page, { baseUrl: env.fake.baseUrl, mode: 'completion' });

    await ask(page, 'What is like < fast > ?');
    await correct(page, CLARIFICATION);
    await waitForMemoryCount(page, 1);
    const state = await ask(page, 'What is like < happy > ?');
    assert.equal(state.error ?? '', '', `unexpected #turn-error: ${state.error}`);
    assert.match(await page.locator('#applied-memory').textContent(), /fits its scope “what is like ___”/);
  } finally {
    await context.close().catch(() => {});
    await site.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('when the embedder worker itself cannot be fetched, the page says so rather than waiting for it', { timeout: 120_000 }, async () => {
  const context = await launch(freshProfileDir('no-worker'));
  try {
    // A blocked or missing worker file: the browser reports it with a bare error event.
    await context.route('**/remind-embedder*', (route) => route.abort());
    const page = await firstPage(context);
    await openApp(page, env.site.url, { embedder: 'failed' });
    const status = await page.locator('#embedder-status').textContent();
    assert.match(status, /embedder worker stopped.*matched by wording/, status);
  } finally {
    await context.close().catch(() => {});
  }
});
