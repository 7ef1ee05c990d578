// Measures how long the page takes to embed an import's lessons in the background: imports N lessons without embeddings into a real page and times, by the page's clock, from the merge reported to every lesson embedded (`#memory-count`'s data-embedded). Figures are printed, never asserted.
//
//   node bench/background-embedding.mjs [--lessons 1000]     # REMIND_DIST=dir for another build
//
// The lessons are large-export.mjs's (keys of 16 and 17 tokens, as the import of a real
// memory's questions), and nobody types or asks meanwhile, so the background has the
// worker to itself. Needs dist/ from `trunk build --release` and the embedder files.
import fs from 'node:fs';
import path from 'node:path';
import { largeExport } from '../tests/e2e/large-export.mjs';
import { startFakeLlm } from '../tests/e2e/fake-llm-server.mjs';
import { firstPage, freshProfileDir, launch, mergeFile, openApp, saveSettings, serveDist, waitForEmbedded, scratchDir } from '../tests/e2e/helpers.mjs';

const args = process.argv.slice(2);
const LESSONS = Number(args.includes('--lessons') ? args[args.indexOf('--lessons') + 1] : 1000);

const site = await serveDist();
const fake = await startFakeLlm();
const file = path.join(scratchDir('bench-background'), 'lessons.json');
fs.writeFileSync(file, JSON.stringify(largeExport(LESSONS)));
const context = await launch(freshProfileDir('bench-background'));
try {
  const page = await firstPage(context);
  await openApp(page, site.url, { embedder: ['ready'] });
  await saveSettings(page, { baseUrl: fake.baseUrl });
  // The worker's plans after `Ready` and its keeping of the converted model are done
  // within a few seconds of an idle page; measured after them, as a returning visitor's.
  await page.waitForTimeout(3000);
  await mergeFile(page, file, LESSONS);
  const merged = await page.evaluate(() => performance.now());
  await waitForEmbedded(page, LESSONS, { timeout: 600_000, polling: 50 });
  const embedded = await page.evaluate(() => performance.now());
  const ms = embedded - merged;
  console.log(`background embedding: ${LESSONS} lessons in ${ms.toFixed(0)} ms (${(ms / LESSONS).toFixed(1)} ms a lesson)`);
} finally {
  await context.close().catch(() => {});
  await site.close();
  await fake.close();
}
