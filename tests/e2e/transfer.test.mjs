// E2E: export the memory in one browser profile, import it into a fresh one, and the lesson applies there; a bad file changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  ask, correct, fakeLlmAndSite, fakeRequests, firstPage, freshApp, freshProfileDir, launch, openApp, saveSettings, storedRows, waitForEmbedded, waitForMemoryCount, waitForText, scratchDir,
} from './helpers.mjs';

const CLARIFICATION = 'when I ask for like, I want a synonym.';

const env = fakeLlmAndSite();

async function openTransfer(page) {
  await page.evaluate(() => { document.querySelector('#transfer').open = true; });
}

test('a memory exported from one profile applies after import into a fresh one', { timeout: 120_000 }, async () => {
  const exported = path.join(scratchDir('export'), 'memory.json');

  const first = await launch(freshProfileDir('export'));
  try {
    const page = await firstPage(first);
    await openApp(page, env.site.url);
    await saveSettings(page, { baseUrl: env.fake.baseUrl, apiKey: 'sk-never-exported-0123456789' });
    await ask(page, 'What is like < fast > ?');
    await correct(page, CLARIFICATION);
    await openTransfer(page);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-button')]);
    await download.saveAs(exported);
  } finally {
    await first.close().catch(() => {});
  }
  const text = fs.readFileSync(exported, 'utf8');
  const doc = JSON.parse(text);
  assert.equal(doc.format, 'remind-memory');
  assert.equal(doc.version, 2);
  assert.equal(doc.records.length, 1);
  assert.equal(doc.records[0].clarification, CLARIFICATION);
  assert.ok(!('embedding' in doc.records[0]), 'embeddings are left out unless asked for');
  assert.ok(!text.includes('sk-never-exported'), 'the API key is never exported');
  assert.ok(!text.includes(env.fake.baseUrl), 'settings are never exported');

  const second = await launch(freshProfileDir('import'));
  try {
    const page = await firstPage(second);
    await openApp(page, env.site.url);
    await saveSettings(page, { baseUrl: env.fake.baseUrl });
    await waitForMemoryCount(page, 0);
    await openTransfer(page);
    await page.setInputFiles('#import-file', exported);
    await page.locator('#import-preview').waitFor();
    assert.match(await page.locator('#import-summary').textContent(), /^1 new/);
    assert.match(await page.locator('#import-embeddings').textContent(), /^The file carries no embeddings/);
    await waitForMemoryCount(page, 0); // a preview writes nothing
    await page.click('#import-merge');
    await waitForText(page, '#memory-notice', 'Merged: 1 records written');
    await waitForMemoryCount(page, 1);

    await page.reload();
    await page.locator('#ask-input').waitFor();
    await waitForMemoryCount(page, 1);
    await fetch(`${env.fake.url}/__reset`, { method: 'POST' });
    const state = await ask(page, 'What is like < happy > ?');
    assert.match(state.understanding, /synonym/, JSON.stringify(state));
    const [request] = await fakeRequests(env.fake);
    assert.ok(request.prompt.includes(`What is like < happy > ? | clarification: ${CLARIFICATION}`));
  } finally {
    await second.close().catch(() => {});
  }
});

test('a memory exported with its embeddings brings them into a browser that cannot compute them, bit for bit', { timeout: 120_000 }, async () => {
  const exported = path.join(scratchDir('export'), 'memory.json');
  let vector;
  const first = await launch(freshProfileDir('export-embedded'));
  try {
    const page = await firstPage(first);
    await openApp(page, env.site.url, { embedder: ['ready'] });
    await saveSettings(page, { baseUrl: env.fake.baseUrl });
    await ask(page, 'What is like < fast > ?');
    await correct(page, CLARIFICATION);
    await waitForEmbedded(page, 1);
    [{ embedding: { vector } }] = await storedRows(page);
    await openTransfer(page);
    await page.check('#export-embeddings');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-button')]);
    await download.saveAs(exported);
    // Back into the browser that made it: the same model, so they would be used.
    await page.setInputFiles('#import-file', exported);
    await page.locator('#import-preview').waitFor();
    assert.equal(
      await page.locator('#import-embeddings').textContent(),
      "Every record of the file carries an embedding from this page's model: they are used as they are.",
    );
    await page.click('#import-cancel');
  } finally {
    await first.close().catch(() => {});
  }
  const doc = JSON.parse(fs.readFileSync(exported, 'utf8'));
  assert.equal(doc.version, 2);
  const { embedding } = doc.records[0];
  assert.equal(typeof embedding.model, 'string');
  assert.equal(embedding.vector.length, 2048, 'packed: 384 numbers of 4 bytes, in base64');

  const second = await launch(freshProfileDir('import-embedded'));
  try {
    // No embedder here: whatever embedding the memory gets came from the file.
    await second.route('**/remind-embedder*', (route) => route.abort());
    const page = await firstPage(second);
    await openApp(page, env.site.url, { embedder: ['failed'] });
    await openTransfer(page);
    await page.setInputFiles('#import-file', exported);
    await page.locator('#import-merge').waitFor();
    assert.equal(
      await page.locator('#import-embeddings').textContent(),
      `Every record of the file carries an embedding (${embedding.model}); they are used as they are if the model this page loads is the same.`,
    );
    await page.click('#import-merge');
    await waitForText(page, '#memory-notice', 'Merged: 1 records written');
    await waitForEmbedded(page, 1);
    const [row] = await storedRows(page);
    assert.equal(row.embedding.model, embedding.model);
    assert.ok(row.embedding.binary, 'stored as binary, apart from the record');
    assert.deepEqual(row.embedding.vector, vector, 'the vector the exporting browser computed');
    await page.reload();
    await page.locator('#ask-input').waitFor();
    await waitForEmbedded(page, 1);
  } finally {
    await second.close().catch(() => {});
  }
});

test('a malformed or hostile file is refused with the field named, and nothing changes', { timeout: 90_000 }, async () => {
  const dir = scratchDir('bad');
  const files = {
    'not-json.json': ['{ this is not json', /JSON/i],
    'wrong-format.json': [JSON.stringify({ format: 'something-else', version: 1, exported_at: 0, app_version: 'x', records: [] }), /format/],
    'future.json': [JSON.stringify({ format: 'remind-memory', version: 99, exported_at: 0, app_version: 'x', records: [] }), /version/],
  };
  const { context, page } = await freshApp(env, 'bad-import');
  try {
    await ask(page, 'What is like < fast > ?');
    await correct(page, CLARIFICATION);
    await openTransfer(page);
    for (const [name, [body, pattern]] of Object.entries(files)) {
      const file = path.join(dir, name);
      fs.writeFileSync(file, body);
      const previous = await page.locator('#memory-notice').textContent();
      await page.setInputFiles('#import-file', file);
      await page.waitForFunction(
        (prev) => {
          const el = document.querySelector('#memory-notice');
          return el.dataset.state === 'error' && el.textContent !== prev;
        },
        previous,
      );
      const notice = await page.locator('#memory-notice').textContent();
      assert.match(notice, /Nothing changed/, `${name}: ${notice}`);
      assert.match(notice, pattern, `${name}: ${notice}`);
      assert.equal(await page.locator('#import-preview').count(), 0, `${name}: no preview for a refused file`);
    }
    await page.reload();
    await page.locator('#ask-input').waitFor();
    await waitForMemoryCount(page, 1);
  } finally {
    await context.close().catch(() => {});
  }
});
