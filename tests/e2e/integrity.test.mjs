// E2E: memory that cannot be corrupted — two real tabs racing on one IndexedDB, unreadable rows, a newer or blocked database, and leaving while a save is in flight; every assertion reads the store's rows back directly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ask, fakeLlmAndSite, firstPage, freshProfileDir, launch, openApp, saveSettings, waitForMemoryCount, waitForText, secondWindow, storedRows, putRawRows, scratchDir,
} from './helpers.mjs';

const env = fakeLlmAndSite();

/** The current rows of each key: the invariant is at most one. */
function currentByKey(rows) {
  const byKey = new Map();
  for (const r of rows) if (r.state === 'current') byKey.set(r.key, (byKey.get(r.key) ?? 0) + 1);
  return byKey;
}

function assertOneCurrentPerKey(rows, context) {
  for (const [key, n] of currentByKey(rows)) assert.ok(n <= 1, `${context}: ${n} current records for ${JSON.stringify(key)}`);
}

async function twoTabs(label) {
  const context = await launch(freshProfileDir(label));
  const a = await firstPage(context);
  await openApp(a, env.site.url);
  await saveSettings(a, { baseUrl: env.fake.baseUrl });
  const b = await secondWindow(context);
  await openApp(b, env.site.url);
  return { context, a, b };
}

async function openCorrection(page, clarification) {
  await page.locator('#not-what-i-meant').waitFor({ state: 'visible' });
  await page.click('#not-what-i-meant');
  await page.locator('#clarification-input').waitFor({ state: 'visible' });
  await page.fill('#clarification-input', clarification);
}

/** Waits until the correction's save has ended; returns its state and text. */
async function saveOutcome(page) {
  await page.waitForFunction(() => {
    const s = document.querySelector('#clarification-status')?.dataset.state;
    return s === 'saved' || s === 'error';
  }, null, { timeout: 15_000 });
  return page.locator('#clarification-status').evaluate((el) => ({ state: el.dataset.state, text: el.textContent }));
}

async function openMemory(page) {
  await page.evaluate(() => { document.querySelector('#memory-browser').open = true; });
}

test('twenty simultaneous saves of one question from two tabs leave one current lesson and lose nothing called saved', { timeout: 300_000 }, async () => {
  const { context, a, b } = await twoTabs('race-save');
  try {
    for (let trial = 0; trial < 20; trial++) {
      // Even trials teach a fresh question (its own key); odd ones replace the lesson
      // of the trial before.
      const question = `Round ${trial - (trial % 2)}: what is like < fast > ?`;
      await ask(a, question);
      await ask(b, question);
      const textA = `tab A wants a synonym (trial ${trial})`;
      const textB = `tab B wants an antonym (trial ${trial})`;
      await openCorrection(a, textA);
      await openCorrection(b, textB);
      await Promise.all([a.click('#clarification-save'), b.click('#clarification-save')]);
      const [outA, outB] = await Promise.all([saveOutcome(a), saveOutcome(b)]);

      const rows = await storedRows(a);
      assertOneCurrentPerKey(rows, `trial ${trial}`);
      const texts = rows.map((r) => r.clarification);
      for (const [out, text, tab] of [[outA, textA, 'A'], [outB, textB, 'B']]) {
        if (out.state === 'saved') assert.ok(texts.includes(text), `trial ${trial}: tab ${tab} said saved but the store lacks its lesson`);
        else assert.ok(!texts.includes(text), `trial ${trial}: tab ${tab} was refused yet its lesson is stored`);
      }
      assert.ok(outA.state === 'saved' || outB.state === 'saved', `trial ${trial}: one of the two saves goes through`);
      const refused = [outA, outB].filter((o) => o.state === 'error');
      for (const r of refused) assert.match(r.text, /changed|another tab|current/i, `trial ${trial}: a refusal says why: ${r.text}`);
    }
    // The backup of what the race left is accepted by Remind's own import.
    await a.evaluate(() => { document.querySelector('#transfer').open = true; });
    const [download] = await Promise.all([a.waitForEvent('download'), a.click('#export-button')]);
    await a.setInputFiles('#import-file', await download.path());
    await a.locator('#import-preview').waitFor();
    const summary = await a.locator('#import-summary').textContent();
    assert.match(summary, /^0 new, 10 identical/, summary);
    assert.match(summary, /0 conflict/, summary);
  } finally {
    await context.close().catch(() => {});
  }
});

