// E2E: a failing endpoint gives the user an actionable message and stores nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeLlm } from './fake-llm-server.mjs';
import {
  ask, closedPort, firstPage, freshProfileDir, launch, openApp, saveSettings, serveDist, turnState,
} from './helpers.mjs';

let fake;
let site;
let context;
let page;
before(async () => {
  fake = await startFakeLlm();
  site = await serveDist();
  context = await launch(freshProfileDir('errors'));
  page = await firstPage(context);
  await openApp(page, site.url);
});
after(async () => {
  await context?.close().catch(() => {});
  await site?.close();
  await fake?.close();
});

async function expectError(question, pattern) {
  const before = (await turnState(page)).memoryCount;
  const state = await ask(page, question);
  assert.ok(await page.locator('#turn-error').isVisible(), `#turn-error must be visible: ${JSON.stringify(state)}`);
  assert.match(state.error ?? '', pattern, `#turn-error text: ${JSON.stringify(state)}`);
  assert.equal(state.status ?? '', '', `#turn-status is cleared after a failed turn: ${JSON.stringify(state)}`);
  assert.equal(state.memoryCount, before, 'a failed turn stores nothing');
  return state;
}

test('endpoint down: "Could not reach"', { timeout: 60_000 }, async () => {
  await saveSettings(page, { baseUrl: `http://127.0.0.1:${await closedPort()}/v1`, mode: 'completion' });
  await expectError('What is like < fast > ?', /Could not reach/);
});

test('reply that is not JSON: "not valid JSON" / "unexpected reply"', { timeout: 60_000 }, async () => {
  await saveSettings(page, { baseUrl: fake.baseUrl, mode: 'completion' });
  await expectError('What is like < __badjson__ > ?', /not valid JSON|unexpected reply/i);
});

test('HTTP 500: an error is shown', { timeout: 60_000 }, async () => {
  await saveSettings(page, { baseUrl: fake.baseUrl, mode: 'completion' });
  await expectError('What is like < __500__ > ?', /HTTP 500/);
});

test('a good turn after errors clears the error', { timeout: 60_000 }, async () => {
  await saveSettings(page, { baseUrl: fake.baseUrl, mode: 'completion' });
  const state = await ask(page, 'What is like < fast > ?');
  assert.match(state.understanding ?? '', /homonym/, JSON.stringify(state));
  assert.equal(state.error ?? '', '', `#turn-error should be empty after a good turn: ${JSON.stringify(state)}`);
});

// The fake holds "__slow__" for 30 s, so this needs the app's request timeout below that.
test('endpoint too slow: "timed out"', { timeout: 90_000 }, async () => {
  await saveSettings(page, { baseUrl: fake.baseUrl, mode: 'completion', timeoutSeconds: 3 });
  const before = (await turnState(page)).memoryCount;
  await page.fill('#ask-input', 'What is like < __slow__ > ?');
  await page.click('#ask-submit');
  await page.waitForFunction(() => (document.querySelector('#turn-error')?.textContent ?? '').trim() !== '', undefined, { timeout: 60_000 })
    .catch(async () => assert.fail(`no #turn-error within 60 s for a 30 s stall: ${JSON.stringify(await turnState(page))}`));
  const state = await turnState(page);
  assert.match(state.error, /timed out/i, JSON.stringify(state));
  assert.equal(state.memoryCount, before, 'a failed turn stores nothing');
});
