/**
 * Browser mode in one call: the host service on a directory, the runner, and
 * the loopback HTTP host in front of them. Used by `waystation serve`.
 *
 * The host listens while the directory opens, as the desktop app opens its
 * window while its host does: a browser loads the page (most of a second
 * here) meanwhile, and the page's API requests wait for the open
 * (http-host.ts, `ready`). Opening a database, or a directory whose list is
 * large, no longer comes before the page in the wait for the first rows.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { holdHostHeapGrowth } from './host-heap.js';
import { createHostRunner } from './host-runner.js';
import type { TrustGate } from '../runtime/directory-trust.js';
import type { DetectedLocation } from '../sources/detect-location.js';
import { HostService } from './host-service.js';
import type { DirectoryInfo } from '../../shared/api/contract.js';
import { startHttpHost, type HttpHost } from './http-host.js';

/**
 * `dist-renderer/` of this checkout or package: two folders above
 * electron/host/ when running from sources, three above
 * dist-electron/electron/host/ when compiled.
 */
export function defaultRendererDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '..', '..', 'dist-renderer'), path.resolve(here, '..', '..', '..', 'dist-renderer')];
  return candidates.find((dir) => existsSync(path.join(dir, 'index.html'))) ?? candidates[0];
}

export interface WebServerOptions {
  port?: number;
  /** Serve without a runner: every action answers `forbidden`. */
  readOnly?: boolean;
  rendererDir?: string;
  /** Environment for task processes (default: this process's; a demo directory slows the offline model, see demoRunEnv). */
  env?: NodeJS.ProcessEnv;
  /** Which directories are trusted (the user's trust store by default): an untrusted one is served read-only. */
  trust?: TrustGate;
  /** What `root` is, when the caller has found out already: the host then does not ask a database a second time. */
  detected?: DetectedLocation;
}

export interface WebServer {
  http: HttpHost;
  service: HostService;
  /** Whether the built renderer was found. */
  rendererBuilt: boolean;
  /**
   * The directory's opening, under way when startWebServer returns: settles once it is open, or rejects with why
   * it could not be (the host then answers as one with nothing open, and the caller closes it).
   */
  opened: Promise<DirectoryInfo>;
  /** Stop: the HTTP host, the watcher, and every task process (left resumable). */
  close(): Promise<void>;
}

/** Serve `root` in browser mode on 127.0.0.1. */
export async function startWebServer(root: string, options: WebServerOptions = {}): Promise<WebServer> {
  holdHostHeapGrowth();
  const rendererDir = options.rendererDir ?? defaultRendererDir();
  const service = new HostService({
    host: 'web',
    runner: options.readOnly ? null : createHostRunner({ env: options.env }),
    ...(options.trust ? { trust: options.trust } : {}),
  });
  const opened = service.open(root, { detected: options.detected });
  // Heard by the caller through `opened`; not an unhandled rejection while the host starts listening.
  opened.catch(() => {});
  let http: HttpHost;
  try {
    http = await startHttpHost({ service, port: options.port ?? 0, staticDir: rendererDir, ready: opened });
  } catch (err) {
    await opened.catch(() => {});
    await service.close();
    throw err;
  }
  return {
    http,
    service,
    rendererBuilt: existsSync(path.join(rendererDir, 'index.html')),
    opened,
    async close() {
      await http.close();
      await service.close();
    },
  };
}
