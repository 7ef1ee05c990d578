// E2E: axe-core on every state of the page's panels (no serious or critical violation), in the light and the dark theme, and at a phone's width with nothing wider than the screen; the same walk takes the README's screenshots (scripts/screenshots copies them into docs/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import {
  ARTIFACTS, ask, closedPort, correct, fakeLlmAndSite, freshApp, saveSettings, waitForMemoryCount, waitForText,
} from './helpers.mjs';

const env = fakeLlmAndSite();
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = path.join(ARTIFACTS, 'screenshots');

/** Runs axe on the whole page; fails with every serious or critical violation, named with its elements. */
async function assertAccessible(page, state) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ content: AXE_SOURCE });
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const serious = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  const described = serious.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
  assert.deepEqual(described, [], `axe found serious violations with ${state}`);
}

/** Saves a screenshot of the viewport (or the element) under artifacts/screenshots/. */
async function shot(page, name, locator = null) {
  fs.mkdirSync(SHOTS, { recursive: true });
  const file = path.join(SHOTS, `${name}.png`);
  if (locator) await locator.screenshot({ path: file });
  else await page.screenshot({ path: file });
}

async function openDetails(page, selector) {
  await page.evaluate((sel) => { document.querySelector(sel).open = true; }, selector);
}

test('every panel state passes axe with no serious or critical violation, light and dark', { timeout: 240_000 }, async () => {
  const { context, page } = await freshApp(env, 'a11y');
  try {
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await assertAccessible(page, `the empty page (${scheme})`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot(page, 'first-visit');

    await ask(page, 'What is like < fast > ?');
    await assertAccessible(page, 'an answered turn');
    await page.click('#not-what-i-meant');
    await page.fill('#clarification-input', 'when I ask for like, I want a synonym.');
    await assertAccessible(page, 'the correction form with its scope editor');
    await shot(page, 'correction', page.locator('#conversation-turns > .turn').last());
    await page.click('#clarification-save');
    await page.locator('#clarification-status[data-state="saved"]').waitFor();
    await waitForMemoryCount(page, 1);

    await ask(page, 'What is like < big > ?');
    await page.click('#prompt-panel summary');
    await assertAccessible(page, 'a turn with applied memory and its prompt shown');
    await page.click('#prompt-panel summary');
    await shot(page, 'lesson-applied', page.locator('#conversation-turns > .turn').last());

    await page.click('#not-what-i-meant');
    await page.fill('#clarification-input', 'no, I want a synonym');
    await page.click('#propose-rule');
    await page.locator('#rule-proposal').waitFor();
    await assertAccessible(page, 'a proposed rule');
    await page.click('#rule-reject');

    await page.click('#confirm-answer');
    await waitForText(page, '#memory-notice', 'Kept as a verified example');
    await page.locator('#applied-memory .lesson-link').click();
    await page.waitForFunction(() => document.querySelector('#memory-browser').open);
    await assertAccessible(page, 'the memory browser on a lesson');
    await page.locator('#memory-list .memory-item').first().locator('.memory-scope-edit').click();
    await assertAccessible(page, 'a lesson\'s scope editor');
    await shot(page, 'memory-browser', page.locator('#memory-browser'));
    await page.locator('#memory-list .memory-item').first().locator('.memory-edit').click();
    await assertAccessible(page, 'a lesson being edited');

    await openDetails(page, '#transfer');
    await openDetails(page, '#learning-curve');
    // The chart reads the turn log once opened: checked as drawn, not as "Loading…".
    await page.locator('#learning-buckets').waitFor();
    await assertAccessible(page, 'the transfer panel and the learning chart');
    await shot(page, 'learning-chart', page.locator('#learning-curve'));

    await page.click('#conversation-temporary');
    await ask(page, 'What is like < small > ?');
    await assertAccessible(page, 'a temporary conversation');
    await shot(page, 'temporary');
    await page.click('#conversation-temporary');

    await page.click('#conversation-new');
    await saveSettings(page, { baseUrl: `http://127.0.0.1:${await closedPort()}/v1` });
    await ask(page, 'What is like < sad > ?');
    await page.locator('#turn-error').waitFor();
    await assertAccessible(page, 'a failed turn');
    await page.emulateMedia({ colorScheme: 'dark' });
    await assertAccessible(page, 'the dark theme with every panel open');
    await page.click('#earlier-conversations summary');
    await page.locator('.earlier-open').first().click();
    await shot(page, 'conversation-dark');
  } finally {
    await context.close().catch(() => {});
  }
});

test('at a phone\'s width nothing is wider than the screen and the page passes axe', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'a11y-phone');
  try {
    await page.setViewportSize({ width: 360, height: 760 });
    await ask(page, 'What is like < fast > ?');
    await correct(page, 'when I ask for like, I want a synonym.');
    await ask(page, 'What is like < big > ?');
    await openDetails(page, '#memory-browser');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than a 360px screen`);
    await assertAccessible(page, 'a phone-width page');
    await page.evaluate(() => document.querySelector('#memory-browser').open = false);
    await shot(page, 'phone');
  } finally {
    await context.close().catch(() => {});
  }
});

test('the keyboard alone asks, corrects, goes back to the question box and stops a reply', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'a11y-keyboard');
  try {
    await page.focus('#ask-input');
    await page.keyboard.type('What is like < fast > ?');
    await page.keyboard.press('Enter');
    await page.locator('#answer-understanding').waitFor();
    assert.equal(await page.evaluate(() => document.activeElement.id), 'ask-input', 'the question box keeps the focus for the next question');
    await page.focus('#not-what-i-meant');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.activeElement?.id === 'clarification-input');
    await page.keyboard.type('when I ask for like, I want a synonym.');
    await page.focus('#clarification-save');
    await page.keyboard.press('Enter');
    await page.locator('#clarification-status[data-state="saved"]').waitFor();
    assert.equal(await page.getAttribute('#clarification-status', 'role'), 'status', 'the outcome is announced');

    // "/" goes back to the question box; Escape stops a reply being generated.
    await page.focus('#conversation-new');
    await page.keyboard.press('/');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'ask-input');
    assert.equal(await page.inputValue('#ask-input'), '', 'the / was not typed');
    await page.keyboard.type('What is like < big > ? __slowstream__');
    await page.keyboard.press('Enter');
    await page.locator('#turn-stop').waitFor();
    await page.keyboard.press('Escape');
    await page.locator('.turn-stopped').waitFor({ timeout: 5_000 });
  } finally {
    await context.close().catch(() => {});
  }
});
