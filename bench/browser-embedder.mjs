// Benchmarks Remind's MiniLM worker (tract in wasm) against transformers.js on the same int8 model in headless Chromium; prints the figures and writes artifacts/bench-embedder.json.
//
//   node bench/browser-embedder.mjs [--only-transformers | --only-remind] [--runs 100] [--warmup 10] [--worker auto|relaxed|simd128]
//
// --worker picks Remind's worker build: auto (the default) is the page's own choice, the
// relaxed-SIMD build wherever the browser validates relaxed SIMD, else the simd128 one.
//
// Needs dist/ from `trunk build --release` (Remind's worker and minilm/ files) and
// scripts/setup-bench-model (the model laid out for transformers.js). One page load per
// engine and phase, each in a freshly launched browser on that engine's own new profile:
// the cold load fills the Cache API, the warm load times the first embedding from the cache
// and then the latency runs. The engines never run at the same time. Any request to a host
// other than this machine fails the run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { scratchDir } from '../tests/e2e/helpers.mjs';
import { startStaticServer } from '../tests/e2e/static-server.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = process.env.REMIND_DIST ?? path.join(ROOT, 'dist');
const CACHE = process.env.REMIND_CACHE ?? path.join(os.homedir(), '.cache', 'remind');
const CHROMIUM = process.env.REMIND_CHROMIUM ?? '/usr/bin/chromium';
const OUT = path.join(ROOT, 'artifacts', 'bench-embedder.json');
const args = process.argv.slice(2);
const flag = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const ONLY_TJS = args.includes('--only-transformers');
// Remind alone: for comparing two of its builds, run after run, without the ratio.
const ONLY_REMIND = args.includes('--only-remind');
const RUNS = Number(flag('--runs', 100));
const WARMUP = Number(flag('--warmup', 10));
const WORKER = flag('--worker', 'auto');

// URL prefix -> directory, all on one origin. The dist/ files sit at the root.
const MOUNTS = {
  bench: path.join(ROOT, 'bench'),
  tjs: path.join(ROOT, 'bench/node_modules/@huggingface/transformers/dist'),
  ort: path.join(ROOT, 'bench/node_modules/onnxruntime-web/dist'),
  'tjs-models': path.join(CACHE, 'minilm-tjs'),
};
const REMIND_FILES = ['remind-embedder_loader.js', 'remind-embedder.js', 'remind-embedder_bg.wasm',
  'remind-embedder-relaxed_loader.js', 'remind-embedder-relaxed.js', 'remind-embedder-relaxed_bg.wasm', 'minilm/model.onnx', 'minilm/vocab.txt'];

function die(msg) {
  console.error(`bench: ${msg}`);
  process.exit(1);
}

function preflight() {
  if (ONLY_TJS && ONLY_REMIND) die('--only-transformers and --only-remind exclude each other');
  if (!['auto', 'relaxed', 'simd128'].includes(WORKER)) die(`--worker must be auto, relaxed or simd128, not ${WORKER}`);
  if (!ONLY_REMIND && !fs.existsSync(path.join(MOUNTS['tjs-models'], 'all-MiniLM-L6-v2/onnx/model_quantized.onnx'))) {
    die(`${MOUNTS['tjs-models']}/all-MiniLM-L6-v2 missing: run scripts/setup-bench-model`);
  }
  if (!ONLY_REMIND && !fs.existsSync(MOUNTS.tjs)) die('bench/node_modules/@huggingface/transformers missing: run scripts/setup-bench-model');
  if (ONLY_TJS) return;
  for (const f of REMIND_FILES) {
    if (!fs.existsSync(path.join(DIST, f))) die(`dist/${f} missing: run trunk build --release (or pass --only-transformers)`);
  }
}

/** One directory for tests/e2e/static-server.mjs: symlinks to dist/'s entries and the mounts. */
function siteDir() {
  const dir = scratchDir('bench-site');
  const entries = fs.existsSync(DIST) ? fs.readdirSync(DIST) : [];
  for (const e of entries) fs.symlinkSync(path.join(DIST, e), path.join(dir, e));
  for (const [at, target] of Object.entries(MOUNTS)) fs.symlinkSync(target, path.join(dir, at));
  if (!entries.includes('index.html')) fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>bench</title>');
  return dir;
}


