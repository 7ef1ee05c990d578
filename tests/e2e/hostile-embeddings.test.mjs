// E2E: embeddings that cannot be compared (issue 26) — a stored row of 3e38s beside a good lesson does not stop a rephrasing from getting that lesson (and is re-embedded), and an import whose embedding overflows a 32-bit float is refused naming the field, writing nothing; the store is read back directly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { queryFromPrompt } from './fake-llm-server.mjs';
import {
  ask, correct, fakeLlmAndSite, fakeRequests, firstPage, freshApp, freshProfileDir, launch, openApp, saveSettings,
  waitForEmbedder, waitForMemoryCount, storedRows, putRawRows, scratchDir,
} from './helpers.mjs';

const CLARIFICATION = 'when I ask for like, I want a synonym.';
const DIMENSIONS = 384;

const env = fakeLlmAndSite();

/** Whether a stored vector is one retrieval can compare: finite values, unit length. */
function isUnitVector(vector) {
  if (!Array.isArray(vector) || !vector.every(Number.isFinite)) return false;
  const length = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
  return Math.abs(length - 1) < 1e-2;
}

test('a stored embedding of 3e38s beside a good lesson does not stop a rephrasing from getting the good lesson', { timeout: 240_000 }, async () => {
  const context = await launch(freshProfileDir('hostile-row'));
  try {
    const page = await firstPage(context);
    await openApp(page, env.site.url, { embedder: 'ready' });
    await saveSettings(page, { baseUrl: env.fake.baseUrl, mode: 'completion' });
    await ask(page, 'What is like < fast > ?');
    await correct(page, CLARIFICATION);
    await waitForMemoryCount(page, 1);
    // The next question embeds the lesson, under the page's own model.
    await ask(page, 'What is like < fast > ?');
    const [good] = await storedRows(page);
    assert.ok(isUnitVector(good.embedding?.vector), `the lesson is embedded: ${JSON.stringify(good.embedding)?.slice(0, 80)}`);
    assert.equal(good.embedding.vector.length, DIMENSIONS);
    assert.equal(good.embedding.binary, true, 'stored as a Float32Array');

    // Right model, right length, every value finite; every cosine with it is NaN. Its
    // id sorts before the page's ids ("m-…"), so it is the first candidate compared.
    const hostile = {
      ...good,
      id: 'a-hostile',
      key: 'how do i boil an < > ?',
      question: 'How do I boil an < egg > ?',
      clarification: 'I want it soft-boiled.',
      stats: { times_applied: 0, times_failed_after_applied: 0 },
      change: null,
      embedding: { model: good.embedding.model, vector: Array(DIMENSIONS).fill(3e38) },
    };
    await putRawRows(page, [hostile]);

    await page.reload({ waitUntil: 'load' });
    await page.locator('#ask-input').waitFor({ state: 'visible' });
    await waitForEmbedder(page, 'ready');
    await waitForMemoryCount(page, 2);
    assert.equal(await page.locator('#unreadable-records').count(), 0, 'no lesson is listed as unreadable');

    // Too far for edit distance, close in meaning (cosine about 0.92): see embedder.test.mjs.
    await fetch(`${env.fake.url}/__reset`, { method: 'POST' });
    const state = await ask(page, 'Tell me what is like < slow > ?');
    assert.equal(state.error ?? '', '', `unexpected #turn-error: ${state.error}`);
    const applied = page.locator('#applied-memory .applied-lesson').first();
    await applied.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {
      throw new Error(`no lesson was applied to the rephrasing: ${JSON.stringify(state)}`);
    });
    const score = Number(await applied.getAttribute('data-score'));
    assert.ok(score >= 0.8 && score < 1, `the good lesson is applied by cosine, got data-score ${score}`);
    const [request] = await fakeRequests(env.fake);
    assert.equal(queryFromPrompt(request.prompt), `Tell me what is like < slow > ? | clarification: ${CLARIFICATION}`);

    // Read back directly: the 3e38s were dropped on reading and the lesson embedded
    // afresh; the good lesson kept its embedding.
    const rows = await storedRows(page);
    assert.equal(rows.length, 2);
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    assert.ok(isUnitVector(byId['a-hostile'].embedding?.vector), 'the hostile row now holds a unit vector');
    assert.equal(byId['a-hostile'].clarification, hostile.clarification, 'the lesson itself is untouched');
    assert.deepEqual(byId[good.id].embedding, good.embedding);
  } finally {
    await context.close().catch(() => {});
  }
});

test('an import whose embedding holds 1e39 is refused naming the field, and nothing is written', { timeout: 150_000 }, async () => {
  const dir = scratchDir('hostile-import');
  const fileWith = (name, vector) => {
    const record = {
      id: 'imported-1', key: 'what is like < > ?', question: 'What is like < fast > ?', clarification: CLARIFICATION,
      kind: 'clarification', scope: 'always', source: 'user_stated', created_at: 1, version: 1,
      supersedes: null, superseded_by: null, state: 'current',
      stats: { times_applied: 0, times_failed_after_applied: 0 },
      embedding: { model: 'any-model', vector },
    };
    const file = path.join(dir, name);
    fs.writeFileSync(file, JSON.stringify({ format: 'remind-memory', version: 1, exported_at: 0, app_version: 'e2e', records: [record] }));
    return file;
  };
  const unit = [1, ...Array(DIMENSIONS - 1).fill(0)];
  const overflowing = [1e39, ...Array(DIMENSIONS - 1).fill(0)];
  const { context, page } = await freshApp(env, 'hostile-import');
  try {
    await page.evaluate(() => { document.querySelector('#transfer').open = true; });
    // The same file with a unit vector is valid: the refusal below is the vector's alone.
    await page.setInputFiles('#import-file', fileWith('unit.json', unit));
    await page.locator('#import-preview').waitFor({ timeout: 10_000 });
    assert.match(await page.locator('#import-summary').textContent(), /^1 new/);
    await page.click('#import-cancel');

    const previous = await page.locator('#memory-notice').textContent();
    await page.setInputFiles('#import-file', fileWith('overflowing.json', overflowing));
    await page.waitForFunction(
      (prev) => {
        const el = document.querySelector('#memory-notice');
        return el?.dataset.state === 'error' && el.textContent !== prev;
      },
      previous,
      { timeout: 10_000 },
    );
    const notice = await page.locator('#memory-notice').textContent();
    assert.match(notice, /Nothing changed/, notice);
    assert.match(notice, /records\[0\]\.embedding\.vector: holds 1e39 at \[0\], which is not a finite number/, notice);
    assert.equal(await page.locator('#import-preview').count(), 0, 'no preview for a refused file');
    assert.deepEqual(await storedRows(page), [], 'nothing is written');

    await page.reload({ waitUntil: 'load' });
    await page.locator('#ask-input').waitFor({ state: 'visible' });
    await waitForMemoryCount(page, 0);
    assert.deepEqual(await storedRows(page), [], 'nothing is written, after a reload either');
  } finally {
    await context.close().catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
