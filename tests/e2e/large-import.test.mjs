// E2E: a large import (11 500 lessons, 5.2 MB) is checked with progress shown and written whole; read back from IndexedDB itself, nothing is partial, a reload says it is reading the memory until it has, and a failed, cancelled or refused import writes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fakeLlmAndSite, freshApp, storedRows, waitForMemoryCount, waitForText, scratchDir } from './helpers.mjs';
import { largeExport } from './large-export.mjs';

const LESSONS = 11_500;
const env = fakeLlmAndSite();
const dir = scratchDir('large');

function writeFile(name, document) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(document));
  return file;
}

/** The fields of every stored row that a merge must carry over, read straight from IndexedDB. */
async function storedLessons(page) {
  const rows = await storedRows(page);
  return rows.map((r) => ({ id: r.id, key: r.key, question: r.question, clarification: r.clarification, state: r.state }));
}

/** Records every text #import-progress shows from now on. */
async function watchProgress(page) {
  await page.evaluate(() => {
    window.__importProgress = [];
    const el = document.querySelector('#import-progress');
    new MutationObserver(() => window.__importProgress.push(el.textContent.trim()))
      .observe(el, { subtree: true, childList: true, characterData: true });
  });
}

async function openTransfer(page) {
  await page.evaluate(() => { document.querySelector('#transfer').open = true; });
}

async function previewLarge(page, file) {
  await openTransfer(page);
  await watchProgress(page);
  await page.setInputFiles('#import-file', file);
  await page.locator('#import-preview').waitFor({ timeout: 120_000 });
}

test('a merge of 11 500 lessons shows its progress, stores every record as the file holds it, and the memory browser draws a page of them once opened', { timeout: 300_000 }, async () => {
  const document = largeExport(LESSONS);
  const file = writeFile('large.json', document);
  assert.ok(fs.statSync(file).size > 5_000_000, 'the file is the issue\'s 5 MB');
  const { context, page } = await freshApp(env, 'large-merge');
  try {
    await previewLarge(page, file);
    const seen = await page.evaluate(() => window.__importProgress);
    assert.ok(seen.some((t) => /^Checking [\d ]+ of 11 500 records…$/.test(t)), `progress was shown: ${JSON.stringify(seen.slice(0, 5))}`);
    assert.match(await page.locator('#import-summary').textContent(), /^11500 new/);
    assert.equal(await page.locator('#import-preview tbody tr').count(), 100, 'the table shows a page of keys');
    assert.match(await page.locator('#import-more').textContent(), /and 11400 more/);
    assert.equal((await storedLessons(page)).length, 0, 'a preview writes nothing');

    await page.click('#import-merge');
    await waitForText(page, '#memory-notice', `Merged: ${LESSONS} records written`, 120_000);
    const seenWriting = await page.evaluate(() => window.__importProgress);
    assert.ok(seenWriting.includes('Writing 11 500 records…'), `writing was shown: ${JSON.stringify(seenWriting.slice(-3))}`);
    // The store's running count, batch by batch, then the commit.
    const counts = seenWriting
      .map((t) => /^Writing ([\d ]+) of 11 500 records…$/.exec(t)?.[1].replace(/ /g, ''))
      .filter(Boolean)
      .map(Number);
    assert.ok(counts.length >= 2 && counts.every((n) => n > 0 && n < LESSONS), `a running count was shown: ${JSON.stringify(counts)}`);
    assert.deepEqual(counts, [...counts].sort((a, b) => a - b), 'the count only grows');
    assert.ok(seenWriting.includes('Saving 11 500 records…'), `the commit was shown: ${JSON.stringify(seenWriting.slice(-3))}`);
    await waitForMemoryCount(page, LESSONS, 60_000);

    const rows = await storedLessons(page);
    assert.equal(rows.length, LESSONS, 'every record is stored');
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const record of document.records) {
      const row = byId.get(record.id);
      assert.ok(row, `${record.id} is stored`);
      assert.deepEqual(row, { id: record.id, key: record.key, question: record.question, clarification: record.clarification, state: 'current' });
    }
    assert.equal(await page.locator('#memory-list .memory-item').count(), 0, 'the memory browser, closed, draws nothing');
    await page.evaluate(() => { document.querySelector('#memory-browser').open = true; });
    await page.waitForFunction(() => document.querySelectorAll('#memory-list .memory-item').length === 100);
    assert.match(await page.locator('#memory-more').textContent(), /Showing 100 of 11500 lessons/);

    // A reload says it is reading the memory until it has, rather than showing 0.
    await page.addInitScript(() => {
      window.__readingShown = [];
      new MutationObserver(() => {
        const text = document.querySelector('#memory-reading')?.textContent ?? null;
        if (text !== null && window.__readingShown.at(-1) !== text) window.__readingShown.push(text);
      }).observe(document, { subtree: true, childList: true, characterData: true });
    });
    await page.reload();
    await waitForMemoryCount(page, LESSONS, 60_000);
    await page.waitForFunction(() => document.querySelector('#memory-reading')?.textContent === '');
    const shown = await page.evaluate(() => window.__readingShown);
    assert.equal(shown[0], ' (reading the memory…)', `shown while reading: ${JSON.stringify(shown)}`);
  } finally {
    await context.close().catch(() => {});
  }
});

test('a large merge whose write fails, a cancelled one and a file refused at its last record write nothing', { timeout: 300_000 }, async () => {
  const file = writeFile('large.json', largeExport(LESSONS));
  const bad = largeExport(LESSONS);
  bad.records[LESSONS - 1].clarification = 'my password: hunter2';
  const refusedFile = writeFile('refused.json', bad);
  const { context, page } = await freshApp(env, 'large-fail');
  try {
    // The write fails after all its puts were issued, in batches: the store rolls back.
    await previewLarge(page, file);
    await page.evaluate(() => { window.__remindFailNextWrite = 'quota'; });
    await page.click('#import-merge');
    await page.waitForFunction(() => document.querySelector('#memory-notice')?.dataset.state === 'error', null, { timeout: 120_000 });
    assert.equal((await storedLessons(page)).length, 0, 'a failed write leaves no record');
    await waitForMemoryCount(page, 0);

    await page.click('#import-cancel');
    assert.equal(await page.locator('#import-preview').count(), 0);
    assert.equal((await storedLessons(page)).length, 0, 'a cancelled import leaves no record');

    await page.setInputFiles('#import-file', refusedFile);
    await waitForText(page, '#memory-notice', 'Nothing changed', 120_000);
    assert.match(await page.locator('#memory-notice').textContent(), /records\[11499\]\.clarification/);
    assert.equal(await page.locator('#import-preview').count(), 0, 'no preview for a refused file');
    assert.equal((await storedLessons(page)).length, 0, 'a refused file writes nothing');

    await page.reload();
    await page.locator('#ask-input').waitFor();
    await waitForMemoryCount(page, 0);
  } finally {
    await context.close().catch(() => {});
  }
});