/** Peak and current RSS of the browser's renderer processes (the page and its workers live there). */
function rendererMemory(profileDir) {
  const procs = fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map((pid) => {
    try {
      // Zygote children rewrite their title: arguments joined by spaces, not NULs.
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = (k) => Number(st.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0) * 1024;
      return { pid: Number(pid), ppid: Number(st.match(/^PPid:\s+(\d+)/m)[1]), cmd, hwm: kb('VmHWM'), rss: kb('VmRSS') };
    } catch {
      return null;
    }
  }).filter(Boolean);
  const browser = procs.find((p) => p.cmd.includes(`--user-data-dir=${profileDir} `) && !p.cmd.includes(' --type='));
  if (!browser) return null;
  const ours = new Set([browser.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) if (!ours.has(p.pid) && ours.has(p.ppid)) { ours.add(p.pid); grew = true; }
  }
  const renderers = procs.filter((p) => ours.has(p.pid) && p.cmd.includes(' --type=renderer '));
  if (!renderers.length) return null;
  const top = renderers.reduce((a, b) => (b.hwm > a.hwm ? b : a));
  return { renderer_peak_rss_bytes: top.hwm, renderer_rss_bytes: top.rss };
}

/** Loads the bench page for one engine and phase in a fresh browser on `profileDir`. */
async function runPhase(site, profileDir, engine, phase) {
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run',
      // Belt and braces: no name but the loopback one resolves, so nothing can leave.
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
    timeout: 60_000,
  });
  const remote = [];
  context.on('request', (r) => {
    const u = new URL(r.url());
    if (/^(https?|wss?):$/.test(u.protocol) && u.hostname !== '127.0.0.1' && u.hostname !== 'localhost') remote.push(r.url());
  });
  const served = [];
  // Bytes on the wire: the server gzips text and wasm (not the model), as a real host would.
  const onServed = (req, res) => res.on('finish', () => served.push({ url: req.url, status: res.statusCode, bytes: Number(res.getHeader('content-length') ?? 0) }));
  site.server.on('request', onServed);
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning' || m.text().startsWith('[bench]')) console.error(`  [page ${m.type()}] ${m.text()}`); });
  page.on('pageerror', (e) => console.error(`  [page exception] ${e.message}`));
  try {
    const t0 = Date.now();
    await page.goto(`${site.url}bench/embedder.html?engine=${engine}&phase=${phase}&runs=${RUNS}&warmup=${WARMUP}&worker=${WORKER}`);
    await page.waitForFunction(() => window.__benchResult || window.__benchError, null, { timeout: 600_000, polling: 250 });
    const { result, error } = await page.evaluate(() => ({ result: window.__benchResult, error: window.__benchError }));
    if (error) throw new Error(`${engine} ${phase} failed in the page: ${error}`);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const { metrics } = await cdp.send('Performance.getMetrics');
    result.memory = { ...result.memory, ...rendererMemory(profileDir),
      page_js_heap_used_bytes: metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? null };
    result.served = served;
    result.wall_ms = Date.now() - t0;
    return result;
  } finally {
    site.server.off('request', onServed);
    await context.close();
    if (remote.length) throw new Error(`${engine} ${phase} tried to reach another host (blocked):\n  ${[...new Set(remote)].join('\n  ')}`);
  }
}

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]; };
const cosine = (a, b) => { let d = 0, na = 0, nb = 0; for (let i = 0; i < a.length; i++) { d += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i]; } return d / Math.sqrt(na * nb); };
const mb = (b) => (b == null ? 'n/a' : `${(b / 1048576).toFixed(1)} MB`);
const ms = (x) => (x == null ? 'n/a' : `${x.toFixed(1)} ms`);
const fileSize = (f) => fs.statSync(f).size;

/** Bytes of the files an engine's cold load fetched, by kind. */
function downloads(served, engine) {
  const mine = served.filter((s) => s.status === 200 && !s.url.startsWith('/bench/'));
  const kind = (u) => (u.endsWith('.wasm') ? 'wasm' : /\.(m?js)$/.test(u.split('?')[0]) ? 'js' : 'model');
  const by = { js: 0, wasm: 0, model: 0 };
  for (const s of mine) by[kind(s.url)] += s.bytes;
  return { engine, total_bytes: by.js + by.wasm + by.model, ...Object.fromEntries(Object.entries(by).map(([k, v]) => [`${k}_bytes`, v])),
    files: mine.map((s) => `${s.url} ${s.bytes}`) };
}

