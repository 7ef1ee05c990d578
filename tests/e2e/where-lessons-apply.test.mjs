// E2E: where a lesson applies, chosen by the user — its scope shown as the request with slots and steered word by word; a lesson just below the threshold offered, not sent, and widened or kept off by one click; a standing preference ("every question") rides with every turn beside the retrieved lessons, each shown with why; "not relevant here" keeps a lesson off one kind of question, survives a reload, and is taken back in the memory browser; the memory browser edits a lesson's scope as a new version, and undo takes the edit back; "This is right" widens a lesson that came by similarity.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { queryFromPrompt } from './fake-llm-server.mjs';
import {
  ask, correct, fakeLlmAndSite, fakeRequests, freshApp, openApp, waitForText,
} from './helpers.mjs';

const env = fakeLlmAndSite();
const SAM = 'Call me Sam in every answer.';

async function openMemory(page) {
  await page.evaluate(() => { document.querySelector('#memory-browser').open = true; });
}

/** The applied lessons under the reply: why each went with the turn, and its text. */
async function appliedLessons(page) {
  return page.locator('#applied-memory .applied-lesson').evaluateAll((items) => items.map((li) => ({
    because: li.getAttribute('data-because'),
    text: li.querySelector('.applied-clarification').textContent.trim(),
  })));
}

/** Teaches "Call me Sam" for every question, then a synonym lesson for "like" questions. */
async function teachSamAndSynonym(page) {
  await ask(page, 'What should you call me?');
  await page.click('#not-what-i-meant');
  await page.fill('#clarification-input', SAM);
  await page.check('#clarification-reach-every');
  await page.click('#clarification-save');
  await waitForText(page, '#clarification-status', 'every question');
  await ask(page, 'What is like < fast > ?');
  await correct(page, 'I want a synonym');
}

/** The query of the last request the fake LLM received (completion mode). */
async function lastPrompt() {
  const requests = await fakeRequests(env.fake);
  return requests.at(-1)?.prompt ?? '';
}

test('a standing preference goes with every question, beside the retrieved lesson, and can be kept off one kind', { timeout: 180_000 }, async () => {
  const { context, page } = await freshApp(env, 'reach');
  try {
    await teachSamAndSynonym(page);

    // Both go with a new question of the lesson's kind: the preference first, each
    // saying why it was attached.
    const state = await ask(page, 'What is like < slow > ?');
    assert.match(state.understanding, /synonym/, JSON.stringify(state));
    const lessons = await appliedLessons(page);
    assert.deepEqual(lessons.map((l) => l.because), ['every-question', 'fits-scope'], JSON.stringify(lessons));
    assert.equal(lessons[0].text, SAM);
    assert.match(await page.locator('#applied-memory').textContent(), /every question/);
    assert.ok((await lastPrompt()).includes(`| clarification: ${SAM} | clarification: I want a synonym`));

    // On another kind of question only the preference goes.
    await ask(page, 'Write a haiku about Paris.');
    assert.deepEqual((await appliedLessons(page)).map((l) => l.text), [SAM]);
    await page.click('#applied-memory .applied-not-relevant');
    await page.locator('.applied-mark-status[data-state="saved"]').waitFor();

    // The mark is stored: after a reload, the same kind of question gets no lesson,
    // and every other question still gets the preference.
    await openApp(page, env.site.url);
    await ask(page, 'Write a haiku about Rome.');
    assert.equal(await page.locator('#applied-memory').count(), 0, 'the preference is kept off this kind of question');
    assert.ok(!(await lastPrompt()).includes(SAM), 'nor is it in the prompt');
    await ask(page, 'What is like < big > ?');
    assert.deepEqual((await appliedLessons(page)).map((l) => l.because), ['every-question', 'fits-scope']);

    // The memory browser shows where it applies and takes the mark back.
    await openMemory(page);
    const item = page.locator('#memory-list .memory-item', { hasText: SAM });
    assert.match(await item.locator('.memory-scope').textContent(), /applies to every question/);
    assert.match(await item.locator('.memory-not-for').textContent(), /Write a haiku about Paris\./);
    await item.locator('.memory-relevant-again').click();
    await waitForText(page, '#memory-notice', 'applies to questions like that one again');
    await ask(page, 'Write a haiku about Rome.');
    assert.deepEqual((await appliedLessons(page)).map((l) => l.text), [SAM]);
  } finally {
    await context.close().catch(() => {});
  }
});

