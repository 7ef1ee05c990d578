// Writes a valid Remind export of many clarifications (default 11 500, about 5 MB), the file bench/import-merge.mjs and large-import.test.mjs merge.
//
//   node tests/e2e/large-export.mjs [--lessons 11500] [--out /tmp/remind-large.json]
//
// Every record is a current clarification under its own key, with no embedding (an
// export leaves them out unless asked for; `embeddingModel` adds a random unit vector of
// 384 values to each, packed as an export packs them). The key is computed as Remind computes it for a question
// with a `< word >` marker: lower-cased, the marked word masked as `< >`, spaces folded.
import fs from 'node:fs';
import path from 'node:path';

/** The key Remind gives a question holding a `< word >` marker (MemoryKey::of_exact_question). */
export function markedQuestionKey(question) {
  return question.toLowerCase().replace(/<[^>]*>/g, ' < > ').split(/\s+/).filter(Boolean).join(' ');
}

const WORDS = ['river', 'garden', 'window', 'lantern', 'meadow', 'harbor', 'violin', 'pepper', 'saddle', 'canyon', 'marble', 'thistle', 'orchard', 'compass', 'velvet', 'glacier'];

/** A word per number, so each question (and so each key) is its own: "river-garden-window". */
function phrase(n) {
  const parts = [];
  let rest = n;
  for (let i = 0; i < 4; i += 1) {
    parts.push(WORDS[rest % WORDS.length]);
    rest = Math.floor(rest / WORDS.length);
  }
  return parts.join(' ');
}

/** 384 values of unit length from a fixed sequence, packed as an export packs a vector: base64 of little-endian 32-bit floats. */
function packedUnitVector(next) {
  const raw = Array.from({ length: 384 }, next);
  const length = Math.hypot(...raw);
  const vector = Float32Array.from(raw, (x) => x / length);
  return Buffer.from(vector.buffer).toString('base64');
}

/**
 * An export document of `lessons` current clarifications, about 450 bytes each (5.2 MB
 * for 11 500, under the 5 MiB limit), with an embedding of `embeddingModel` each (2 kB
 * more) when one is named.
 */
export function largeExport(lessons, { embeddingModel } = {}) {
  const records = [];
  let seed = 1;
  const next = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 - 0.5; };
  for (let n = 0; n < lessons; n += 1) {
    const question = `What is the ${phrase(n)} like < fast > in lesson ${n}?`;
    records.push({
      id: `bench-${n}`,
      key: markedQuestionKey(question),
      question,
      clarification: `when I ask what the ${phrase(n)} is like, I mean a short comparison in plain words.`,
      kind: 'clarification',
      scope: 'always',
      source: 'user_stated',
      created_at: 1_700_000_000_000 + n,
      version: 1,
      supersedes: null,
      superseded_by: null,
      state: 'current',
      ...(embeddingModel ? { embedding: { model: embeddingModel, vector: packedUnitVector(next) } } : {}),
    });
  }
  return { format: 'remind-memory', version: 2, exported_at: 1_700_000_100_000, app_version: 'bench', records };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const flag = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
  const lessons = Number(flag('--lessons', 11_500));
  const out = path.resolve(flag('--out', '/tmp/remind-large.json'));
  const text = JSON.stringify(largeExport(lessons));
  fs.writeFileSync(out, text);
  console.log(`${out}: ${lessons} lessons, ${(text.length / 1e6).toFixed(2)} MB`);
}