function summarise(runs) {
  const s = { latency: {}, ratio_tjs_over_remind_p50: {}, first_embedding_cached: {}, first_embedding_cold: {}, downloads: {}, memory: {}, tokens: {} };
  for (const [engine, r] of Object.entries(runs)) {
    s.first_embedding_cold[engine] = r.cold.startup;
    s.first_embedding_cached[engine] = r.warm.startup;
    s.downloads[engine] = downloads(r.cold.served, engine);
    s.downloads[engine].warm_load_files = r.warm.served.filter((x) => !x.url.startsWith('/bench/')).map((x) => `${x.url} ${x.bytes}`);
    s.memory[engine] = r.warm.memory;
    for (const [bucket, l] of Object.entries(r.warm.latency)) {
      const toks = Object.values(r.warm.sentences).filter((x) => x.bucket === bucket).map((x) => x.tokens);
      s.tokens[`${engine}.${bucket}`] = toks;
      s.latency[`${engine}.${bucket}`] = { p50_ms: pct(l.ms, 50), p95_ms: pct(l.ms, 95), min_ms: Math.min(...l.ms), n: l.ms.length,
        tokens_min: Math.min(...toks), tokens_max: Math.max(...toks),
        compute_p50_ms: l.compute_ms && pct(l.compute_ms, 50), compute_p95_ms: l.compute_ms && pct(l.compute_ms, 95) };
    }
  }
  if (runs.remind && runs.tjs) {
    for (const bucket of ['short', 'long']) {
      s.ratio_tjs_over_remind_p50[bucket] = {
        vs_round_trip: s.latency[`tjs.${bucket}`].p50_ms / s.latency[`remind.${bucket}`].p50_ms,
        vs_compute: s.latency[`tjs.${bucket}`].p50_ms / s.latency[`remind.${bucket}`].compute_p50_ms,
      };
    }
    const cos = Object.entries(runs.remind.warm.sentences).map(([t, r]) => ({ text: t, cosine: cosine(r.vector, runs.tjs.warm.sentences[t].vector),
      remind_tokens: r.tokens, tjs_tokens: runs.tjs.warm.sentences[t].tokens }));
    s.agreement = { min_cosine: Math.min(...cos.map((c) => c.cosine)), per_sentence: cos,
      token_count_mismatches: cos.filter((c) => c.remind_tokens !== c.tjs_tokens) };
  }
  if (runs.remind) {
    const wasm = runs.remind.warm.startup.worker_script.replace(/^\//, '').replace('_loader.js', '_bg.wasm');
    s.downloads.remind.on_disk_bytes = Object.fromEntries([wasm, ...REMIND_FILES.slice(-2)].map((f) => [f, fileSize(path.join(DIST, f))]));
  }
  const bad = Object.entries(s.tokens).flatMap(([k, toks]) => toks.filter((n) => (k.endsWith('short') ? n > 16 : n < 17 || n > 32)).map((n) => `${k}: ${n}`));
  if (bad.length) s.token_bucket_violations = bad;
  return s;
}

function print(s) {
  const engines = Object.keys(s.first_embedding_cached);
  console.log('\nLatency, one sentence per call, single thread (p50 / p95):');
  console.log('engine   bucket  tokens   round trip p50 / p95 (min)       worker compute p50 / p95');
  for (const [k, l] of Object.entries(s.latency)) {
    const [engine, bucket] = k.split('.');
    const compute = l.compute_p50_ms == null ? '' : `${ms(l.compute_p50_ms)} / ${ms(l.compute_p95_ms)}`;
    console.log(`${engine.padEnd(8)} ${bucket.padEnd(7)} ${`${l.tokens_min}-${l.tokens_max}`.padEnd(8)} ${`${ms(l.p50_ms)} / ${ms(l.p95_ms)} (${ms(l.min_ms)})`.padEnd(32)} ${compute}`);
  }
  for (const [bucket, r] of Object.entries(s.ratio_tjs_over_remind_p50)) {
    console.log(`ratio transformers.js p50 / Remind p50, ${bucket}: ${r.vs_round_trip.toFixed(2)} (vs Remind's compute: ${r.vs_compute.toFixed(2)})`);
  }
  const w = s.first_embedding_cached.remind;
  if (w) {
    console.log(`\nRemind's worker: ${w.worker_script}, build ${w.build}; matmul kernels of the plan built before ready: ${w.matmul_kernels.join(', ')}; `
      + `of the plans the timed runs used: ${w.plans ? `${w.plans.matmul_kernels.join(', ')} (built in ${w.plans.build_ms.toFixed(0)} ms once idle)` : 'no plans message'}`);
  }
  const kept = s.first_embedding_cold.remind?.converted;
  if (w) {
    console.log(`Remind's cached load: ${w.from_converted ? 'from the converted model' : `from the ONNX (${w.onnx_because ?? 'a worker that keeps no conversion'})`}; `
      + `the first load kept a conversion: ${kept ? `${kept.stored} (${mb(kept.bytes)} in ${ms(kept.convert_ms)}${kept.error ? `, ${kept.error}` : ''})` : 'no message'}`);
  }
  console.log('\nFirst embedding (start to first vector):');
  for (const e of engines) {
    const [c, w] = [s.first_embedding_cold[e], s.first_embedding_cached[e]];
    const extra = e === 'remind' ? `started ${ms(w.started_ms)}, ready ${ms(w.ready_ms)}, from_cache ${w.from_cache}, from_converted ${w.from_converted}, read_early ${w.read_early}, download ${ms(w.download_ms)}, init ${ms(w.init_ms)}`
      : `import ${ms(w.import_ms)}, pipeline ready ${ms(w.ready_ms)}`;
    console.log(`${e.padEnd(8)} cached ${ms(w.first_embedding_ms)} (${extra}); first ever ${ms(c.first_embedding_ms)}`);
  }
  console.log('\nDownloaded on the first load (bytes served):');
  for (const e of engines) {
    const d = s.downloads[e];
    console.log(`${e.padEnd(8)} ${mb(d.total_bytes)} = js ${mb(d.js_bytes)} + wasm ${mb(d.wasm_bytes)} + model ${mb(d.model_bytes)}; the cached load fetched ${d.warm_load_files.length} file(s)`);
    for (const f of d.files) console.log(`           ${f}`);
    if (d.on_disk_bytes) console.log(`           on disk: ${Object.entries(d.on_disk_bytes).map(([f, b]) => `${f} ${mb(b)}`).join(', ')}`);
  }
  console.log('\nMemory after the timed runs:');
  for (const e of engines) {
    const m = s.memory[e];
    console.log(`${e.padEnd(8)} renderer peak RSS ${mb(m.renderer_peak_rss_bytes)}, page JS heap ${mb(m.page_js_heap_used_bytes)}${m.worker_memory_bytes ? `, worker wasm memory ${mb(m.worker_memory_bytes)}` : ''}`);
  }
  if (s.agreement) {
    console.log(`\nAgreement: min cosine(Remind, transformers.js) over ${s.agreement.per_sentence.length} sentences = ${s.agreement.min_cosine.toFixed(6)}`);
    if (s.agreement.token_count_mismatches.length) console.log(`token counts differ: ${JSON.stringify(s.agreement.token_count_mismatches)}`);
  }
  if (s.first_embedding_cached.remind?.from_cache === false) console.log('\nWARNING: Remind\'s second load did not find its model in the Cache API');
  if (s.token_bucket_violations) console.log(`\nWARNING: sentences outside their token bucket: ${s.token_bucket_violations.join(', ')}`);
}

preflight();
const dir = siteDir();
const site = { ...(await startStaticServer({ dir })), dir };
const load = [os.loadavg()[0]];
const runs = {};
const profiles = [];
try {
  for (const engine of ONLY_TJS ? ['tjs'] : ONLY_REMIND ? ['remind'] : ['remind', 'tjs']) {
    runs[engine] = {};
    // Each engine gets its own fresh profile, so its cold load is truly cold.
    const profileDir = scratchDir(`bench-${engine}`);
    profiles.push(profileDir);
    for (const phase of ['cold', 'warm']) {
      console.error(`bench: ${engine} ${phase}…`);
      runs[engine][phase] = await runPhase(site, profileDir, engine, phase);
    }
  }
} catch (e) {
  console.error(`bench: ${e.message}`);
  process.exitCode = 1;
} finally {
  await site.close();
  fs.rmSync(dir, { recursive: true, force: true });
  for (const p of profiles) fs.rmSync(p, { recursive: true, force: true });
}
if (process.exitCode) process.exit();
load.push(os.loadavg()[0]);
const summary = summarise(runs);
print(summary);
console.log(`\nload average (1 min) before / after: ${load.map((x) => x.toFixed(2)).join(' / ')} on ${os.cpus().length} cores`);
fs.mkdirSync(path.dirname(OUT), { recursive: true });
const raw = Object.fromEntries(Object.entries(runs).map(([e, r]) => [e, Object.fromEntries(Object.entries(r).map(([p, x]) => [p, { ...x, sentences: undefined }]))]));
fs.writeFileSync(OUT, JSON.stringify({ date: new Date().toISOString(), runs: RUNS, warmup: WARMUP, only_transformers: ONLY_TJS, only_remind: ONLY_REMIND, load_average: load, summary, raw }, null, 1));
console.log(`wrote ${path.relative(ROOT, OUT)}`);
