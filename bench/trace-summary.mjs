// Lists, thread by thread, what a Chromium trace (from bench/memory-scale.mjs --trace) shows each thread doing: the page's main thread, the embedder worker and the rest, between the bench's marks if it set them (an ask), else over the whole trace.
//
//   node bench/trace-summary.mjs FILE [--min 0.5]
import fs from 'node:fs';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
const minMs = Number(args.includes('--min') ? args[args.indexOf('--min') + 1] : 0.5);
if (!file) {
  console.error('usage: node bench/trace-summary.mjs FILE [--min 0.5]');
  process.exit(1);
}
const trace = JSON.parse(fs.readFileSync(file, 'utf8'));
const events = Array.isArray(trace) ? trace : trace.traceEvents;

const threadNames = new Map();
for (const e of events) {
  if (e.ph === 'M' && e.name === 'thread_name') threadNames.set(`${e.pid}:${e.tid}`, e.args.name);
}
const mark = (name) => events.find((e) => e.name === name && (e.ph === 'R' || e.ph === 'I' || e.ph === 'n' || e.ph === 'b' || e.ph === 'X'))?.ts;
const timed = events.filter((e) => e.ph === 'X' && typeof e.dur === 'number');
const from = mark('bench-ask-start') ?? Math.min(...timed.map((e) => e.ts));
const to = mark('bench-ask-done') ?? Math.max(...timed.map((e) => e.ts + e.dur));
console.log(`${file}: ${((to - from) / 1000).toFixed(1)} ms from ${mark('bench-ask-start') ? 'the ask' : 'the trace\'s start'} to ${mark('bench-ask-done') ? 'its answer' : 'its end'}`);

// The tasks a thread ran (its outermost events), with the named work inside each.
const TASKS = new Set(['ThreadControllerImpl::RunTask', 'RunTask']);
const byThread = new Map();
for (const e of timed) {
  if (e.ts + e.dur < from || e.ts > to) continue;
  const key = `${e.pid}:${e.tid}`;
  if (!byThread.has(key)) byThread.set(key, []);
  byThread.get(key).push(e);
}
const label = (e) => {
  const data = e.args?.data ?? {};
  const what = data.functionName || data.type || data.url?.split('/').pop() || data.frame || '';
  return what ? `${e.name} (${what})` : e.name;
};
for (const [key, list] of byThread) {
  const name = threadNames.get(key) ?? key;
  list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  // A task's event nests in another's (RunTask around ThreadControllerImpl::RunTask):
  // each counts once, as its outermost.
  const all = list.filter((e) => TASKS.has(e.name));
  const tasks = all.filter((e) => !all.some((o) => o !== e && o.ts <= e.ts && o.ts + o.dur >= e.ts + e.dur && (o.dur > e.dur || o.ts < e.ts || all.indexOf(o) < all.indexOf(e))));
  const busy = tasks.reduce((sum, e) => sum + Math.min(e.ts + e.dur, to) - Math.max(e.ts, from), 0) / 1000;
  if (busy < minMs) continue;
  console.log(`\n${name}: busy ${busy.toFixed(1)} ms in ${tasks.length} tasks`);
  for (const task of tasks) {
    if (task.dur / 1000 < minMs) continue;
    const inside = list.filter((e) => e !== task && !TASKS.has(e.name) && e.ts >= task.ts && e.ts + e.dur <= task.ts + task.dur && e.dur / 1000 >= minMs);
    const top = inside.filter((e) => !inside.some((o) => o !== e && o.ts <= e.ts && o.ts + o.dur >= e.ts + e.dur && o.dur > e.dur));
    const at = ((task.ts - from) / 1000).toFixed(1).padStart(7);
    console.log(`${at} ms  ${(task.dur / 1000).toFixed(1).padStart(6)} ms  ${top.map((e) => `${label(e)} ${(e.dur / 1000).toFixed(1)}`).join(', ') || '(no named work)'}`);
  }
}
