// How the benchmarks time a question in the page: from the click on "Ask" to the reply
// on screen, as the page's own DOM shows it. Shared by memory-scale.mjs and turn-log.mjs.

/** The middle value of `xs` (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Types `question` in `page`, waits `typingPauseMs` (as a person pauses before asking;
 * 0: asked at once), asks, and returns the milliseconds from the click to the reply on
 * screen (the new turn answered or failed).
 */
export async function timedAsk(page, question, typingPauseMs = 0) {
  await page.fill('#ask-input', question);
  if (typingPauseMs > 0) await page.waitForTimeout(typingPauseMs);
  return page.evaluate(() => new Promise((resolve) => {
    const turns = () => document.querySelectorAll('#conversation-turns > .turn');
    const before = turns().length;
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
        resolve(performance.now() - started);
      }
    });
    observer.observe(document.body, { subtree: true, childList: true, attributes: true });
    document.querySelector('#ask-submit').click();
  }));
}