test('an edit in one tab racing an undo in the other never leaves two current lessons', { timeout: 240_000 }, async () => {
  const { context, a, b } = await twoTabs('race-undo');
  try {
    await openMemory(a);
    await openMemory(b);
    for (let trial = 0; trial < 10; trial++) {
      const question = `Round ${trial}: what is like < fast > ?`;
      await ask(a, question);
      await openCorrection(a, `first lesson ${trial}`);
      await a.click('#clarification-save');
      assert.equal((await saveOutcome(a)).state, 'saved');
      await ask(a, question);
      await openCorrection(a, `second lesson ${trial}`);
      await a.click('#clarification-save');
      assert.equal((await saveOutcome(a)).state, 'saved');
      await b.waitForFunction((t) => [...document.querySelectorAll('#memory-list .memory-clarification')].some((e) => e.textContent === t), `second lesson ${trial}`);

      const itemA = a.locator('#memory-list .memory-item', { hasText: `second lesson ${trial}` });
      const itemB = b.locator('#memory-list .memory-item', { hasText: `second lesson ${trial}` });
      await itemA.locator('.memory-edit').click();
      await itemA.locator('.memory-edit-input').fill(`edited lesson ${trial}`);
      await itemB.locator('.memory-undo').click();
      // Whichever commits first re-renders the other tab's item, so the other click
      // may find its button gone: that tab lost the race, which is allowed.
      const lostRace = () => 'the item changed first';
      await Promise.all([
        itemA.locator('.memory-edit-save').click({ timeout: 1000 }).catch(lostRace),
        itemB.locator('.undo-restore').click({ timeout: 1000 }).catch(lostRace),
      ]);
      // Both changes take milliseconds; the invariant must hold at every read.
      for (let look = 0; look < 5; look++) {
        assertOneCurrentPerKey(await storedRows(a), `trial ${trial}, look ${look}`);
        await a.waitForTimeout(200);
      }
    }
  } finally {
    await context.close().catch(() => {});
  }
});

test('asking in one tab while the other edits never brings a superseded lesson back, and keeps the open editor', { timeout: 240_000 }, async () => {
  const { context, a, b } = await twoTabs('race-count');
  try {
    await openMemory(b);
    const question = 'What is like < count > ?';
    await ask(a, question);
    await openCorrection(a, 'lesson version 1');
    await a.click('#clarification-save');
    assert.equal((await saveOutcome(a)).state, 'saved');
    await waitForMemoryCount(b, 1);

    // An editor open in tab B survives tab A asking (which counts an application).
    const itemB = b.locator('#memory-list .memory-item').first();
    await itemB.locator('.memory-edit').click();
    await itemB.locator('.memory-edit-input').fill('draft typed in tab B');
    await ask(a, 'What is like < again > ?');
    await b.waitForFunction(() => document.querySelector('#memory-list .memory-stats')?.textContent.includes('applied 1 times'));
    assert.equal(await itemB.locator('.memory-edit-input').inputValue(), 'draft typed in tab B', 'the open editor keeps its draft');

    for (let timing = 0; timing < 10; timing++) {
      const item = b.locator('#memory-list .memory-item').first();
      if (await item.locator('.memory-edit-input').count() === 0) await item.locator('.memory-edit').click();
      await item.locator('.memory-edit-input').fill(`edited ${timing}`);
      const asking = ask(a, `What is like < t${timing} > ?`);
      await b.waitForTimeout(timing * 15);
      await item.locator('.memory-edit-save').click();
      await asking;
      await b.waitForFunction((t) => document.querySelector('#memory-list .memory-clarification')?.textContent === t, `edited ${timing}`);
      const rows = await storedRows(a);
      assertOneCurrentPerKey(rows, `timing ${timing}`);
      const current = rows.filter((r) => r.state === 'current');
      assert.deepEqual(current.map((r) => r.clarification), [`edited ${timing}`], `timing ${timing}: the edit is the one current lesson`);
    }
  } finally {
    await context.close().catch(() => {});
  }
});

