/**
 * The built renderer, served by the loopback host: files of dist-renderer/
 * only (a path that escapes it, symlinks included, is refused), index.html
 * for client-side routes, and a plain explanation when it is not built.
 */
import { readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { PAGE_CSP } from '../../shared/api/page-csp.js';
import { COMMON_HEADERS } from './http-replies.js';
import { PathOutsideRootError, checkRelativePath, resolveInsideRoot } from '../store/path-confinement.js';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** Answer a request for a file of the renderer under `staticDir` (null: none is served). */
export function serveStatic(req: http.IncomingMessage, res: http.ServerResponse, rawPath: string, staticDir: string | null): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...COMMON_HEADERS, Allow: 'GET, HEAD' }).end();
    return;
  }
  // Synchronous file calls throughout: the renderer's few files are small, and through the thread pool each call
  // waited behind every read queued there, so a large directory's first listing held the page back by 300 ms.
  const indexFile = staticDir ? path.join(staticDir, 'index.html') : null;
  const hasIndex = indexFile ? (statOrNull(indexFile)?.isFile() ?? false) : false;
  if (!staticDir || !hasIndex) {
    const text = `The Waystation renderer is not built${staticDir ? ` (no index.html in ${staticDir})` : ''}.\nRun \`npm run build:renderer\` and restart \`waystation serve\`. The API under /api works without it.\n`;
    res.writeHead(503, { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(req.method === 'HEAD' ? undefined : text);
    return;
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    res.writeHead(400, COMMON_HEADERS).end();
    return;
  }
  let file: string;
  // Only the one leading slash is the URL's; `//etc/passwd` asks for an absolute path and is refused as such.
  const relative = decoded.slice(1);
  try {
    checkRelativePath(relative, staticDir);
    file = resolveInsideRoot(staticDir, relative);
  } catch (err) {
    if (err instanceof PathOutsideRootError) {
      res.writeHead(403, { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' }).end('outside the renderer folder\n');
      return;
    }
    throw err;
  }
  let stats = statOrNull(file);
  if (!stats || !stats.isFile()) {
    // Client-side routes fall back to the app; a missing asset is a real 404.
    if (path.extname(decoded) !== '') {
      res.writeHead(404, { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    file = indexFile!;
    stats = statSync(file);
  }
  const isHtml = path.extname(file) === '.html';
  res.writeHead(200, {
    ...COMMON_HEADERS,
    'Content-Type': CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
    'Content-Length': stats.size,
    'Cache-Control': isHtml ? 'no-store' : 'no-cache',
    ...(isHtml ? { 'Content-Security-Policy': PAGE_CSP, 'X-Frame-Options': 'DENY' } : {}),
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  res.end(readFileSync(file));
}

function statOrNull(file: string) {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}
