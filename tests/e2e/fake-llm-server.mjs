// Deterministic OpenAI-compatible stand-in for an LLM, so the e2e tests can check the learning loop byte for byte.
//
// Node stdlib only. Its reply depends only on the query in the prompt:
//   completion mode: the text between the last two "\n\n###\n\n/" separators of `prompt`;
//   chat mode: the content of the last user message.
// Rules on the query (the word is the one in `< word >`):
//   "| clarification:" mentioning synonym / antonym / homonym / defin → that relation;
//   else "synonym" → synonym; "opposite" / "unlike" / "antonym" → antonym;
//   "like" / "homonym" → homonym (the deliberate misreading of "what is like < w > ?");
//   otherwise → definition.
// A reflection prompt (ending in "User said: … Rule:") gets a general rule built from the
// user's words ("… I want a synonym").
// Specials: "__slow__" waits 30 s, "__badjson__" answers 200 with a non-JSON body,
// "__500__" answers HTTP 500. "__list__" (labelled replies only) answers with several
// lines, a list and a `<b>` tag, for the page to show as text with its line breaks.
// Endpoint failures (errors.test.mjs):
//   "__drip__" sends 200 and its headers at once, then the body one space every 250 ms
//   for 30 s (`dripMs`) before the JSON, so only a deadline on the body read stops it;
//   "__429once__" answers 429 with Retry-After: 1 on odd hits and the normal reply on
//   even ones; "__503twice__" always answers 503 with Retry-After: 1; "__429long__"
//   always answers 429 with Retry-After: 120; "__502html__" answers 502 with nginx's
//   HTML page; "__echoauth__" answers 400 quoting the request's Authorization header.
// Retry-After is listed in Access-Control-Expose-Headers, else the page could not read it.
// Streaming: a request with "stream": true gets the same reply as server-sent events
// (text/event-stream, `wordsPerEvent` words per event every `streamMs` ms, then a chunk
// with finish_reason "stop" and `data: [DONE]`): completion chunks carry
// choices[0].text, chat chunks choices[0].delta.content (the first names the role).
// Errors and the specials above answer as they would without streaming (an error comes
// before any stream, as real servers send it; "__drip__" drips its whole JSON).
//   "__nostream__" answers plain JSON even when streaming was asked (an endpoint that
//   ignores the flag); "__slowstream__" streams one word every 500 ms (`slowStreamEveryMs`)
//   for 30 s (`slowStreamMs`) — the reply's words, then " more" — ending with
//   finish_reason "length", for the stop button.
// Test hooks: GET /__requests → JSON list of the received /v1/*completions request bodies;
// POST /__reset clears it.
//
// Run standalone: node tests/e2e/fake-llm-server.mjs [--port N] [--host H]
import http from 'node:http';
import { pathToFileURL } from 'node:url';

export const SEPARATOR = '\n\n###\n\n/';

const SYNONYMS = { fast: 'quick', happy: 'glad', big: 'large', small: 'little', sad: 'unhappy' };
const ANTONYMS = { fast: 'slow', happy: 'sad', big: 'small', small: 'big', sad: 'happy' };
const HOMONYMS = { fast: 'fasst', happy: 'happie', big: 'bigg', right: 'write', sea: 'see' };

/** The query the app asked, as the fake reads it from a completion prompt. */
export function queryFromPrompt(prompt) {
  const text = String(prompt ?? '');
  const last = text.lastIndexOf(SEPARATOR);
  if (last < 0) return text;
  const before = text.lastIndexOf(SEPARATOR, last - 1);
  return before < 0 ? text.slice(0, last) : text.slice(before + SEPARATOR.length, last);
}

/** The query from chat messages: the last user message's content. */
export function queryFromMessages(messages) {
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i] && messages[i].role === 'user') return String(messages[i].content ?? '');
  }
  return '';
}

function relationFor(query) {
  const lower = query.toLowerCase();
  const idx = lower.indexOf('| clarification:');
  if (idx >= 0) {
    const clar = lower.slice(idx);
    if (clar.includes('synonym')) return 'synonym';
    if (clar.includes('antonym') || clar.includes('opposite')) return 'antonym';
    if (clar.includes('homonym') || clar.includes('sounds like')) return 'homonym';
    if (clar.includes('defin')) return 'definition';
  }
  const question = idx >= 0 ? lower.slice(0, idx) : lower;
  if (question.includes('synonym')) return 'synonym';
  if (question.includes('opposite') || question.includes('unlike') || question.includes('antonym')) return 'antonym';
  if (question.includes('like') || question.includes('homonym')) return 'homonym';
  return 'definition';
}

