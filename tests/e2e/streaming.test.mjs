// E2E: replies stream in as they are generated (server-sent events) in both prompt modes; the stop button ends a reply at once and nothing of a stopped reply can be kept; an endpoint that ignores `stream: true` still works.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ask, fakeLlmAndSite, fakeRequests, freshApp, waitForMemoryCount } from './helpers.mjs';

const env = fakeLlmAndSite();

/** Records every text the latest turn shows while it streams, until it has its reply. */
async function watchStreaming(page) {
  await page.evaluate(() => {
    window.__streamed = [];
    window.__streamObserver?.disconnect();
    window.__streamObserver = new MutationObserver(() => {
      const shown = document.querySelector('#conversation-turns > .turn:last-child .turn-streamed');
      const text = shown?.textContent ?? '';
      if (text && text !== 'Asking…' && window.__streamed.at(-1) !== text) window.__streamed.push(text);
    });
    window.__streamObserver.observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

for (const mode of ['completion', 'chat']) {
  test(`in ${mode} mode the reply is shown growing as it streams, then read as understanding and answer`, { timeout: 120_000 }, async () => {
    const { context, page } = await freshApp(env, `stream-${mode}`, { mode });
    try {
      await fetch(`${env.fake.url}/__reset`, { method: 'POST' });
      await watchStreaming(page);
      const state = await ask(page, 'What is the opposite of < happy > ?');
      assert.match(state.understanding, /antonym for happy/);
      const streamed = await page.evaluate(() => window.__streamed);
      assert.ok(streamed.length >= 2, `the reply was shown at least twice while it streamed: ${JSON.stringify(streamed)}`);
      assert.ok(streamed.every((text, i) => i === 0 || text.startsWith(streamed[i - 1])), `each showing extends the last: ${JSON.stringify(streamed)}`);
      const [request] = await fakeRequests(env.fake);
      assert.equal(request.stream, true, 'the page asked for a stream');
    } finally {
      await context.close().catch(() => {});
    }
  });
}

test('stop ends a slow reply at once, keeps what arrived, and offers nothing to keep', { timeout: 120_000 }, async () => {
  const { context, page } = await freshApp(env, 'stream-stop');
  try {
    await page.fill('#ask-input', 'What is like < fast > ? __slowstream__');
    await page.click('#ask-submit');
    await page.waitForFunction(() => {
      const text = document.querySelector('#conversation-turns > .turn:last-child .turn-streamed')?.textContent ?? '';
      return text.split(/\s+/).filter(Boolean).length >= 2 && text !== 'Asking…';
    }, null, { timeout: 15_000 });
    const pressed = Date.now();
    await page.click('#turn-stop');
    await page.locator('#conversation-turns > .turn:last-child[data-state="answered"]').waitFor({ timeout: 5_000 });
    assert.ok(Date.now() - pressed < 10_000, 'the reply ended when stopped, not after the 30 s the server takes');
    await page.locator('.turn-stopped').waitFor();
    assert.equal(await page.locator('#confirm-answer').count(), 0, 'a stopped reply cannot be confirmed');
    assert.equal(await page.locator('#turn-status').textContent(), '', 'the page is ready for the next question');
    await waitForMemoryCount(page, 0);
    const next = await ask(page, 'What is the opposite of < big > ?');
    assert.match(next.understanding, /antonym for big/, 'the next question is answered normally');
  } finally {
    await context.close().catch(() => {});
  }
});

test('an endpoint that ignores stream: true still answers', { timeout: 60_000 }, async () => {
  const { context, page } = await freshApp(env, 'stream-ignored');
  try {
    const state = await ask(page, 'What is the opposite of < sad > ? __nostream__');
    assert.match(state.understanding, /antonym for sad/);
    assert.equal(state.error, null);
  } finally {
    await context.close().catch(() => {});
  }
});
