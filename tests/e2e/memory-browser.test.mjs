// E2E: memory that stays true in a real browser — two tabs on one IndexedDB, reload mid-session, refused secrets, a simulated full disk, and edit/undo/forget through the memory browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ask, correct, fakeLlmAndSite, firstPage, freshApp, freshProfileDir, launch, openApp, saveSettings, waitForMemoryCount, waitForText, secondWindow,
} from './helpers.mjs';

const env = fakeLlmAndSite();

async function openMemory(page) {
  await page.evaluate(() => { document.querySelector('#memory-browser').open = true; });
}

/** The clarifications shown in the memory browser's list, in order. */
async function listed(page) {
  return page.locator('#memory-list .memory-clarification').allTextContents();
}

async function teach(page, question, clarification) {
  await ask(page, question);
  await correct(page, clarification);
}

test('a correction saved in one tab appears in the other, whose editor on the old version closes', { timeout: 120_000 }, async () => {
  const context = await launch(freshProfileDir('tabs'));
  try {
    const a = await firstPage(context);
    await openApp(a, env.site.url);
    await saveSettings(a, { baseUrl: env.fake.baseUrl });
    const b = await secondWindow(context);
    await openApp(b, env.site.url);
    await openMemory(a);
    await openMemory(b);

    await teach(a, 'What is like < fast > ?', 'when I ask for like, I want a synonym.');
    await waitForMemoryCount(b, 1); // heard over BroadcastChannel, re-read from IndexedDB
    await b.waitForFunction(() => document.querySelectorAll('#memory-list .memory-item').length === 1);
    assert.deepEqual(await listed(b), ['when I ask for like, I want a synonym.']);

    // Tab B opens the editor on version 1; tab A edits first.
    const itemB = b.locator('#memory-list .memory-item').first();
    await itemB.locator('.memory-edit').click();
    await itemB.locator('.memory-edit-input').fill('edited in tab B');

    const itemA = a.locator('#memory-list .memory-item').first();
    await itemA.locator('.memory-edit').click();
    await itemA.locator('.memory-edit-input').fill('I want a synonym (edited in tab A)');
    await itemA.locator('.memory-edit-save').click();
    await waitForText(a, '#memory-notice', 'Saved');
    assert.deepEqual(await listed(a), ['I want a synonym (edited in tab A)']);

    // B hears the change and shows the stored lesson; its open editor (on the old
    // version) closes with the item it belonged to.
    await b.waitForFunction(() => document.querySelector('#memory-list .memory-clarification')?.textContent === 'I want a synonym (edited in tab A)');
    assert.equal(await b.locator('.memory-edit-input').count(), 0, 'the editor on the old version is gone');
  } finally {
    await context.close().catch(() => {});
  }
});

test('an edit against an old view is refused and shows the current lesson; nothing is overwritten', { timeout: 120_000 }, async () => {
  const context = await launch(freshProfileDir('stale'));
  try {
    const a = await firstPage(context);
    await openApp(a, env.site.url);
    await saveSettings(a, { baseUrl: env.fake.baseUrl });
    await openMemory(a);
    await teach(a, 'What is like < fast > ?', 'I want a synonym');

    // A second tab that does not hear broadcasts (its channel is closed), as a tab
    // frozen in the background would be.
    const b = await secondWindow(context);
    await b.addInitScript(() => { window.BroadcastChannel = undefined; });
    await openApp(b, env.site.url);
    await openMemory(b);
    await waitForMemoryCount(b, 1);
    const itemB = b.locator('#memory-list .memory-item').first();
    await itemB.locator('.memory-edit').click();
    await itemB.locator('.memory-edit-input').fill('edit from the stale tab');

    const itemA = a.locator('#memory-list .memory-item').first();
    await itemA.locator('.memory-edit').click();
    await itemA.locator('.memory-edit-input').fill('edit that won');
    await itemA.locator('.memory-edit-save').click();
    await waitForText(a, '#memory-notice', 'Saved');

    await itemB.locator('.memory-edit-save').click();
    await b.locator('#memory-notice[data-state="error"]').waitFor();
    const notice = await b.locator('#memory-notice').textContent();
    assert.match(notice, /changed|version|stale|another/i, `the refusal says why: ${notice}`);
    // The stale tab now shows what is stored, and the winner was not overwritten.
    await b.waitForFunction(() => document.querySelector('#memory-list .memory-clarification')?.textContent === 'edit that won');
    await a.reload();
    await a.locator('#ask-input').waitFor();
    await openMemory(a);
    await a.waitForFunction(() => document.querySelector('#memory-list .memory-clarification')?.textContent === 'edit that won');
  } finally {
    await context.close().catch(() => {});
  }
});

