// E2E: the conversation — turns in order, each with its own controls; kept across reloads (a restored turn can still be corrected and confirmed); new, reopen and clear; a temporary conversation that reads no memory and keeps nothing; lesson chips that open the lesson in the memory browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ask, correct, fakeLlmAndSite, fakeRequests, freshApp, openApp, waitForMemoryCount, waitForText,
} from './helpers.mjs';
import { queryFromPrompt } from './fake-llm-server.mjs';

const env = fakeLlmAndSite();

/** Each turn of the conversation in view: its question, understanding and answer, and its state. */
async function turns(page) {
  return page.locator('#conversation-turns > .turn').evaluateAll((items) => items.map((li) => ({
    question: li.querySelector('.turn-question')?.textContent.replace('You asked: ', '').trim(),
    understanding: li.querySelector('.answer-understanding')?.textContent.trim() ?? null,
    answer: li.querySelector('.answer-answer')?.textContent.trim() ?? null,
    state: li.dataset.state,
  })));
}

test('turns stay in order and an earlier turn keeps its own correction and status', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'conversation-order');
  try {
    await ask(page, 'What is like < fast > ?');
    await ask(page, 'What is the opposite of < happy > ?');
    const [first, second] = await turns(page);
    assert.equal(first.question, 'What is like < fast > ?');
    assert.equal(second.question, 'What is the opposite of < happy > ?');
    assert.match(first.understanding, /homonym/);
    assert.match(second.understanding, /antonym/);
    // Only the latest turn carries the plain ids; the earlier one its numbered ones.
    assert.equal(await page.locator('#answer-understanding').textContent(), second.understanding);

    const earlier = page.locator('#conversation-turns > .turn').first();
    await earlier.locator('.not-what-i-meant').click();
    await earlier.locator('.clarification-input').fill('when I ask for like, I want a synonym.');
    await earlier.getByRole('button', { name: 'Save' }).click();
    await earlier.locator('.clarification-status[data-state="saved"]').waitFor();
    await waitForMemoryCount(page, 1);
    assert.equal(await page.locator('#clarification-status').textContent(), '', 'the latest turn\'s status is its own');

    const state = await ask(page, 'What is like < big > ?');
    assert.match(state.understanding, /synonym/, 'the lesson taught on the earlier turn applies');
    assert.equal((await turns(page)).length, 3);
  } finally {
    await context.close().catch(() => {});
  }
});

test('the conversation is kept across a reload, and a restored turn can be corrected and confirmed', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'conversation-reload');
  try {
    await ask(page, 'What is like < fast > ?');
    await ask(page, 'What is the opposite of < happy > ?');
    const before = await turns(page);
    await page.reload();
    await openApp(page, env.site.url);
    const after = await turns(page);
    assert.deepEqual(after.map(({ state, ...t }) => t), before.map(({ state, ...t }) => t));
    assert.deepEqual(after.map((t) => t.state), ['restored', 'restored']);

    // The latest restored turn: "This is right" keeps it as a verified example.
    await page.click('#confirm-answer');
    await waitForText(page, '#memory-notice', 'Kept as a verified example');
    await waitForMemoryCount(page, 1);
    // The first restored turn: a correction is saved as a lesson of its question.
    const first = page.locator('#conversation-turns > .turn').first();
    await first.locator('.not-what-i-meant').click();
    await first.locator('.clarification-input').fill('when I ask for like, I want a synonym.');
    await first.getByRole('button', { name: 'Save' }).click();
    await first.locator('.clarification-status[data-state="saved"]').waitFor();
    await waitForMemoryCount(page, 2);
    const state = await ask(page, 'What is like < big > ?');
    assert.match(state.understanding, /synonym/);
  } finally {
    await context.close().catch(() => {});
  }
});