/**
 * The reply to a reflection prompt ("… User said: … Rule:"): a general rule in the
 * user's voice, read from the last case's words, so the e2e test sees a real proposal.
 */
export function reflect(promptText) {
  const said = /User said: ([^\n]*)\nRule:\s*$/.exec(promptText);
  if (!said) return null;
  const relation = relationFor(`x | clarification: ${said[1]}`);
  const wanted = relation === 'definition' && /same meaning/i.test(said[1]) ? 'synonym' : relation;
  return ` when I ask what is like X, I want a ${wanted} END\nQuestion: next`;
}

/**
 * Whether the prompt shows labelled replies ("Understanding: …\nAnswer: …"), as the
 * page's general prompt does: its examples (completion) or its instruction (chat).
 */
export function asksForLabels(body) {
  if (typeof body?.prompt === 'string') return body.prompt.includes('\nAnswer: ');
  const first = Array.isArray(body?.messages) ? body.messages[0] : null;
  return typeof first?.content === 'string' && first.content.includes('"Understanding: "');
}

/** The full "generation" for a query, before stop sequences are applied, in the
 * reply form the prompt asks for. */
export function generate(query, labelled = false) {
  const m = /<\s*([^<>]*?)\s*>/.exec(query);
  const word = m && m[1] ? m[1] : 'it';
  const key = word.toLowerCase();
  let text;
  switch (relationFor(query)) {
    case 'synonym':
      text = ` the synonym for ${word} is ${SYNONYMS[key] ?? `${word}-ish`}`;
      break;
    case 'antonym':
      text = ` the antonym for ${word} is ${ANTONYMS[key] ?? `un${word}`}`;
      break;
    case 'homonym':
      text = ` the homonym for ${word} is ${HOMONYMS[key] ?? `${word}-homonym`}`;
      break;
    default:
      text = ` the definition of ${word} is something`;
  }
  if (labelled && query.includes('__list__')) {
    // A long answer: lines, a list, and markup that must be shown as text.
    text = ' Understanding: a packing list\nAnswer: Pack these:\n- water and <b>snacks</b>\n- a rain jacket\n\nEnjoy the hike.\n';
  } else if (labelled) {
    const [, understanding, answer] = /^ (.*?) is (.*)$/.exec(text);
    text = ` Understanding: ${understanding}\nAnswer: ${answer}\n`;
  }
  // Like a real model, it runs on past its reply unless a stop sequence cuts it.
  return `${text} END${SEPARATOR}what is the next question?`;
}

/** Truncates at the first occurrence of any stop string, as OpenAI-style servers do. */
export function applyStop(text, stop) {
  const stops = stop == null ? [] : Array.isArray(stop) ? stop : [stop];
  let cut = text.length;
  for (const s of stops) {
    if (typeof s !== 'string' || s === '') continue;
    const i = text.indexOf(s);
    if (i >= 0 && i < cut) cut = i;
  }
  return text.slice(0, cut);
}

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'content-type, authorization',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Max-Age': '600',
  'Access-Control-Expose-Headers': 'Retry-After',
};

export const NGINX_502_PAGE =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.18.0 (Ubuntu)</center>\r\n</body>\r\n</html>\r\n';

function send(res, status, body, type = 'application/json', headers = {}) {
  const data = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { ...CORS, ...headers, 'Content-Type': type, 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}

/**
 * Like `send`, but the body trickles in: headers at once, then one space (valid JSON
 * whitespace) every `everyMs` for `forMs`, then the body. `timers` holds the interval so
 * close() can stop it.
 */
function drip(res, status, body, { forMs, everyMs = 250, timers }) {
  const data = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { ...CORS, 'Content-Type': 'application/json' });
  res.write(' ');
  const started = Date.now();
  const t = setInterval(() => {
    if (res.destroyed) return stop();
    if (Date.now() - started >= forMs) {
      stop();
      return res.end(data);
    }
    res.write(' ');
  }, everyMs);
  const stop = () => { clearInterval(t); timers.delete(t); };
  timers.add(t);
  res.on('close', stop);
}