test('a reload mid-session keeps every lesson and its history; undo restores the earlier lesson; forget erases', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'history');
  try {
    await teach(page, 'What is like < fast > ?', 'I want a homonym');
    await teach(page, 'What is like < slow > ?', 'when I ask for like, I want a synonym.');
    await waitForMemoryCount(page, 1); // the second correction replaced the first

    await page.reload();
    await page.locator('#ask-input').waitFor();
    await waitForMemoryCount(page, 1);
    await openMemory(page);
    const item = page.locator('#memory-list .memory-item').first();
    assert.deepEqual(await listed(page), ['when I ask for like, I want a synonym.']);
    await item.locator('.memory-history-toggle').click();
    const entries = await item.locator('.memory-history-entry').allTextContents();
    assert.equal(entries.length, 2, `two versions in history: ${JSON.stringify(entries)}`);
    assert.match(entries[0], /replaced.*I want a homonym/);

    await item.locator('.memory-undo').click();
    await item.locator('.undo-restore').click();
    await waitForText(page, '#memory-notice', 'earlier lesson becomes current');
    assert.deepEqual(await listed(page), ['I want a homonym']);

    await page.selectOption('#memory-state', 'any');
    await page.waitForFunction(() => document.querySelectorAll('#memory-list .memory-item').length === 2);
    const current = page.locator('#memory-list .memory-item[data-state="current"]');
    await current.locator('.memory-forget').click();
    await current.locator('.memory-forget-confirm-button').click();
    await waitForText(page, '#memory-notice', 'Forgotten: 2 records');
    await waitForMemoryCount(page, 0);
    await page.reload();
    await page.locator('#ask-input').waitFor();
    await openMemory(page);
    await page.selectOption('#memory-state', 'any');
    await page.locator('#memory-empty').waitFor();
  } finally {
    await context.close().catch(() => {});
  }
});

test('a clarification holding a secret is refused with the reason and nothing is stored', { timeout: 60_000 }, async () => {
  const { context, page } = await freshApp(env, 'secret');
  try {
    await ask(page, 'What is like < fast > ?');
    await page.click('#not-what-i-meant');
    await page.fill('#clarification-input', 'use my key sk-proj-abcdefghijklmnop1234 for this');
    await page.click('#clarification-save');
    await page.locator('#clarification-status[data-state="error"]').waitFor();
    assert.match(await page.locator('#clarification-status').textContent(), /API key/);
    await page.reload();
    await page.locator('#ask-input').waitFor();
    await waitForMemoryCount(page, 0);
  } finally {
    await context.close().catch(() => {});
  }
});

test('a full disk (simulated by the store hook) is reported, never called saved, and loses nothing', { timeout: 60_000 }, async () => {
  const { context, page } = await freshApp(env, 'quota');
  try {
    await teach(page, 'What is unlike < hot > ?', 'I want an antonym');
    await waitForMemoryCount(page, 1);

    await ask(page, 'What is like < fast > ?');
    await page.evaluate(() => { window.__remindFailNextWrite = 'quota'; });
    await page.click('#not-what-i-meant');
    await page.fill('#clarification-input', 'I want a synonym');
    await page.click('#clarification-save');
    await page.locator('#clarification-status[data-state="error"]').waitFor();
    assert.match(await page.locator('#clarification-status').textContent(), /storage is full/);
    await waitForMemoryCount(page, 1);

    // The same save goes through once there is room, and the earlier lesson is intact.
    await page.click('#clarification-save');
    await page.locator('#clarification-status[data-state="saved"]').waitFor();
    await page.reload();
    await page.locator('#ask-input').waitFor();
    await waitForMemoryCount(page, 2);
  } finally {
    await context.close().catch(() => {});
  }
});