test('a one-time clarification takes the retrieved lesson\'s place but keeps the standing preference', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'reach-once');
  try {
    await teachSamAndSynonym(page);

    await ask(page, 'What is like < happy > ?');
    await page.click('#not-what-i-meant');
    await page.fill('#clarification-input', 'this time I want an antonym');
    await page.check('#clarification-once');
    await page.click('#clarification-save');
    await waitForText(page, '#answer-understanding', 'antonym');
    assert.ok((await lastPrompt()).includes(`| clarification: ${SAM} | clarification: this time I want an antonym`));
    assert.deepEqual((await appliedLessons(page)).map((l) => l.because), ['every-question']);
    await openMemory(page);
    assert.equal(await page.locator('#memory-list .memory-item').count(), 2, 'the one-time clarification is not stored');
  } finally {
    await context.close().catch(() => {});
  }
});

test('a correction proposes its scope as the request with slots; a click makes a word a slot, and the lesson reaches exactly the questions that fit', { timeout: 180_000 }, async () => {
  const { context, page } = await freshApp(env, 'scope-slots');
  try {
    await ask(page, 'Define entropy.');
    await page.click('#not-what-i-meant');
    await page.fill('#clarification-input', 'I want a one-line definition and an example.');
    // The proposal: "entropy" does not frame the request, so it is a slot; a click
    // makes it a fixed word, another a slot again.
    assert.equal(await page.locator('#scope-pattern').textContent(), 'define ___');
    const entropy = page.locator('#scope-words .scope-word', { hasText: 'entropy' });
    assert.equal(await entropy.getAttribute('aria-pressed'), 'true');
    await entropy.click();
    assert.equal(await entropy.getAttribute('aria-pressed'), 'false');
    assert.equal(await page.locator('#scope-pattern').textContent(), 'define entropy');
    await entropy.click();
    assert.equal(await page.locator('#scope-pattern').textContent(), 'define ___');
    // A scope of slots alone is refused before anything is sent.
    await page.locator('#scope-words .scope-word', { hasText: 'define' }).click();
    assert.equal(await page.locator('#scope-pattern').getAttribute('data-valid'), 'false');
    await page.click('#clarification-save');
    await waitForText(page, '#clarification-status', 'every question');
    await page.locator('#scope-words .scope-word', { hasText: 'define' }).click();
    await page.click('#clarification-save');
    await page.locator('#clarification-status[data-state="saved"]').waitFor({ state: 'attached' });

    // Another specific in the slot: the lesson applies because the question fits.
    await ask(page, 'Define inflation.');
    const lessons = await appliedLessons(page);
    assert.deepEqual(lessons.map((l) => l.because), ['fits-scope'], JSON.stringify(lessons));
    assert.match(await page.locator('#applied-memory').textContent(), /fits its scope “define ___”/);
    assert.ok((await lastPrompt()).includes('Define inflation. | clarification: I want a one-line definition and an example.'));
    // Another request: nothing is attached.
    await ask(page, 'Explain inflation.');
    assert.equal(await page.locator('#applied-memory').count(), 0, 'a question outside the scope gets no lesson');

    // The memory browser shows the scope, and it survives a reload.
    await openApp(page, env.site.url);
    await openMemory(page);
    const item = page.locator('#memory-list .memory-item', { hasText: 'one-line definition' });
    assert.match(await item.locator('.memory-scope').textContent(), /applies to “define ___”/);
  } finally {
    await context.close().catch(() => {});
  }
});

