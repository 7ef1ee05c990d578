// Lists where a Chromium CPU profile (.cpuprofile, from bench/memory-scale.mjs --profile) spent its time: the functions with the most self time, and with the most total time; with --callees, where the time of the functions whose name holds PATTERN went, callee by callee.
//
//   node bench/profile-summary.mjs FILE [--top 30] [--callees PATTERN [--depth 1]]
import fs from 'node:fs';

const args = process.argv.slice(2);
const option = (flag, otherwise) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : otherwise);
const top = Number(option('--top', 30));
const callees = option('--callees', null);
const depth = Number(option('--depth', 1));
const file = args.find((a, i) => !a.startsWith('--') && !['--top', '--callees', '--depth'].includes(args[i - 1]));
if (!file) {
  console.error('usage: node bench/profile-summary.mjs FILE [--top 30] [--callees PATTERN [--depth 1]]');
  process.exit(1);
}
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// A sample's time is the gap to the next sample's timestamp.
const selfMs = new Map();
let t = profile.startTime;
profile.samples.forEach((id, i) => {
  t += profile.timeDeltas[i];
  const next = profile.timeDeltas[i + 1] ?? 0;
  selfMs.set(id, (selfMs.get(id) ?? 0) + next / 1000);
});

const name = (n) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url ? n.callFrame.url.split('/').pop() : ''}`.trim();
const self = new Map();
const total = new Map();
for (const [id, ms] of selfMs) {
  const n = byId.get(id);
  self.set(name(n), (self.get(name(n)) ?? 0) + ms);
  // Each function counted once per sample, however often it recurs on the stack.
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const k = name(byId.get(cur));
    if (seen.has(k)) continue;
    seen.add(k);
    total.set(k, (total.get(k) ?? 0) + ms);
  }
}
const wall = (profile.endTime - profile.startTime) / 1000;
const list = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `${v.toFixed(0).padStart(7)} ms  ${k}`).join('\n');
console.log(`${file}: ${wall.toFixed(0)} ms profiled`);
console.log(`\nself time:\n${list(self)}`);
console.log(`\ntotal time:\n${list(total)}`);

// Under the outermost frame whose name holds the pattern: the next `depth` frames of
// each sample's stack, so a function's time splits into what it called.
if (callees) {
  const under = new Map();
  let all = 0;
  for (const [id, ms] of selfMs) {
    const stack = [];
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) stack.unshift(name(byId.get(cur)));
    const at = stack.findIndex((frame) => frame.includes(callees));
    if (at < 0) continue;
    all += ms;
    const path = stack.slice(at + 1, at + 1 + depth).join(' > ') || '(its own code)';
    under.set(path, (under.get(path) ?? 0) + ms);
  }
  console.log(`\nunder ${callees} (${all.toFixed(0)} ms):\n${list(under)}`);
}
