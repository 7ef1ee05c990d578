// E2E: endpoints made easy: a preset fills the settings, "Test connection" lists the
// endpoint's models or explains the failure with its fix, and working settings fold.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeLlm } from './fake-llm-server.mjs';
import {
  closedPort, firstPage, freshProfileDir, launch, openApp, openSettings, serveDist, waitForText,
} from './helpers.mjs';

let fake;
let site;
let context;
let page;
before(async () => {
  fake = await startFakeLlm();
  site = await serveDist();
  context = await launch(freshProfileDir('endpoints'));
  page = await firstPage(context);
  await openApp(page, site.url);
});
after(async () => {
  await context?.close().catch(() => {});
  await site?.close();
  await fake?.close();
});

/** Fills the endpoint fields given, clicks "Test connection" and waits for its verdict. */
async function testConnection({ baseUrl, apiKey, model } = {}) {
  await openSettings(page);
  if (baseUrl !== undefined) await page.fill('#settings-base-url', baseUrl);
  if (apiKey !== undefined) await page.fill('#settings-api-key', apiKey);
  if (model !== undefined) await page.fill('#settings-model', model);
  await page.click('#settings-test-connection');
  const status = page.locator('#settings-connection-status');
  await page.waitForFunction(
    () => ['works', 'fails'].includes(document.querySelector('#settings-connection-status')?.dataset.state),
    undefined,
    { timeout: 20_000 },
  );
  return { state: await status.getAttribute('data-state'), text: (await status.textContent()).trim() };
}

const settingsOpen = () => page.locator('details.settings').evaluate((d) => d.open);

test('the connection status is a live region', async () => {
  assert.equal(await page.locator('#settings-connection-status').getAttribute('role'), 'status');
});

test('a preset fills base URL and mode, and a key is not carried to another server', async () => {
  await openSettings(page);
  await page.selectOption('#settings-preset', 'ollama');
  assert.equal(await page.inputValue('#settings-base-url'), 'http://localhost:11434/v1');
  assert.equal(await page.inputValue('#settings-mode'), 'chat');

  await page.selectOption('#settings-preset', 'openai');
  assert.equal(await page.inputValue('#settings-base-url'), 'https://api.openai.com/v1');
  await waitForText(page, '#settings-key-note', 'needs an API key');
  await page.fill('#settings-api-key', 'sk-test-123');

  await page.selectOption('#settings-preset', 'lm-studio');
  assert.equal(await page.inputValue('#settings-base-url'), 'http://localhost:1234/v1');
  assert.equal(await page.inputValue('#settings-api-key'), '', 'the OpenAI key is dropped for LM Studio');

  await page.selectOption('#settings-preset', 'local');
  assert.equal(await page.inputValue('#settings-base-url'), 'http://127.0.0.1:8081/v1');
  assert.equal(await page.inputValue('#settings-mode'), 'completion');

  await page.fill('#settings-base-url', 'http://gpu-box:9000/v1');
  assert.equal(await page.inputValue('#settings-preset'), 'custom', 'a typed URL of no preset reads as custom');
});

test('a wrong path is explained: the base URL usually ends in /v1', async () => {
  const { state, text } = await testConnection({ baseUrl: fake.url, apiKey: '' });
  assert.equal(state, 'fails', text);
  assert.match(text, /HTTP 404/, text);
  assert.ok(text.includes(`try ${fake.url}/v1`), text);
});

test('a closed port is explained as server down or CORS, with the fix and this page\'s origin', async () => {
  const { state, text } = await testConnection({ baseUrl: `http://127.0.0.1:${await closedPort()}/v1` });
  assert.equal(state, 'fails', text);
  assert.match(text, /Nothing answered/, text);
  assert.match(text, /not running/, text);
  assert.match(text, /CORS/, text);
  assert.match(text, /OLLAMA_ORIGINS/, text);
  assert.ok(text.includes(new URL(site.url).origin), `the page's origin is named: ${text}`);
});

test('a server that wants a key says so, and a wrong key is called refused', async () => {
  const missing = await testConnection({ baseUrl: `${fake.url}/keyed/v1`, apiKey: '' });
  assert.equal(missing.state, 'fails', missing.text);
  assert.match(missing.text, /wants an API key \(HTTP 401\)/, missing.text);

  const wrong = await testConnection({ apiKey: 'not-the-key' });
  assert.equal(wrong.state, 'fails', wrong.text);
  assert.match(wrong.text, /refused the API key/, wrong.text);
  assert.ok(!wrong.text.includes('not-the-key'), `the key is never shown: ${wrong.text}`);
});

test('a web page where the API should be is not taken for one', async () => {
  const { state, text } = await testConnection({ baseUrl: `${fake.url}/html/v1`, apiKey: '' });
  assert.equal(state, 'fails', text);
  assert.match(text, /not with an OpenAI model list/, text);
});

test('a working endpoint lists its models; the one picked is saved and the settings fold', async () => {
  const { state, text } = await testConnection({ baseUrl: `${fake.url}/keyed/v1`, apiKey: 'fake-key', model: 'gpt-4o' });
  assert.equal(state, 'works', text);
  assert.match(text, /Connected: 2 models, but "gpt-4o" is not among them/, text);
  const offered = await page.locator('#settings-model-choice option:not([disabled])').allTextContents();
  assert.deepEqual(offered, ['fake-model', 'fake-model-large']);

  await page.selectOption('#settings-model-choice', 'fake-model-large');
  assert.equal(await page.inputValue('#settings-model'), 'fake-model-large');
  await waitForText(page, '#settings-connection-status', '"fake-model-large" among them');

  assert.equal(await settingsOpen(), true, 'the panel stays open until saved');
  await page.click('#settings-save');
  await waitForText(page, '#settings-status', 'Settings saved');
  await page.waitForFunction(() => !document.querySelector('details.settings').open);
  await waitForText(page, 'details.settings summary', 'working');

  await openApp(page, site.url);
  assert.equal(await settingsOpen(), false, 'settings that work stay folded after a reload');
  assert.equal(await page.inputValue('#settings-model'), 'fake-model-large');
  assert.equal(await page.inputValue('#settings-base-url'), `${fake.url}/keyed/v1`);
});

test('a single-model server fills in its model, and settings saved untested open on load', async () => {
  const { state, text } = await testConnection({ baseUrl: fake.baseUrl, apiKey: '', model: 'leftover' });
  assert.equal(state, 'works', text);
  assert.equal(await page.inputValue('#settings-model'), 'fake-model');
  assert.match(text, /Connected: 1 model, "fake-model" among them/, text);

  await page.fill('#settings-base-url', `${fake.url}/other/v1`);
  await page.click('#settings-save');
  await waitForText(page, '#settings-status', 'Settings saved');
  await openApp(page, site.url);
  assert.equal(await settingsOpen(), true, 'settings saved without a passing test open on load');
});
