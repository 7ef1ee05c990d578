// Tiny static file server for the built page (dist/): serves .wasm as application/wasm and gzips text and wasm, so e2e tests and scripts/run need nothing but node.
//
// Run standalone: node tests/e2e/static-server.mjs [--dir dist] [--port 8080] [--host 127.0.0.1]
import http from 'node:http';
import zlib from 'node:zlib';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
};

// Text and wasm go out gzipped, as any production static host sends them (the worker's
// wasm shrinks from 16 MB to 4 MB). The model is not: int8 weights barely compress, and
// its exact Content-Length drives the page's download progress bar.
const COMPRESSED = new Set(['.html', '.js', '.mjs', '.css', '.wasm', '.json', '.svg', '.txt']);

/** Gzipped bytes of `file`, computed once per version of the file. */
const gzipCache = new Map();
function gzipped(file, data) {
  const mtime = fs.statSync(file).mtimeMs;
  const hit = gzipCache.get(file);
  if (hit && hit.mtime === mtime) return hit.bytes;
  const bytes = zlib.gzipSync(data, { level: 6 });
  gzipCache.set(file, { mtime, bytes });
  return bytes;
}

// How long a browser may keep each file, as a production static host would say it.
// Trunk names the page's wasm, JavaScript and CSS by a hash of their contents, so a
// copy of one never goes stale; every other file is revalidated on each load (its
// ETag), so a rebuilt page is seen at once. Keeping the page's wasm is what lets the
// browser reuse its compiled code on the next visit instead of compiling 3 MB again.
// The model is not kept: the embedder worker keeps it in the Cache API itself, and a
// second copy would cost 23 MB of the visitor's disk.
const KEPT_FOR_GOOD = 'public, max-age=31536000, immutable';
const REVALIDATED = 'no-cache';
const NOT_KEPT = 'no-store';
const HASHED_NAME = /-[0-9a-f]{16}(_bg)?\.(js|wasm|css)$/;

function cachingOf(rel, file) {
  if (rel.startsWith('/minilm/')) return NOT_KEPT;
  return HASHED_NAME.test(path.basename(file)) ? KEPT_FOR_GOOD : REVALIDATED;
}

/** Serves `dir` on host:port (0 = free port). Resolves to { server, port, url, close() }. */
export function startStaticServer({ dir, host = '127.0.0.1', port = 0 } = {}) {
  const root = path.resolve(dir);
  if (!fs.existsSync(path.join(root, 'index.html'))) {
    return Promise.reject(new Error(`${root}/index.html does not exist: build the page first (trunk build --release)`));
  }
  const server = http.createServer((req, res) => {
    let rel;
    try {
      rel = decodeURIComponent(new URL(req.url || '/', 'http://x').pathname);
    } catch {
      res.writeHead(400).end('bad path');
      return;
    }
    let file = path.join(root, path.normalize(rel));
    if (!file.startsWith(root)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    if (!fs.existsSync(file)) {
      // Single-page app: unknown paths without an extension get the page itself.
      if (path.extname(rel) === '') file = path.join(root, 'index.html');
      else {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
        return;
      }
    }
    const ext = path.extname(file).toLowerCase();
    const stat = fs.statSync(file);
    const gzip = COMPRESSED.has(ext) && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
    const caching = cachingOf(rel, file);
    const headers = {
      'Content-Type': MIME[ext] ?? 'application/octet-stream',
      'Cache-Control': caching,
      Vary: 'Accept-Encoding',
    };
    if (caching !== NOT_KEPT) {
      // The version of this file in this encoding: a browser that holds it is told
      // so (304) and reuses its copy, and with it the engine's compiled wasm.
      headers.ETag = `"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}${gzip ? '-gz' : ''}"`;
      headers['Last-Modified'] = stat.mtime.toUTCString();
      if (req.headers['if-none-match'] === headers.ETag) {
        for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
        res.writeHead(304).end();
        return;
      }
    }
    let data = fs.readFileSync(file);
    if (gzip) {
      data = gzipped(file, data);
      headers['Content-Encoding'] = 'gzip';
    }
    headers['Content-Length'] = data.length;
    // setHeader, not writeHead's argument, so listeners (the benchmark) can read them.
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.writeHead(200);
    res.end(req.method === 'HEAD' ? undefined : data);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const actual = server.address().port;
      resolve({
        server,
        port: actual,
        url: `http://${host}:${actual}/`,
        close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
      });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const opt = (name, def) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : def;
  };
  const s = await startStaticServer({
    dir: opt('--dir', 'dist'),
    host: opt('--host', '127.0.0.1'),
    port: Number(opt('--port', '8080')),
  });
  console.log(`serving ${opt('--dir', 'dist')} on ${s.url}`);
  const stop = () => s.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
