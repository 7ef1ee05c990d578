// Measures how long a large import blocks the page: merges an 11 500-lesson export into a fresh profile and prints the longest main-thread task (Chrome's "longtask" entries), the preview and merge times.
//
//   node bench/import-merge.mjs [--lessons 11500] [--runs 1]
//
// Needs dist/ from `trunk build --release` (REMIND_DIST picks another). The file is
// written by tests/e2e/large-export.mjs. Each run uses a new browser profile, so the merge
// always lands in an empty memory. The figures are printed, never asserted: the page
// is responsive when no task is much over 50 ms (the longtask threshold); the target
// for this merge is at most 100 ms.
import fs from 'node:fs';
import path from 'node:path';
import { largeExport } from '../tests/e2e/large-export.mjs';
import { firstPage, freshProfileDir, launch, openApp, serveDist, waitForMemoryCount, waitForText, scratchDir } from '../tests/e2e/helpers.mjs';

const args = process.argv.slice(2);
const flag = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const LESSONS = Number(flag('--lessons', 11_500));
const RUNS = Number(flag('--runs', 1));

/** Installed before the page's own scripts: every long task, and when the file was picked. */
function observeLongTasks() {
  window.__benchLongTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__benchLongTasks.push({ start: entry.startTime, duration: entry.duration });
  }).observe({ type: 'longtask', buffered: true });
  document.addEventListener('change', (ev) => {
    if (ev.target?.id === 'import-file') window.__benchPicked = performance.now();
  }, true);
}

/** The long tasks that began in [from, to), and the longest of them. */
function tasksBetween(tasks, from, to) {
  const within = tasks.filter((t) => t.start >= from && t.start < to);
  const over50 = within.filter((t) => t.duration > 50);
  return { count: within.length, longest: Math.max(0, ...within.map((t) => t.duration)), over50: over50.length, over50At: over50.map((t) => [Math.round(t.start - from), Math.round(t.duration)]) };
}

async function run(site, file) {
  const context = await launch(freshProfileDir('bench-merge'));
  try {
    const page = await firstPage(context);
    await page.addInitScript(observeLongTasks);
    await openApp(page, site.url);
    await waitForMemoryCount(page, 0);
    await page.evaluate(() => { document.querySelector('#transfer').open = true; });
    // Let the page's own start-up tasks pass, so only the import's are counted.
    await page.waitForTimeout(1000);
    await page.setInputFiles('#import-file', file);
    await page.locator('#import-merge').waitFor({ timeout: 120_000 });
    const previewed = await page.evaluate(() => performance.now());
    const clicked = await page.evaluate(() => { document.querySelector('#import-merge').click(); return performance.now(); });
    await waitForText(page, '#memory-notice', `Merged: ${LESSONS} records written`, 120_000);
    const merged = await page.evaluate(() => performance.now());
    await waitForMemoryCount(page, LESSONS, 60_000);
    // Whatever the new memory makes the page draw runs after the notice; wait it out.
    await page.waitForTimeout(1500);
    const { picked, tasks, end } = await page.evaluate(() => ({ picked: window.__benchPicked, tasks: window.__benchLongTasks, end: performance.now() }));
    return {
      previewMs: previewed - picked,
      mergeMs: merged - clicked,
      preview: tasksBetween(tasks, picked, clicked),
      merge: tasksBetween(tasks, clicked, end),
      all: tasksBetween(tasks, picked, end),
    };
  } finally {
    await context.close().catch(() => {});
  }
}

const file = path.join(scratchDir('bench-merge'), 'large.json');
fs.writeFileSync(file, JSON.stringify(largeExport(LESSONS)));
const site = await serveDist();
try {
  console.log(`file: ${(fs.statSync(file).size / 1e6).toFixed(2)} MB, ${LESSONS} lessons; dist: ${process.env.REMIND_DIST ?? 'dist/'}`);
  for (let i = 0; i < RUNS; i += 1) {
    const r = await run(site, file);
    const ms = (x) => Math.round(x);
    console.log(`merge of ${LESSONS} lessons: longest main-thread task ${ms(r.all.longest)} ms (preview ${ms(r.previewMs)} ms, merge ${ms(r.mergeMs)} ms), ${r.all.over50} tasks over 50 ms`);
    const at = (list) => list.map(([start, length]) => `${length} ms at +${start} ms`).join(', ') || 'none';
    console.log(`  preview: longest task ${ms(r.preview.longest)} ms; over 50 ms: ${at(r.preview.over50At)}`);
    console.log(`  merge: longest task ${ms(r.merge.longest)} ms; over 50 ms: ${at(r.merge.over50At)}`);
  }
} finally {
  await site.close();
}
