// E2E: the background embedding of imported lessons leaves the worker to the person: no step starts while they type a question or just after an answer, and it goes on once they stop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fakeLlmAndSite, freshApp, mergeFile, waitForMemoryCount, scratchDir } from './helpers.mjs';
import { largeExport } from './large-export.mjs';

// Enough that the background embedding (about 10 ms a lesson) is still going on
// at the end of the test.
const LESSONS = 3_000;
/** One background step: the lessons embedded and stored together (page_context.rs). */
const STEP = 4;
const env = fakeLlmAndSite();

const embeddedCount = (page) => page.evaluate(() => Number(document.querySelector('#memory-count')?.dataset.embedded ?? 'NaN'));

async function embeddedGrowsPast(page, count) {
  await page.waitForFunction((n) => Number(document.querySelector('#memory-count')?.dataset.embedded) > n, count, { timeout: 30_000, polling: 20 });
}

test('the background embedding starts no step while the person types a question or has just been answered, and goes on after', { timeout: 180_000 }, async () => {
  const file = path.join(scratchDir('background'), 'lessons.json');
  fs.writeFileSync(file, JSON.stringify(largeExport(LESSONS)));
  const { context, page } = await freshApp(env, 'background-yields');
  try {
    await mergeFile(page, file, LESSONS);
    await waitForMemoryCount(page, LESSONS, 60_000);
    await embeddedGrowsPast(page, STEP);

    // Typing, a key every 150 ms for about 4 s: the step under way when the first key
    // came may still be stored, and no other.
    await page.focus('#ask-input');
    await page.keyboard.type('W');
    const atFirstKey = await embeddedCount(page);
    await page.keyboard.type('hat is the weather like < today > in this town?', { delay: 150 });
    const afterTyping = await embeddedCount(page);
    assert.ok(afterTyping - atFirstKey <= STEP, `while typing, at most the step under way was stored: ${atFirstKey} then ${afterTyping}`);

    // Answered: the same for a moment after, so a next question finds the worker idle.
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#conversation-turns > .turn:last-child')?.dataset.state === 'answered', null, { timeout: 30_000 });
    const atAnswer = await embeddedCount(page);
    await page.waitForTimeout(600);
    const justAfter = await embeddedCount(page);
    assert.ok(justAfter - atAnswer <= STEP, `just after the answer, at most one step was stored: ${atAnswer} then ${justAfter}`);

    // Left alone, it goes on.
    await embeddedGrowsPast(page, justAfter + 2 * STEP);
  } finally {
    await context.close().catch(() => {});
  }
});
