// How the benchmarks time a question in the page: from the click on "Ask" to the reply
// on screen, as the page's own DOM shows it, and how much of that was the model's.
// Shared by memory-scale.mjs and turn-log.mjs.

/** The middle value of `xs` (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Types `question` in `page`, waits `typingPauseMs` (as a person pauses before asking;
 * 0: asked at once), asks, and returns, in milliseconds:
 * - `totalMs`: from the click to the reply on screen (the new turn answered or failed);
 * - `modelMs`: the model's part of it, the completion request's time as the page's Resource
 *   Timing gives it (from the `fetch` to the reply's last byte: the server's work and
 *   the browser's network stack, which no page can skip);
 * - `overheadMs`: the rest, Remind's own (the "time minus the model's").
 */
export async function timedAsk(page, question, typingPauseMs = 0) {
  await page.fill('#ask-input', question);
  if (typingPauseMs > 0) await page.waitForTimeout(typingPauseMs);
  return page.evaluate(() => new Promise((resolve, reject) => {
    const turns = () => document.querySelectorAll('#conversation-turns > .turn');
    const before = turns().length;
    // The buffer holds 250 entries; emptied, it holds this ask's alone.
    performance.clearResourceTimings();
    performance.mark('bench-ask-start');
    const started = performance.now();
    const done = () => {
      const list = turns();
      const last = list[list.length - 1];
      return list.length > before && last && ['answered', 'failed'].includes(last.dataset.state);
    };
    const observer = new MutationObserver(() => {
      if (done()) {
        observer.disconnect();
        performance.mark('bench-ask-done');
        const totalMs = performance.now() - started;
        // The browser queues a request's entry in a task of its own, so it is read a
        // little later; the time was taken above.
        setTimeout(() => {
          const requests = performance.getEntriesByType('resource')
            .filter((entry) => entry.name.endsWith('/completions') && entry.startTime >= started);
          if (requests.length === 0) {
            reject(new Error('the ask made no completion request that Resource Timing saw'));
            return;
          }
          const modelMs = requests.reduce((sum, entry) => sum + (entry.responseEnd - entry.startTime), 0);
          resolve({ totalMs, modelMs, overheadMs: totalMs - modelMs });
        }, 50);
      }
    });
    observer.observe(document.body, { subtree: true, childList: true, attributes: true });
    document.querySelector('#ask-submit').click();
  }));
}