test('unreadable rows are set aside and listed, the rest of the memory works, and they can be saved and deleted', { timeout: 120_000 }, async () => {
  const context = await launch(freshProfileDir('unreadable'));
  try {
    const page = await firstPage(context);
    await openApp(page, env.site.url);
    await saveSettings(page, { baseUrl: env.fake.baseUrl });
    await ask(page, 'What is like < fast > ?');
    await openCorrection(page, 'I want a synonym');
    await page.click('#clarification-save');
    assert.equal((await saveOutcome(page)).state, 'saved');
    const [good] = await storedRows(page);
    const missingField = { id: 'broken-1', key: 'what is like < > ?', question: 'What is like < x > ?' };
    const newerState = { ...good, id: 'newer-1', key: 'what is unlike < > ?', question: 'What is unlike < x > ?', state: 'archived' };
    await putRawRows(page, [missingField, newerState]);

    await page.reload();
    await page.locator('#ask-input').waitFor({ state: 'visible' });
    await waitForMemoryCount(page, 1);
    await waitForText(page, '#memory-unreadable', '2 unreadable');
    await openMemory(page);
    await page.evaluate(() => { document.querySelector('#unreadable-records').open = true; });
    assert.equal(await page.locator('.unreadable-record').count(), 2);
    const raws = await page.locator('.unreadable-raw').allTextContents();
    assert.ok(raws.some((r) => r.includes('archived')), 'the raw text is shown as stored');

    // Corrections, export and import still work beside them.
    await ask(page, 'What is unlike < cold > ?');
    await openCorrection(page, 'I want an antonym');
    await page.click('#clarification-save');
    assert.equal((await saveOutcome(page)).state, 'saved');
    const download = page.waitForEvent('download');
    await page.evaluate(() => { document.querySelector('#transfer').open = true; });
    await page.click('#export-button');
    assert.match((await download).suggestedFilename(), /remind-memory/);

    // Saving a copy, then deleting one for good; the other stays untouched.
    const copy = page.waitForEvent('download');
    const row = page.locator('.unreadable-record', { hasText: 'archived' });
    await row.locator('.unreadable-download').click();
    assert.match((await copy).suggestedFilename(), /remind-unreadable/);
    await row.locator('.unreadable-delete').click();
    await row.locator('.unreadable-delete-confirm-button').click();
    await waitForText(page, '#memory-notice', 'Deleted');
    const rows = await storedRows(page);
    assert.equal(rows.filter((r) => r.id === 'newer-1').length, 0, 'the deleted row is gone');
    assert.deepEqual(rows.find((r) => r.id === 'broken-1'), missingField, 'the other row is untouched');
    assert.equal(rows.filter((r) => r.state === 'current').length, 2);
  } finally {
    await context.close().catch(() => {});
  }
});

test('a database from a newer Remind is named as such, and questions still get answers', { timeout: 120_000 }, async () => {
  const context = await launch(freshProfileDir('newer'));
  try {
    const page = await firstPage(context);
    await openApp(page, env.site.url);
    await saveSettings(page, { baseUrl: env.fake.baseUrl });
    await page.evaluate(() => new Promise((resolve, reject) => {
      const open = indexedDB.open('remind', 99);
      open.onsuccess = () => { open.result.close(); resolve(); };
      open.onerror = () => reject(open.error);
    }));
    await page.reload();
    await page.locator('#ask-input').waitFor({ state: 'visible' });
    await waitForText(page, '#memory-error', 'newer version of Remind');
    const turn = await ask(page, 'What is like < fast > ?', 30_000);
    assert.ok(turn.understanding, `the turn finished: ${JSON.stringify(turn)}`);
  } finally {
    await context.close().catch(() => {});
  }
});

test('an upgrade blocked by another tab says which tab to close instead of hanging', { timeout: 120_000 }, async () => {
  const context = await launch(freshProfileDir('blocked'));
  try {
    // Tab A is an old Remind: it made the version-1 database and never lets go of it.
    const old = await firstPage(context);
    // Any page of the origin that is not Remind itself (the server answers unknown
    // paths with the app).
    await old.goto(`${env.site.url}/minilm/vocab.txt`);
    await old.evaluate(() => new Promise((resolve, reject) => {
      const open = indexedDB.open('remind', 1);
      open.onupgradeneeded = () => open.result.createObjectStore('records', { keyPath: 'id' }).createIndex('key', 'key');
      open.onsuccess = () => { window.__held = open.result; resolve(); };
      open.onerror = () => reject(open.error);
    }));
    const page = await secondWindow(context);
    await openApp(page, env.site.url);
    await waitForText(page, '#memory-error', 'close or reload the other Remind tabs', 20_000);
    await saveSettings(page, { baseUrl: env.fake.baseUrl });
    const turn = await ask(page, 'What is like < fast > ?', 40_000);
    assert.ok(turn.understanding, `the turn finished instead of hanging: ${JSON.stringify(turn)}`);

    // Once the old tab lets go, a reload upgrades and the memory works.
    await old.evaluate(() => window.__held.close());
    await page.reload();
    await page.locator('#ask-input').waitFor({ state: 'visible' });
    await page.waitForFunction(() => !document.querySelector('#memory-error')?.textContent.trim());
    await ask(page, 'What is like < fast > ?');
    await openCorrection(page, 'I want a synonym');
    await page.click('#clarification-save');
    assert.equal((await saveOutcome(page)).state, 'saved');
  } finally {
    await context.close().catch(() => {});
  }
});

