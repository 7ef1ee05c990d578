// E2E: the chat-completions mode sends messages (not a prompt) and shows the parsed reply the same way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ask, fakeLlmAndSite, fakeRequests, firstPage, freshProfileDir, launch, openApp, saveSettings,
} from './helpers.mjs';

const env = fakeLlmAndSite();

test('chat mode asks through /v1/chat/completions', { timeout: 90_000 }, async () => {
  const context = await launch(freshProfileDir('chat'));
  try {
    const page = await firstPage(context);
    await openApp(page, env.site.url);
    await saveSettings(page, { baseUrl: env.fake.baseUrl, mode: 'chat', model: 'fake-chat-model', apiKey: 'sk-test' });

    const state = await ask(page, 'What is like < fast > ?');
    assert.equal(state.error ?? '', '', `unexpected #turn-error: ${state.error}`);
    assert.match(state.understanding, /homonym/, JSON.stringify(state));
    assert.match(state.answer ?? '', /fasst/, JSON.stringify(state));
    assert.doesNotMatch(`${state.understanding} ${state.answer}`, /END/);
    assert.ok(await page.locator('#not-what-i-meant').isVisible(), '#not-what-i-meant is offered after a reply');

    const reqs = await fakeRequests(env.fake);
    assert.equal(reqs.length, 1, 'one request for one turn');
    const body = reqs[0];
    assert.ok(Array.isArray(body.messages), `chat mode sends messages: ${JSON.stringify(body).slice(0, 200)}`);
    assert.equal(body.prompt, undefined, 'chat mode sends no `prompt`');
    const lastUser = body.messages.filter((m) => m.role === 'user').at(-1);
    assert.equal(lastUser.content, 'What is like < fast > ?');
    assert.equal(body.messages.at(-1).role, 'user', 'the query is the last message');
    assert.equal(body.model, 'fake-chat-model', 'the model from settings is sent');
  } finally {
    await context.close().catch(() => {});
  }
});
