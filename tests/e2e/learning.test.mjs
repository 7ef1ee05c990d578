// E2E: learning beyond clarifications — a reflected rule stored only on accept (edited text wins), verified examples shown and removable, the prompt panel showing the exact bytes sent, and the learning curve.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ask, fakeLlmAndSite, fakeRequests, firstPage, freshApp, freshProfileDir, launch, openApp, saveSettings, waitForMemoryCount, waitForText,
} from './helpers.mjs';

const env = fakeLlmAndSite();

/** Opens the correction form (unless a rejected proposal left it open) and asks for a rule. */
async function proposeRule(page, words) {
  if (await page.locator('#not-what-i-meant').isVisible()) await page.click('#not-what-i-meant');
  await page.fill('#clarification-input', words);
  await page.click('#propose-rule');
  await page.locator('#rule-proposal').waitFor();
}

async function open(page, selector) {
  await page.evaluate((sel) => { document.querySelector(sel).open = true; }, selector);
}

test('a reflected rule is stored only when accepted, as edited, and announces what it replaces', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'reflection');
  try {

    await ask(page, 'What is like < fast > ?');
    await proposeRule(page, 'no, I want a synonym');
    assert.equal(await page.inputValue('#rule-text'), 'when I ask what is like X, I want a synonym');
    assert.equal(await page.locator('#rule-user-words').textContent(), 'no, I want a synonym');
    assert.match(await page.locator('#rule-replaces').textContent(), /adds a new lesson/);
    await waitForMemoryCount(page, 0); // a proposal writes nothing
    await page.click('#rule-reject');
    await waitForText(page, '#memory-notice', 'nothing was stored');
    await waitForMemoryCount(page, 0);

    await proposeRule(page, 'no, I want a synonym');
    const edited = 'when I ask what is like X, I want a synonym (a word with the same meaning)';
    await page.fill('#rule-text', edited);
    await page.click('#rule-accept');
    await waitForText(page, '#memory-notice', 'Rule saved');
    await waitForMemoryCount(page, 1);
    await open(page, '#memory-browser');
    assert.deepEqual(await page.locator('#memory-list .memory-clarification').allTextContents(), [edited]);
    assert.match(await page.locator('#memory-list .memory-meta').first().textContent(), /you confirmed a proposed rule/);

    // The rule applies to a similar question ...
    const state = await ask(page, 'What is like < happy > ?');
    assert.match(state.understanding, /synonym/, JSON.stringify(state));
    assert.match(state.appliedMemory ?? '', /same meaning/);
    // ... and a new proposal for the same request says which lesson it would replace.
    await proposeRule(page, 'I want an antonym');
    assert.match(await page.locator('#rule-replaces').textContent(), /replaces the current lesson: “when I ask what is like X, I want a synonym \(a word/);
    await page.click('#rule-reject');
    await waitForMemoryCount(page, 1);
  } finally {
    await context.close().catch(() => {});
  }
});

test('a confirmed answer becomes a verified example that later prompts carry, shown and removable', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'verified');
  try {

    await ask(page, 'What is unlike < hot > ?');
    await page.click('#confirm-answer');
    await waitForText(page, '#memory-notice', 'Kept as a verified example');

    await fetch(`${env.fake.url}/__reset`, { method: 'POST' });
    await ask(page, 'What is unlike < big > ?');
    await open(page, '#prompt-panel');
    const used = await page.locator('#prompt-examples .prompt-example').allTextContents();
    assert.equal(used.length, 1, JSON.stringify(used));
    assert.match(used[0], /What is unlike < hot > \?/);
    assert.match(used[0], /alike|cosine/);
    const [request] = await fakeRequests(env.fake);
    assert.ok(
      request.prompt.includes('What is unlike < hot > ?\n\n###\n\n/ Understanding: the antonym for hot\nAnswer: unhot\nEND\n\n###\n\n/What is unlike < big > ?'),
      'the example sits right before the query',
    );

    await page.locator('#prompt-examples .remove-example').click();
    await waitForText(page, '#memory-notice', 'Example removed');
    await fetch(`${env.fake.url}/__reset`, { method: 'POST' });
    await ask(page, 'What is unlike < small > ?');
    await open(page, '#prompt-panel');
    assert.equal(await page.locator('#prompt-examples .prompt-example').count(), 0);
    const [after] = await fakeRequests(env.fake);
    assert.ok(!after.prompt.includes('What is unlike < hot > ?'), 'a removed example is no longer sent');
  } finally {
    await context.close().catch(() => {});
  }
});

test('the prompt panel shows exactly the bytes the client sent, in both modes', { timeout: 120_000 }, async () => {
  const context = await launch(freshProfileDir('prompt-panel'));
  try {
    const page = await firstPage(context);
    await openApp(page, env.site.url);
    for (const mode of ['completion', 'chat']) {
      await saveSettings(page, { baseUrl: env.fake.baseUrl, mode });
      await fetch(`${env.fake.url}/__reset`, { method: 'POST' });
      await ask(page, 'What is like < fast > ?');
      await open(page, '#prompt-panel');
      const shown = await page.locator('#prompt-sent').textContent();
      const [request] = await fakeRequests(env.fake);
      const sent = mode === 'completion' ? request.prompt : JSON.stringify(request.messages);
      assert.equal(shown, sent, `${mode}: the panel shows what was sent`);
    }
  } finally {
    await context.close().catch(() => {});
  }
});

test('the learning curve counts questions and corrections', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'curve');
  try {
    await ask(page, 'What is like < fast > ?');
    await page.click('#not-what-i-meant');
    await page.fill('#clarification-input', 'when I ask for like, I want a synonym.');
    await page.click('#clarification-save');
    await page.locator('#clarification-status[data-state="saved"]').waitFor();
    await ask(page, 'What is like < happy > ?');
    await ask(page, 'What is like < big > ?');
    await open(page, '#learning-curve');
    await waitForText(page, '#learning-buckets', 'questions 1–3: corrected 33%, memory enough 100%');
  } finally {
    await context.close().catch(() => {});
  }
});