test('a lesson just below the threshold is offered, not sent; applying it widens its scope, declining keeps it off that kind', { timeout: 180_000 }, async () => {
  const { context, page } = await freshApp(env, 'suggestion');
  try {
    const KM = 'I always want distances in kilometres.';
    await ask(page, 'How far is Lyon from Paris?');
    await correct(page, KM);

    // A rephrasing: close in meaning (cosine 0.86), below τ (0.875), so offered and
    // not sent.
    await ask(page, 'How far apart are Lyon and Paris?');
    assert.equal(await page.locator('#applied-memory').count(), 0, 'nothing is applied unasked');
    assert.equal(queryFromPrompt(await lastPrompt()), 'How far apart are Lyon and Paris?', 'nor sent');
    const offer = page.locator('#lesson-suggestion');
    assert.match(await offer.textContent(), /A lesson may apply here: “I always want distances in kilometres\.”.*cosine 0\.8/);
    await page.click('#suggestion-apply');
    await page.locator('#applied-memory .applied-lesson[data-because="fits-scope"]').waitFor();
    assert.ok((await lastPrompt()).includes(`How far apart are Lyon and Paris? | clarification: ${KM}`));
    // The request joined the scope: another pair of cities fits it at once.
    await ask(page, 'How far apart are Berlin and Rome?');
    assert.deepEqual((await appliedLessons(page)).map((l) => l.because), ['fits-scope']);
    await openMemory(page);
    const item = page.locator('#memory-list .memory-item', { hasText: KM });
    assert.match(await item.locator('.memory-scope').textContent(), /“how far is ___ from ___”, “how far ___ are ___ and ___”/);
    // The scope editor lists the widened scope's patterns; only the taught question's
    // can be re-chosen word by word, and each can be removed.
    await item.locator('.memory-scope-edit').click();
    const editor = item.locator('.memory-scope-editor');
    assert.deepEqual(await editor.locator('.memory-scope-pattern').allTextContents(), ['how far is ___ from ___', 'how far ___ are ___ and ___']);
    assert.equal(await editor.locator('.memory-scope-change').count(), 1);
    assert.equal(await editor.locator('.memory-scope-remove').count(), 2);
    await editor.locator('.memory-scope-cancel').click();
    assert.equal(await editor.count(), 0);

    // Declined: kept off that kind of question, and not offered there again.
    await ask(page, 'Give me a word that rhymes with moon.');
    await correct(page, 'I want three rhymes, not one.');
    await ask(page, 'Give me a synonym for moon.');
    await page.locator('#lesson-suggestion').waitFor();
    await page.click('#suggestion-decline');
    await page.locator('.suggestion-status[data-state="declined"]').waitFor();
    await ask(page, 'Give me a synonym for sun.');
    assert.equal(await page.locator('#lesson-suggestion').count(), 0, 'not offered again for that kind');
    assert.equal(await page.locator('#applied-memory').count(), 0);
  } finally {
    await context.close().catch(() => {});
  }
});

/** Opens the scope editor of the memory browser's item that holds `text`. */
async function editScope(page, text) {
  await openMemory(page);
  const item = page.locator('#memory-list .memory-item', { hasText: text });
  await item.locator('.memory-scope-edit').click();
  const editor = item.locator('.memory-scope-editor');
  await editor.waitFor();
  return { item, editor };
}

/** The patterns the scope editor lists. */
async function listedPatterns(editor) {
  return editor.locator('.memory-scope-pattern').allTextContents();
}

test('the memory browser edits where a lesson applies: a word made a slot reaches new questions, survives a reload, and undo takes it back', { timeout: 180_000 }, async () => {
  const { context, page } = await freshApp(env, 'scope-edit');
  try {
    const DEF = 'I want a one-line definition and an example.';
    await ask(page, 'What is photosynthesis?');
    await correct(page, DEF);
    await ask(page, 'What is osmosis?');
    assert.equal(await page.locator('#applied-memory').count(), 0, 'the proposed scope "what is photosynthesis" does not reach osmosis');

    const { item, editor } = await editScope(page, DEF);
    assert.deepEqual(await listedPatterns(editor), ['what is photosynthesis']);
    // Saving the scope it already has is refused, inline, and nothing is written.
    await editor.locator('.memory-scope-save').click();
    await waitForText(page, '.memory-scope-editor .memory-scope-refusal[role="alert"]', 'already applies there');

    // The same word toggles as the correction form: "photosynthesis" (the word a
    // question word asks about, so proposed fixed) becomes a slot.
    await editor.locator('.memory-scope-change').click();
    await editor.locator('.scope-word', { hasText: 'photosynthesis' }).click();
    assert.equal(await editor.locator('.scope-pattern').textContent(), 'what is ___');
    // Slots alone are refused before anything is sent.
    const what = editor.locator('.scope-word', { hasText: /^what$/ });
    const is = editor.locator('.scope-word', { hasText: /^is$/ });
    await what.click();
    await is.click();
    await editor.locator('.memory-scope-use').click();
    await waitForText(page, '.memory-scope-editor .memory-scope-draft-error[role="alert"]', 'every question');
    await what.click();
    await is.click();
    await editor.locator('.memory-scope-use').click();
    assert.deepEqual(await listedPatterns(editor), ['what is ___']);
    await editor.locator('.memory-scope-save').click();
    await waitForText(page, '#memory-notice', 'applies where you chose');
    assert.match(await item.locator('.memory-scope').textContent(), /applies to “what is ___”/);
    assert.match(await item.locator('.memory-meta').textContent(), /changed where it applies/);

    // A question only the new scope fits gets the lesson, because it fits.
    await ask(page, 'What is osmosis?');
    assert.deepEqual((await appliedLessons(page)).map((l) => l.because), ['fits-scope']);
    assert.match(await page.locator('#applied-memory').textContent(), /fits its scope “what is ___”/);

    // Stored: a reload shows the new scope.
    await openApp(page, env.site.url);
    await openMemory(page);
    assert.match(await item.locator('.memory-scope').textContent(), /applies to “what is ___”/);

    // Undo restores the scope it had, which the question does not fit.
    await item.locator('.memory-undo').click();
    await item.locator('.undo-restore').click();
    await waitForText(page, '#memory-notice', 'Undone');
    assert.match(await item.locator('.memory-scope').textContent(), /applies to “what is photosynthesis”/);
    await ask(page, 'What is osmosis?');
    assert.equal(await page.locator('#applied-memory').count(), 0, 'the old scope is back');
  } finally {
    await context.close().catch(() => {});
  }
});