/**
 * `text` cut into pieces of `n` words, each word with the whitespace before it (and the
 * last with any after it), so the pieces join to `text` exactly.
 */
export function wordPieces(text, n = 1) {
  const words = text.match(/\s*\S+/g) ?? [];
  const rest = text.slice(words.join('').length);
  if (rest && words.length > 0) words[words.length - 1] += rest;
  else if (rest) words.push(rest);
  const pieces = [];
  for (let i = 0; i < words.length; i += n) pieces.push(words.slice(i, i + n).join(''));
  return pieces;
}

/**
 * Sends `pieces` as an OpenAI-style event stream, one event every `everyMs`, then a
 * last chunk with `finish` as its finish_reason and `data: [DONE]`. `timers` holds the
 * interval so close() can stop it; a client that goes away stops it too.
 */
function streamReply(res, pieces, { isCompletion, id, created, model, finish = 'stop', everyMs, timers }) {
  const object = isCompletion ? 'text_completion' : 'chat.completion.chunk';
  const chunk = (piece, finishReason, first = false) => ({
    id, object, created, model,
    choices: [
      isCompletion
        ? { index: 0, text: piece ?? '', logprobs: null, finish_reason: finishReason }
        : {
            index: 0,
            delta: piece == null ? {} : first ? { role: 'assistant', content: piece } : { content: piece },
            finish_reason: finishReason,
          },
    ],
  });
  const event = (data) => res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  res.writeHead(200, { ...CORS, 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  const queue = pieces.map((piece, i) => () => event(chunk(piece, null, i === 0)));
  queue.push(() => event(chunk(null, finish)), () => { event('[DONE]'); res.end(); });
  queue.shift()();
  const t = setInterval(() => {
    if (res.destroyed || queue.length === 0) return stop();
    queue.shift()();
    if (queue.length === 0) stop();
  }, everyMs);
  const stop = () => { clearInterval(t); timers.delete(t); };
  timers.add(t);
  res.on('close', stop);
}

function usage(promptText, completion) {
  const p = Math.ceil(promptText.length / 4);
  const c = Math.ceil(completion.length / 4);
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
}

/**
 * Starts the fake on host:port (port 0 = a free port). Resolves to
 * { server, port, url, baseUrl, requests, close() }; baseUrl ends in /v1.
 */
export function startFakeLlm({
  host = '127.0.0.1',
  port = 0,
  slowMs = 30_000,
  dripMs = 30_000,
  streamMs = 30,
  wordsPerEvent = 2,
  slowStreamMs = 30_000,
  slowStreamEveryMs = 500,
  log = false,
} = {}) {
  const requests = [];
  const timers = new Set();
  // Hits per special, for the ones that answer differently the second time.
  const hits = new Map();
  const hit = (name) => {
    const n = (hits.get(name) ?? 0) + 1;
    hits.set(name, n);
    return n;
  };
  let counter = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = (req.url || '/').split('?')[0];
      if (log) console.error(`[fake-llm] ${req.method} ${path} ${raw.length}B`);
      if (req.method === 'OPTIONS') {
        res.writeHead(204, CORS);
        return res.end();
      }
      if (req.method === 'GET' && path === '/__requests') return send(res, 200, requests);
      if (req.method === 'POST' && path === '/__reset') {
        requests.length = 0;
        hits.clear();
        return send(res, 200, { ok: true });
      }
      if (req.method === 'GET' && (path === '/health' || path === '/v1/health')) {
        return send(res, 200, { status: 'ok' });
      }
      // Connection tests (endpoints.test.mjs): below /keyed/v1 the model list wants
      // `Authorization: Bearer fake-key` (401 otherwise) and lists two models; below
      // /html/v1 it is a web page, as when the base URL points at a site.
      if (req.method === 'GET' && path === '/keyed/v1/models') {
        if (req.headers.authorization !== 'Bearer fake-key') {
          return send(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } });
        }
        return send(res, 200, {
          object: 'list',
          data: ['fake-model', 'fake-model-large'].map((id) => ({ id, object: 'model', created: 0, owned_by: 'remind-tests' })),
        });
      }
      if (req.method === 'GET' && path === '/html/v1/models') {
        return send(res, 200, '<html><head><title>Welcome</title></head><body>Hello</body></html>', 'text/html');
      }
      if (req.method === 'GET' && path === '/v1/models') {
        return send(res, 200, {
          object: 'list',
          data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'remind-tests' }],
        });
      }
      const isCompletion = req.method === 'POST' && path === '/v1/completions';
      const isChat = req.method === 'POST' && path === '/v1/chat/completions';
      if (!isCompletion && !isChat) return send(res, 404, { error: { message: `no route ${req.method} ${path}` } });

      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        return send(res, 400, { error: { message: 'request body is not JSON' } });
      }
      requests.push(body);
      const query = isCompletion ? queryFromPrompt(body.prompt) : queryFromMessages(body.messages);
      const promptText = isCompletion ? String(body.prompt ?? '') : JSON.stringify(body.messages ?? []);
      const reply = (ok = send) => {
        if (query.includes('__500__')) return send(res, 500, { error: { message: 'fake internal error' } });
        if (query.includes('__badjson__')) return send(res, 200, 'this is <not> json {', 'text/plain');
        if (query.includes('__502html__')) return send(res, 502, NGINX_502_PAGE, 'text/html');
        if (query.includes('__503twice__')) {
          return send(res, 503, { error: { message: 'fake overloaded' } }, 'application/json', { 'Retry-After': '1' });
        }
        if (query.includes('__429long__')) {
          return send(res, 429, { error: { message: 'fake rate limit' } }, 'application/json', { 'Retry-After': '120' });
        }
        if (query.includes('__429once__') && hit('__429once__') % 2 === 1) {
          return send(res, 429, { error: { message: 'fake rate limit' } }, 'application/json', { 'Retry-After': '1' });
        }
        if (query.includes('__echoauth__')) {
          return send(res, 400, { error: { message: `unexpected header Authorization: ${req.headers.authorization ?? '(none)'}` } });
        }
        const reflection = isCompletion
          ? reflect(String(body.prompt ?? ''))
          : reflect(String(body.messages?.at(-1)?.content ?? ''));
        const text = applyStop(reflection ?? generate(query, asksForLabels(body)), body.stop);
        const id = `fake-${++counter}`;
        const created = 1_700_000_000 + counter;
        const model = body.model || 'fake-model';
        const streaming = body.stream === true && ok === send && !query.includes('__nostream__');
        if (streaming && query.includes('__slowstream__')) {
          const count = Math.max(1, Math.floor(slowStreamMs / slowStreamEveryMs));
          const words = wordPieces(text).slice(0, count);
          while (words.length < count) words.push(' more');
          return streamReply(res, words, {
            isCompletion, id, created, model, finish: 'length', everyMs: slowStreamEveryMs, timers,
          });
        }
        if (streaming) {
          return streamReply(res, wordPieces(text, wordsPerEvent), {
            isCompletion, id, created, model, everyMs: streamMs, timers,
          });
        }
        if (isCompletion) {
          return ok(res, 200, {
            id, object: 'text_completion', created, model,
            choices: [{ index: 0, text, logprobs: null, finish_reason: 'stop' }],
            usage: usage(promptText, text),
          });
        }
        return ok(res, 200, {
          id, object: 'chat.completion', created, model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
          usage: usage(promptText, text),
        });
      };
      if (query.includes('__slow__')) {
        const t = setTimeout(() => { timers.delete(t); if (!res.destroyed) reply(); }, slowMs);
        timers.add(t);
        res.on('close', () => { clearTimeout(t); timers.delete(t); });
      } else if (query.includes('__drip__')) {
        reply((r, status, data) => drip(r, status, data, { forMs: dripMs, timers }));
      } else {
        reply();
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const actual = server.address().port;
      const url = `http://${host}:${actual}`;
      resolve({
        server,
        port: actual,
        url,
        baseUrl: `${url}/v1`,
        requests,
        close: () =>
          new Promise((r) => {
            for (const t of timers) clearTimeout(t);
            server.closeAllConnections?.();
            server.close(() => r());
          }),
      });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const opt = (name, def) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : def;
  };
  const fake = await startFakeLlm({ host: opt('--host', '127.0.0.1'), port: Number(opt('--port', '0')), log: true });
  console.log(`fake LLM listening on ${fake.baseUrl}`);
  const stop = () => fake.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
