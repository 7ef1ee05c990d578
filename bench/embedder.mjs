// Page half of the embedder benchmark: times one embedder (Remind's worker or transformers.js) per page load and leaves raw figures in window.__benchResult.
//
// ?engine=remind|tjs   which embedder
// ?phase=cold|warm     cold: only the first embedding (fills the Cache API);
//                      warm: first embedding from the cache, then the timed runs
// ?warmup=10&runs=100  calls per length bucket, one sentence per call, sequential
// ?worker=auto|relaxed|simd128  Remind's worker build; auto picks as the page does

// Up to 16 WordPiece tokens with [CLS]/[SEP] (12..16), and 17..32 (25..30).
const SENTENCES = {
  short: [
    'What is like < fast > ? | clarification: a synonym',
    'What is the opposite of < cold > in English?',
    'What sounds like < dear > but is an animal?',
    'Spell the word < necessary > backwards for me.',
    'What rhymes with < orange > , if anything?',
    'Give me a synonym for < quick > , please.',
    'What is the plural of < mouse > in English?',
    'Translate < bonjour > from French into English.',
    'Which word means the same as < enormous > ?',
    'What is like < happy > ? I want a synonym.',
  ],
  long: [
    'When I ask for a word that is like another word, I want a synonym rather than a homonym, please, every time.',
    'What is a word that sounds like < knight > but means the dark part of the day, after the sun has set?',
    'Please give me three different words that mean roughly the same thing as < happy > , in plain and simple English.',
    'If I ask what is like < fast >, I mean a word with a similar meaning, not one that merely sounds alike.',
    'Can you tell me the past tense of < swim > and then use it in a short example sentence about a summer holiday?',
    'I keep forgetting how to spell < rhythm >; could you please write it out for me slowly, one letter at a time?',
    'Which English word is the opposite of < generous >, and which one is the closest to it in meaning and in tone?',
    'My clarification: when I ask for the plural of an animal, give the irregular form if there is one, like mice.',
    'Explain the difference between < affect > and < effect > in a single plain sentence, with one example of each.',
    'Give me a word that rhymes with < orange >, or say plainly that no such word exists in standard English today.',
  ],
};

const params = new URLSearchParams(location.search);
const ENGINE = params.get('engine');
const PHASE = params.get('phase') ?? 'warm';
const WARMUP = Number(params.get('warmup') ?? 10);
const RUNS = Number(params.get('runs') ?? 100);
const WORKER = params.get('worker') ?? 'auto';

/** The page's test for relaxed SIMD (RELAXED_SIMD_PROBE in src/adapters/worker_embedder.rs): a function returning f32x4.relaxed_madd of three splats, valid only where relaxed SIMD runs. */
const RELAXED_SIMD_PROBE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b,
  0x03, 0x02, 0x01, 0x00, 0x0a, 0x13, 0x01, 0x11, 0x00, 0x41, 0x01, 0xfd, 0x11, 0x41, 0x01, 0xfd, 0x11, 0x41, 0x01, 0xfd, 0x11,
  0xfd, 0x85, 0x02, 0x0b]);

/** The worker script the page would start (or the one ?worker= names). */
function remindWorkerScript() {
  const relaxed = WORKER === 'relaxed' || (WORKER === 'auto' && WebAssembly.validate(RELAXED_SIMD_PROBE));
  return relaxed ? '/remind-embedder-relaxed_loader.js' : '/remind-embedder_loader.js';
}

const status = (text) => {
  document.querySelector('#status').textContent = text;
  console.log(`[bench] ${ENGINE} ${PHASE}: ${text}`);
};

/** A message the worker sends once: `arrived` takes it, `within(ms)` waits up to `ms` for it. */
function sentOnce() {
  let resolve;
  const arrival = new Promise((r) => { resolve = r; });
  const message = {
    seen: null,
    arrived(data) { message.seen = data; resolve(data); },
    async within(ms) {
      await Promise.race([arrival, new Promise((r) => setTimeout(r, ms))]);
      return message.seen;
    },
  };
  return message;
}