test('the memory browser switches a lesson to every question and back to a kind of question', { timeout: 180_000 }, async () => {
  const { context, page } = await freshApp(env, 'scope-every');
  try {
    const SYN = 'I want a synonym';
    await ask(page, 'What is like < fast > ?');
    await correct(page, SYN);

    let { item, editor } = await editScope(page, SYN);
    await editor.locator('.memory-reach-every').check();
    await editor.locator('.memory-scope-save').click();
    await waitForText(page, '#memory-list .memory-item .memory-scope', 'applies to every question');
    await ask(page, 'Write a haiku about Paris.');
    assert.deepEqual((await appliedLessons(page)).map((l) => l.because), ['every-question']);

    ({ item, editor } = await editScope(page, SYN));
    await editor.locator('.memory-reach-like').check();
    assert.deepEqual(await listedPatterns(editor), [], 'every question had no patterns');
    await editor.locator('.memory-scope-add').click();
    assert.equal(await editor.locator('.scope-pattern').textContent(), 'what is like ___', 'the taught question\'s proposal');
    // Save takes the pattern being chosen.
    await editor.locator('.memory-scope-save').click();
    await waitForText(page, '#memory-list .memory-item .memory-scope', 'applies to “what is like ___”');
    await ask(page, 'Write a haiku about Rome.');
    assert.equal(await page.locator('#applied-memory').count(), 0, 'no longer on every question');
    await ask(page, 'What is like < slow > ?');
    assert.deepEqual((await appliedLessons(page)).map((l) => l.because), ['fits-scope']);
    assert.equal(await item.count(), 1);
  } finally {
    await context.close().catch(() => {});
  }
});

test('"This is right" on an answer whose lesson came by similarity widens the lesson to that wording, and the next question of it fits at once', { timeout: 180_000 }, async () => {
  const { context, page } = await freshApp(env, 'confirm-widens');
  try {
    const SYN = 'I want a synonym';
    await ask(page, 'What is like < fast > ?');
    await correct(page, SYN);

    // Another wording of the request: outside the scope "what is like ___", close in meaning.
    await ask(page, "What's like < slow > ?");
    assert.deepEqual((await appliedLessons(page)).map((l) => l.because), ['similar']);
    await page.click('#confirm-answer');
    await waitForText(page, '#memory-notice', 'now also applies to questions like this one');

    await ask(page, "What's like < happy > ?");
    assert.deepEqual((await appliedLessons(page)).map((l) => l.because), ['fits-scope']);
    assert.match(await page.locator('#applied-memory').textContent(), /fits its scope “what's like ___”/);
    await openMemory(page);
    const item = page.locator('#memory-list .memory-item', { hasText: SYN });
    assert.match(await item.locator('.memory-scope').textContent(), /“what is like ___”, “what's like ___”/);
  } finally {
    await context.close().catch(() => {});
  }
});