test('leaving while a save is in flight asks first, and the save still completes', { timeout: 120_000 }, async () => {
  const { context, a, b } = await twoTabs('leave');
  try {
    await ask(a, 'What is like < fast > ?');
    await openCorrection(a, 'I want a synonym');
    // Tab B holds a readwrite transaction on the records for a few seconds, so tab
    // A's save is queued behind it, as a slow disk would queue it.
    const holding = b.evaluate(() => new Promise((resolve, reject) => {
      const open = indexedDB.open('remind');
      open.onsuccess = () => {
        const db = open.result;
        const tx = db.transaction('records', 'readwrite');
        const store = tx.objectStore('records');
        const until = Date.now() + 3000;
        const spin = () => { if (Date.now() < until) store.get('nothing').onsuccess = spin; };
        spin();
        tx.oncomplete = () => { db.close(); resolve(); };
        tx.onerror = () => reject(tx.error);
      };
    }));
    await b.waitForTimeout(200);
    await a.click('#clarification-save');
    await waitForText(a, '#clarification-status', 'Saving');
    const dialog = new Promise((resolve) => a.once('dialog', async (d) => { resolve(d.type()); await d.dismiss(); }));
    await a.close({ runBeforeUnload: true });
    assert.equal(await dialog, 'beforeunload', 'the browser asks before leaving');
    await holding;
    assert.equal((await saveOutcome(a)).state, 'saved');
    assert.equal((await storedRows(b)).filter((r) => r.clarification === 'I want a synonym').length, 1);
  } finally {
    await context.close().catch(() => {});
  }
});

test('an imported record reusing the id of another question is a conflict and the stored lesson stays', { timeout: 120_000 }, async () => {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const context = await launch(freshProfileDir('reused-id'));
  try {
    const page = await firstPage(context);
    await openApp(page, env.site.url);
    await saveSettings(page, { baseUrl: env.fake.baseUrl });
    await ask(page, 'What is like < fast > ?');
    await openCorrection(page, 'I want a synonym');
    await page.click('#clarification-save');
    assert.equal((await saveOutcome(page)).state, 'saved');
    const [stored] = await storedRows(page);

    await page.evaluate(() => { document.querySelector('#transfer').open = true; });
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-button')]);
    const file = JSON.parse(fs.readFileSync(await download.path(), 'utf8').replace(/^\uFEFF/, ''));
    const record = file.records.find((r) => r.id === stored.id);
    Object.assign(record, { question: 'What is unlike < cold > ?', key: 'what is unlike < > ?', clarification: 'I want an antonym' });
    const hostile = path.join(scratchDir('reused'), 'hostile.json');
    fs.writeFileSync(hostile, JSON.stringify(file));

    await page.setInputFiles('#import-file', hostile);
    await page.locator('#import-preview').waitFor();
    assert.match(await page.locator('#import-summary').textContent(), /0 new.*1 conflict/);
    assert.match(await page.locator('#import-reused').textContent(), /id of a different lesson here/);
    await page.click('#import-merge');
    await page.waitForFunction(() => document.querySelector('#memory-notice')?.dataset.state !== 'idle');
    const after = await storedRows(page);
    // The background embedding may have stored the lesson's embedding meanwhile: that
    // is the page's own cache, not the import.
    const lessonOf = ({ embedding: _cache, ...lesson }) => lesson;
    assert.deepEqual(lessonOf(after.find((r) => r.id === stored.id)), lessonOf(stored), 'the stored lesson is untouched');
    assert.equal(after.filter((r) => r.key === 'what is unlike < > ?').length, 0, 'nothing of the hostile record was applied');

    // A record filed under a key that is not its question's would be applied to
    // unrelated questions: the file is refused, naming the field.
    Object.assign(record, { id: 'fresh-id', key: 'how far is < > ?' });
    const misfiled = path.join(path.dirname(hostile), 'misfiled.json');
    fs.writeFileSync(misfiled, JSON.stringify(file));
    const previous = await page.locator('#memory-notice').textContent();
    await page.setInputFiles('#import-file', misfiled);
    await page.waitForFunction((prev) => {
      const el = document.querySelector('#memory-notice');
      return el.dataset.state === 'error' && el.textContent !== prev;
    }, previous);
    assert.match(await page.locator('#memory-notice').textContent(), /key/);
    assert.deepEqual(await storedRows(page), after, 'a refused file changes nothing');
  } finally {
    await context.close().catch(() => {});
  }
});

test('a secret typed in the question is refused and nothing is stored', { timeout: 60_000 }, async () => {
  const context = await launch(freshProfileDir('secret-question'));
  try {
    const page = await firstPage(context);
    await openApp(page, env.site.url);
    await saveSettings(page, { baseUrl: env.fake.baseUrl });
    await ask(page, 'What is like < postgres://admin:S3cretPassw0rd@db.example.com/prod > ?');
    await openCorrection(page, 'I want a synonym');
    await page.click('#clarification-save');
    const outcome = await saveOutcome(page);
    assert.equal(outcome.state, 'error');
    assert.match(outcome.text, /question/i);
    assert.deepEqual(await storedRows(page), []);
  } finally {
    await context.close().catch(() => {});
  }
});