/** Remind's embedder worker, spoken to through its postMessage protocol. */
async function startRemind() {
  const t0 = performance.now();
  const workerScript = remindWorkerScript();
  // Named as the page names it (`EarlyRead`), so its loader reads the model early.
  const worker = new Worker(workerScript, { name: JSON.stringify({ cache: 'remind-minilm-bench', model_url: '/minilm/model.onnx' }) });
  const waiting = new Map();
  let initialisingMs = null;
  let startedMs = null;
  let fail;
  // After a load from the ONNX file the worker keeps a converted copy for the next load
  // and says so with `converted`; the cold phase waits for it, or the warm one finds none.
  const converted = sentOnce();
  // Once idle after `ready`, the worker builds the plans of later questions (with its
  // weight products on int8 weights) and says so with `plans`.
  const plans = sentOnce();
  const ready = new Promise((resolve, reject) => {
    fail = reject;
    worker.onerror = (e) => reject(new Error(`worker error: ${e.message || 'the worker script failed to load'}`));
    worker.onmessage = ({ data }) => {
      if (data.kind === 'started') startedMs = performance.now() - t0;
      if (data.kind === 'started') worker.postMessage({ kind: 'load', model_url: '/minilm/model.onnx', vocab_url: '/minilm/vocab.txt', model_id: 'bench' });
      if (data.kind === 'initialising') initialisingMs = performance.now() - t0;
      else if (data.kind === 'ready') resolve(data);
      else if (data.kind === 'failed') reject(new Error(`worker failed to load: ${data.error}`));
      else if (data.kind === 'converted') converted.arrived(data);
      else if (data.kind === 'plans') plans.arrived(data);
      else if (data.kind === 'embedded' || data.kind === 'embed_failed') {
        waiting.get(data.id)?.(data);
        waiting.delete(data.id);
      }
    };
  });
  const readyMsg = await ready;
  const readyMs = performance.now() - t0;
  let nextId = 0;
  const embed = (text) => new Promise((resolve, reject) => {
    const id = ++nextId;
    waiting.set(id, (d) => (d.kind === 'embedded' ? resolve(d) : reject(new Error(`embed ${id} failed: ${d.error}`))));
    worker.postMessage({ kind: 'embed', id, texts: [text] });
  });
  worker.onerror = (e) => fail(new Error(`worker error after ready: ${e.message}`));
  let memoryBytes = readyMsg.memory_bytes;
  return {
    t0,
    startup: { ready_ms: readyMs, started_ms: startedMs, initialising_ms: initialisingMs, from_cache: readyMsg.from_cache,
      download_ms: readyMsg.download_ms, init_ms: readyMsg.init_ms, model_id: readyMsg.model_id,
      worker_script: workerScript, build: readyMsg.build, matmul_kernels: readyMsg.matmul_kernels,
      from_converted: readyMsg.from_converted, onnx_because: readyMsg.onnx_because, read_early: readyMsg.read_early },
    /** The worker's `plans` message, waiting up to `ms` for it. */
    plans: (ms) => plans.within(ms),
    /** The worker's `converted` message, waiting up to `ms` for it after a load from the ONNX. */
    async conversion(ms) {
      if (readyMsg.from_converted !== false) return null; // converted already, or an older worker
      return converted.within(ms);
    },
    async embedOne(text) {
      const d = await embed(text);
      memoryBytes = Math.max(memoryBytes, d.memory_bytes);
      return { vector: Array.from(d.vectors[0]), tokens: d.token_counts[0], compute_ms: d.compute_ms };
    },
    memory: () => ({ worker_memory_bytes: memoryBytes }),
    close: () => worker.terminate(),
  };
}

/** transformers.js on onnxruntime-web (wasm, one thread), everything served from this origin. */
async function startTjs() {
  const t0 = performance.now();
  const { env, pipeline } = await import('/tjs/transformers.js');
  const importMs = performance.now() - t0;
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = '/tjs-models/';
  env.backends.onnx.wasm.wasmPaths = {
    mjs: '/ort/ort-wasm-simd-threaded.asyncify.mjs',
    wasm: '/ort/ort-wasm-simd-threaded.asyncify.wasm',
  };
  env.backends.onnx.wasm.numThreads = 1;
  const extractor = await pipeline('feature-extraction', 'all-MiniLM-L6-v2', { dtype: 'q8', device: 'wasm' });
  const pipelineMs = performance.now() - t0;
  return {
    t0,
    startup: { import_ms: importMs, ready_ms: pipelineMs, use_browser_cache: env.useBrowserCache,
      use_wasm_cache: env.useWasmCache, ort_version: env.backends.onnx.versions?.web ?? null },
    async embedOne(text) {
      const out = await extractor(text, { pooling: 'mean', normalize: true });
      return { vector: Array.from(out.data) };
    },
    tokens: (text) => extractor.tokenizer(text).input_ids.dims.at(-1),
    memory: () => ({}),
    close: () => extractor.dispose(),
  };
}

/** Warm-up calls, then `RUNS` timed calls cycling through the bucket's sentences. */
async function timeBucket(engine, texts) {
  for (let i = 0; i < WARMUP; i++) await engine.embedOne(texts[i % texts.length]);
  const ms = [];
  const computeMs = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const r = await engine.embedOne(texts[i % texts.length]);
    ms.push(performance.now() - t);
    if (r.compute_ms !== undefined) computeMs.push(r.compute_ms);
  }
  return { ms, compute_ms: computeMs.length ? computeMs : null };
}

async function run() {
  if (ENGINE !== 'remind' && ENGINE !== 'tjs') throw new Error(`?engine must be remind or tjs, not ${ENGINE}`);
  status('starting');
  const engine = await (ENGINE === 'remind' ? startRemind() : startTjs());
  status('ready; first embedding');
  await engine.embedOne(SENTENCES.short[0]);
  const result = { engine: ENGINE, phase: PHASE, startup: { ...engine.startup, first_embedding_ms: performance.now() - engine.t0 } };
  if (PHASE === 'warm') {
    if (engine.plans) {
      // What a question meets once the page has been open a moment, not the first plan.
      status('waiting for the plans of later questions');
      result.startup.plans = await engine.plans(30_000);
    }
    result.sentences = {};
    for (const [bucket, texts] of Object.entries(SENTENCES)) {
      for (const text of texts) {
        const r = await engine.embedOne(text);
        result.sentences[text] = { bucket, vector: r.vector, tokens: r.tokens ?? engine.tokens(text) };
      }
    }
    result.latency = {};
    for (const [bucket, texts] of Object.entries(SENTENCES)) {
      status(`timing ${bucket}: ${WARMUP} warm-up + ${RUNS} runs`);
      result.latency[bucket] = await timeBucket(engine, texts);
    }
  }
  if (PHASE === 'cold' && engine.conversion) {
    status('waiting for the converted model to be kept');
    result.startup.converted = await engine.conversion(60_000);
  }
  result.memory = engine.memory();
  await engine.close();
  return result;
}

run().then(
  (r) => { status('done'); window.__benchResult = r; },
  (e) => { status(`FAILED: ${e.stack || e}`); window.__benchError = String(e.stack || e); },
);
