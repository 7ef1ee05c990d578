// E2E: the MemPrompt learning loop in a real browser — a misread question, a correction saved to IndexedDB, and its reuse after reload and restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SEPARATOR, queryFromPrompt } from './fake-llm-server.mjs';
import {
  ask, correct, fakeLlmAndSite, fakeRequests, firstPage, freshProfileDir, launch, openApp, saveSettings, screenshot, waitForMemoryCount,
} from './helpers.mjs';

const CLARIFICATION = 'when I ask for like, I want a synonym.';

const env = fakeLlmAndSite();

test('a correction is stored, survives reload and restart, and is attached to a similar question', { timeout: 180_000 }, async () => {
  const profile = freshProfileDir('learning');
  let context = await launch(profile);
  try {
    let page = await firstPage(context);
    await openApp(page, env.site.url);
    await saveSettings(page, { baseUrl: env.fake.baseUrl, mode: 'completion' });

    // 1. The model misreads "like" as "sounds like".
    let state = await ask(page, 'What is like < fast > ?');
    assert.equal(state.error ?? '', '', `unexpected #turn-error: ${state.error}`);
    assert.match(state.understanding, /homonym/, `#answer-understanding should show the misreading: ${JSON.stringify(state)}`);
    assert.match(state.answer ?? '', /fasst/, `#answer-answer should be the parsed answer: ${JSON.stringify(state)}`);
    assert.doesNotMatch(`${state.understanding} ${state.answer}`, /END/, 'the stop word must not be shown');
    assert.equal(await page.locator('#applied-memory').count(), 0, 'no memory exists yet, so none may be applied');
    let reqs = await fakeRequests(env.fake);
    assert.equal(reqs.length, 1, 'exactly one request for one turn');
    assert.equal(typeof reqs[0].prompt, 'string', 'completion mode sends `prompt`');
    assert.ok(reqs[0].prompt.endsWith(`What is like < fast > ?${SEPARATOR}`), `prompt must end with the query and the separator; its tail: ${JSON.stringify(reqs[0].prompt.slice(-80))}`);
    assert.ok(Array.isArray(reqs[0].stop) && reqs[0].stop.includes('END'), `stop must include "END": ${JSON.stringify(reqs[0].stop)}`);
    const countBefore = Number(state.memoryCount ?? '0');
    assert.ok(Number.isInteger(countBefore), `#memory-count should be a number: ${JSON.stringify(state.memoryCount)}`);

    // 2. The user says what they meant; "Saved" only once IndexedDB committed.
    await correct(page, CLARIFICATION);
    await waitForMemoryCount(page, countBefore + 1);
    // The "Saved" belongs to that turn: the next question clears it.
    await ask(page, 'What is like < slow > ?');
    const status = page.locator('#clarification-status');
    assert.equal(await status.getAttribute('data-state'), 'idle', 'a new question clears the last save status');
    assert.equal((await status.textContent()).trim(), '', 'no "Saved" is left under the next question');

    // 3. A reload keeps it.
    await page.reload({ waitUntil: 'load' });
    await page.locator('#ask-input').waitFor({ state: 'visible', timeout: 30_000 });
    await waitForMemoryCount(page, countBefore + 1);
    state = await ask(page, 'What is like < happy > ?');
    assert.equal(state.error ?? '', '', `unexpected #turn-error after reload: ${state.error}`);
    assert.match(state.understanding, /synonym/, `after reload the clarification should steer the answer: ${JSON.stringify(state)}`);

    // 4. So does closing the browser and starting it again on the same profile.
    await context.close();
    context = await launch(profile);
    page = await firstPage(context);
    await openApp(page, env.site.url);
    assert.equal(await page.inputValue('#settings-base-url'), env.fake.baseUrl, 'settings persist in localStorage across a restart');
    await waitForMemoryCount(page, countBefore + 1);
    await fetch(`${env.fake.url}/__reset`, { method: 'POST' });
    state = await ask(page, 'What is like < happy > ?');
    assert.equal(state.error ?? '', '', `unexpected #turn-error after restart: ${state.error}`);

    const applied = page.locator('#applied-memory .applied-lesson').first();
    await applied.waitFor({ state: 'visible' });
    const appliedText = await applied.textContent();
    assert.match(appliedText, /synonym/, `#applied-memory should show the clarification: ${appliedText}`);
    assert.ok(appliedText.includes('like'), `#applied-memory should show the stored question: ${appliedText}`);
    // The same request about another word fits the scope proposed when it was saved.
    assert.equal(await applied.getAttribute('data-because'), 'fits-scope');
    assert.match(appliedText, /fits its scope “what is like ___”/);
    assert.match(state.understanding, /synonym/, `#answer-understanding follows the clarification: ${JSON.stringify(state)}`);
    assert.match(state.answer ?? '', /glad/, `#answer-answer: ${JSON.stringify(state)}`);

    reqs = await fakeRequests(env.fake);
    assert.equal(reqs.length, 1, 'one request after the restart');
    const last = reqs.at(-1);
    const expected = `What is like < happy > ? | clarification: ${CLARIFICATION}`;
    assert.ok(last.prompt.includes(expected), `the prompt must carry the clarification; query sent: ${JSON.stringify(queryFromPrompt(last.prompt))}`);
    assert.ok(last.prompt.endsWith(SEPARATOR), 'the prompt ends with the separator');

    await screenshot(page, 'learning-loop.png');
  } finally {
    await context.close().catch(() => {});
  }
});