test('a new conversation sets the old one aside to be reopened; clear erases the one in view', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'conversation-new');
  try {
    await ask(page, 'What is like < fast > ?');
    await page.click('#conversation-new');
    assert.deepEqual(await turns(page), []);
    await page.locator('#conversation-empty').waitFor();
    await ask(page, 'What is the opposite of < big > ?');
    await page.click('#earlier-conversations summary');
    await page.getByRole('button', { name: '“What is like < fast > ?”, 1 turn'  }).click();
    assert.deepEqual((await turns(page)).map((t) => t.question), ['What is like < fast > ?']);

    await page.click('#conversation-clear');
    assert.deepEqual(await turns(page), []);
    await page.reload();
    await openApp(page, env.site.url);
    assert.deepEqual(await turns(page), [], 'a cleared conversation stays cleared');
    await page.click('#earlier-conversations summary');
    await page.getByRole('button', { name: /opposite of < big >/ }).click();
    assert.deepEqual((await turns(page)).map((t) => t.question), ['What is the opposite of < big > ?']);
  } finally {
    await context.close().catch(() => {});
  }
});

test('a temporary conversation reads no lesson, offers nothing to save and leaves no trace', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'conversation-temporary');
  try {
    await ask(page, 'What is like < fast > ?');
    await correct(page, 'when I ask for like, I want a synonym.');
    await waitForMemoryCount(page, 1);

    await page.click('#conversation-temporary');
    await page.locator('#temporary-banner').waitFor();
    assert.equal(await page.getAttribute('#conversation-temporary', 'aria-pressed'), 'true');
    await fetch(`${env.fake.baseUrl.replace(/\/v1$/, '')}/__reset`, { method: 'POST' });
    const state = await ask(page, 'What is like < big > ?');
    assert.match(state.understanding, /homonym/, 'the stored lesson is not read');
    assert.equal(state.appliedMemory, null);
    const [sent] = await fakeRequests(env.fake);
    assert.equal(queryFromPrompt(sent.prompt), 'What is like < big > ?', 'no lesson goes with the question');
    const turn = page.locator('#conversation-turns > .turn').last();
    assert.equal(await turn.locator('.not-what-i-meant').count(), 0, 'no correction is offered');
    assert.equal(await turn.locator('#confirm-answer').count(), 0, 'no confirmation is offered');
    await waitForMemoryCount(page, 1);

    await page.click('#conversation-temporary');
    assert.deepEqual((await turns(page)).map((t) => t.question), ['What is like < fast > ?'], 'the kept conversation returns');
    await page.reload();
    await openApp(page, env.site.url);
    assert.deepEqual((await turns(page)).map((t) => t.question), ['What is like < fast > ?'], 'the temporary turn was never kept');
  } finally {
    await context.close().catch(() => {});
  }
});

test('a lesson chip under an answer opens that lesson in the memory browser', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'conversation-chip');
  try {
    await ask(page, 'What is like < fast > ?');
    await correct(page, 'when I ask for like, I want a synonym.');
    await ask(page, 'What is like < big > ?');
    const chip = page.locator('#applied-memory .lesson-link');
    assert.equal(await chip.textContent(), 'when I ask for like, I want a synonym.');
    await chip.click();
    await page.waitForFunction(() => document.querySelector('#memory-browser').open);
    await page.waitForFunction(() => document.activeElement?.classList.contains('memory-item'));
    const focused = await page.evaluate(() => document.activeElement.querySelector('.memory-clarification')?.textContent);
    assert.equal(focused, 'when I ask for like, I want a synonym.');
    assert.equal(await page.inputValue('#memory-search'), 'when I ask for like, I want a synonym.');
  } finally {
    await context.close().catch(() => {});
  }
});

test('a long answer keeps its lines and list, and markup in it is shown as text', { timeout: 60_000 }, async () => {
  const { context, page } = await freshApp(env, 'conversation-long-answer');
  try {
    await ask(page, 'What should I pack for a hike? __list__');
    const answer = page.locator('#answer-answer');
    assert.equal(await answer.locator('b').count(), 0, 'no element is made of the reply');
    assert.equal(await answer.textContent(), 'Pack these:\n- water and <b>snacks</b>\n- a rain jacket\n\nEnjoy the hike.');
    const lines = (await answer.innerText()).split('\n');
    assert.deepEqual(lines.slice(0, 3), ['Pack these:', '- water and <b>snacks</b>', '- a rain jacket'], 'the line breaks are shown');
  } finally {
    await context.close().catch(() => {});
  }
});
