// E2E: a failing endpoint gives the user an actionable message and stores nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeLlm } from './fake-llm-server.mjs';
import {
  ask, closedPort, fakeRequests, firstPage, freshProfileDir, launch, openApp, saveSettings, serveDist, turnState,
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

// The fake sends headers at once and then one space every 250 ms for 30 s: the deadline
// must cover the body read, and its abort must still read as a time-out.
test('a reply that drips past the timeout: "timed out", not a decoding error', { timeout: 90_000 }, async () => {
  await saveSettings(page, { baseUrl: fake.baseUrl, mode: 'completion', timeoutSeconds: 3 });
  const started = Date.now();
  const state = await expectError('What is like < __drip__ > ?', /timed out after 3 s/i);
  assert.doesNotMatch(state.error, /decoding|unexpected reply|could not be read/i, JSON.stringify(state));
  assert.ok(Date.now() - started < 20_000, `the time-out came after ${Date.now() - started} ms`);
});

async function resetFake() {
  await fetch(`${fake.url}/__reset`, { method: 'POST' });
}

test('429 with Retry-After: 1 is waited out, retried once, and answered', { timeout: 60_000 }, async () => {
  await saveSettings(page, { baseUrl: fake.baseUrl, mode: 'completion', timeoutSeconds: 10 });
  await resetFake();
  const started = Date.now();
  const state = await ask(page, 'What is like < __429once__ > ?');
  const took = Date.now() - started;
  assert.equal(state.error ?? '', '', `no error after a successful retry: ${JSON.stringify(state)}`);
  assert.match(state.understanding ?? '', /homonym/, JSON.stringify(state));
  assert.equal((await fakeRequests(fake)).length, 2, 'one request and one retry');
  assert.ok(took >= 1_000, `the retry waited Retry-After's 1 s (took ${took} ms)`);
});

test('503 with Retry-After twice: retried once, then "busy" and when to retry', { timeout: 60_000 }, async () => {
  await saveSettings(page, { baseUrl: fake.baseUrl, mode: 'completion', timeoutSeconds: 10 });
  await resetFake();
  const state = await expectError('What is like < __503twice__ > ?', /busy or unavailable/i);
  assert.match(state.error, /HTTP 503: fake overloaded/, JSON.stringify(state));
  assert.match(state.error, /Retried once after 1 s/, JSON.stringify(state));
  assert.match(state.error, /retry after 1 s/, JSON.stringify(state));
  assert.equal((await fakeRequests(fake)).length, 2, 'exactly one retry');
});

test('429 with a Retry-After too long to wait: no retry, "rate-limited" and when to retry', { timeout: 60_000 }, async () => {
  await saveSettings(page, { baseUrl: fake.baseUrl, mode: 'completion', timeoutSeconds: 10 });
  await resetFake();
  const started = Date.now();
  const state = await expectError('What is like < __429long__ > ?', /rate-limited/i);
  assert.match(state.error, /HTTP 429: fake rate limit/, JSON.stringify(state));
  assert.match(state.error, /Retry after 120 s/, JSON.stringify(state));
  assert.doesNotMatch(state.error, /Retried/, JSON.stringify(state));
  assert.equal((await fakeRequests(fake)).length, 1, 'no retry');
  assert.ok(Date.now() - started < 10_000, 'the page did not wait 120 s');
});

test('502 with an HTML page: "HTTP 502: Bad Gateway", no markup', { timeout: 60_000 }, async () => {
  await saveSettings(page, { baseUrl: fake.baseUrl, mode: 'completion', timeoutSeconds: 10 });
  const state = await expectError('What is like < __502html__ > ?', /HTTP 502: Bad Gateway/);
  assert.doesNotMatch(state.error, /[<>]|nginx|html|center/i, JSON.stringify(state));
});

test('a base URL with user:pass@ is never echoed', { timeout: 60_000 }, async () => {
  await saveSettings(page, { baseUrl: `http://remind-user:s3cret-pw@127.0.0.1:${fake.port}/v1`, mode: 'completion' });
  await resetFake();
  const state = await expectError('What is like < fast > ?', /\*\*\*@127\.0\.0\.1/);
  assert.doesNotMatch(state.error, /s3cret-pw|remind-user/, JSON.stringify(state));
  assert.match(state.error, /user name or password/, JSON.stringify(state));
  assert.equal((await fakeRequests(fake)).length, 0, 'the browser sends nothing to such a URL');
});

test('an API key the server echoes back is masked', { timeout: 60_000 }, async () => {
  await saveSettings(page, { baseUrl: fake.baseUrl, mode: 'completion', apiKey: 'sk-e2e-SECRET-4242' });
  try {
    const state = await expectError('What is like < __echoauth__ > ?', /HTTP 400/);
    assert.doesNotMatch(state.error, /SECRET-4242/, JSON.stringify(state));
    assert.match(state.error, /Bearer \*\*\*/, JSON.stringify(state));
  } finally {
    await saveSettings(page, { apiKey: '' });
  }
});
