/**
 * Hostile requests to the loopback host and the IPC layer, against the real
 * host service on a real directory: no token or a wrong one, foreign Origins
 * and Hosts, path traversal in every parameter, oversized bodies, slow
 * clients. None may get data, none may write anything, and the host keeps
 * serving the legitimate client throughout.
 */
import { promises as fs } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { HostService } from '../../../electron/host/host-service.js';
import { recordingRunner, type RecordedAction } from '../../support/recording-runner.js';
import { startHttpHost, type HttpHost } from '../../../electron/host/http-host.js';
import {
  registerIpcHandlers,
  type FrameLike,
  type InvokeEventLike,
  type IpcMainLike,
  type WebContentsLike,
} from '../../../electron/main/ipc-handlers.js';
import { openStore } from '../../../electron/store/directory-store.js';
import { ipcChannel, type ApiMethod, type IpcResult } from '../../../shared/api/contract.js';
import { apiMethods } from '../../../shared/api/api-methods.js';
import { makeCheckpoint } from '../../electron/store/store-test-helpers.js';
import { seededRandom } from '../../../bench/lib/seeded-random.js';
import { messageOf, pick, Tally, withTimeout, type ScenarioOptions, type ScenarioReport } from '../lib/scenario.js';
import { treeDigest as hashTree } from '../../support/hash-tree.js';

const INSIDE = 'INSIDE-SECRET-ONLY-FOR-THE-TOKEN';
const OUTSIDE = 'OUTSIDE-SECRET-NEVER-SERVED';

const CHECKS = [
  'hostile request answered with data',
  'secret outside the root served',
  'write reached the runner or the disk',
  'host stopped serving',
  'host crashed',
] as const;

interface Reply {
  status: number;
  body: string;
}

/** How long an event stream that was opened is read before the client hangs up: it never ends by itself. */
const STREAM_READ_MS = 150;

function request(
  port: number,
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<Reply> {
  return new Promise((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        // An opened event stream: what it sends at once (a replay) is what it gave away.
        if (String(res.headers['content-type']).startsWith('text/event-stream')) {
          setTimeout(() => {
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
            req.destroy();
          }, STREAM_READ_MS);
        }
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    // A host that cuts an oversized upload short answers nothing more: that is a refusal too.
    req.on('error', () => resolve({ status: 0, body: '' }));
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

const TRAVERSALS = [
  '..',
  '../..',
  '../outside',
  '..\\..\\outside',
  '/etc/passwd',
  'escape',
  'escape/../..',
  'victim/../../outside',
  'a\u0000b',
  '.',
  '.hidden',
  'x.tmp',
  'outside.json',
  '%2e%2e',
  '....//....//',
];

/** Inputs for every method, with a given task id and string parameter. */
function inputsFor(method: ApiMethod, id: string, str: string): unknown {
  switch (method) {
    case 'openDirectory':
    case 'trustDirectory':
      return { path: str };
    case 'getStepResult':
      return { taskId: id, stepId: str };
    case 'diffVersions':
      return { taskId: id, a: 1, b: 1 };
    case 'startTask':
      return { agent: 'checkpoint-demo', taskId: id, options: { input: str } };
    case 'rejectResume':
      return { taskId: id, reason: str };
    case 'editStepResult':
      return { taskId: id, stepId: str, value: str };
    case 'approveResume':
      return { taskId: id, by: str };
    default:
      return { taskId: id, version: 1 };
  }
}

/** Every kind of hostile request, `runs` of them in all, chosen at random. */
export async function hostileRequests(opts: ScenarioOptions): Promise<ScenarioReport> {
  const tally = new Tally('hostile requests (HTTP host, IPC)', CHECKS, opts.seed);
  const random = seededRandom(opts.seed);
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'ws-torture-hostile-'));
  const root = path.join(base, 'root');
  const outsideDir = path.join(base, 'outside');
  const staticDir = path.join(base, 'static');
  await fs.mkdir(root);
  await fs.mkdir(staticDir);
  await fs.writeFile(path.join(staticDir, 'index.html'), '<!doctype html><title>app</title>');
  await fs.writeFile(path.join(base, 'outside.txt'), OUTSIDE);
  await fs.symlink(path.join(base, 'outside.txt'), path.join(staticDir, 'leak.txt'));
  await openStore(outsideDir).create(makeCheckpoint('escape', 2, { goal: OUTSIDE }));
  await openStore(root).create(makeCheckpoint('victim', 2, { goal: INSIDE }));
  await fs.symlink(path.join(outsideDir, 'escape'), path.join(root, 'escape'));
  await fs.writeFile(path.join(root, 'outside.json'), JSON.stringify({ note: 'a root file, not a task' }));

  // A runner that only records: any call from a hostile request is a write that got through.
  const runnerCalls: RecordedAction[] = [];
  const service = new HostService({ host: 'web', runner: recordingRunner(runnerCalls), recoverOnOpen: false });
  let host: HttpHost | null = null;
  try {
    await service.open(root);
    host = await startHttpHost({ service, staticDir });
    const h = host;
    const before = await hashTree(base);
    const good = { Authorization: `Bearer ${h.token}` };
    const wrongTokens = [
      '',
      'Bearer',
      `Bearer ${'0'.repeat(64)}`,
      `Bearer ${h.token.slice(0, -1)}`,
      `Bearer ${h.token.toUpperCase()}`,
      `Basic ${h.token}`,
      `Bearer ${h.token}x`,
    ];
    const origins = [
      'http://evil.example',
      'null',
      `http://127.0.0.1:${h.port}.evil.example`,
      `https://127.0.0.1:${h.port}`,
      `http://127.0.0.1:${h.port + 1}`,
      'file://',
    ];
    const hosts = ['evil.example', `127.0.0.1:${h.port + 1}`, `localhost.evil.example:${h.port}`, `127.0.0.1.nip.io:${h.port}`];
    const routes: { method: string; path: string; body?: string }[] = [
      { method: 'GET', path: '/api/tasks' },
      { method: 'GET', path: '/api/tasks/victim' },
      { method: 'GET', path: '/api/tasks/victim/history' },
      { method: 'GET', path: '/api/directory' },
      { method: 'GET', path: '/api/agents' },
      // The event stream replays every event since lastEventId=0: task ids, versions, step results.
      { method: 'GET', path: '/api/events?lastEventId=0' },
      ...apiMethods.map((m) => ({ method: 'POST', path: `/api/rpc/${m}`, body: JSON.stringify(inputsFor(m, 'victim', 'x')) })),
    ];

    /** Check one answer to a hostile request: refused, and nothing of the secrets in it. */
    const refused = (what: string, r: Reply) => {
      tally.runs++;
      tally.faults++;
      if (r.body.includes(OUTSIDE)) tally.violation('secret outside the root served', `${what}: ${r.status}`);
      if ((r.status >= 200 && r.status < 300) || r.body.includes(INSIDE))
        tally.violation('hostile request answered with data', `${what}: ${r.status} ${r.body.slice(0, 200)}`);
    };
    const json = { 'Content-Type': 'application/json' };

    const kinds = [
      'token',
      'origin',
      'host',
      'traversal-path',
      'traversal-rpc',
      'traversal-query',
      'static',
      'oversized',
      'slow',
      'ipc-foreign',
      'traversal-ipc',
    ] as const;
    const ipc = ipcHarness(service);
    let rpcCombos = 0;
    for (let i = 0; i < opts.runs; i++) {
      const kind = kinds[i % kinds.length];
      const route = routes[pick(random, routes.length)];
      const where = `request ${i} (${kind}, seed ${opts.seed})`;
      tally.bump(`requests: ${kind}`);
      try {
        if (kind === 'token') {
          const auth = wrongTokens[pick(random, wrongTokens.length)];
          refused(
            `${where} ${route.method} ${route.path} with ${JSON.stringify(auth.slice(0, 12))}`,
            await request(h.port, { ...route, headers: { ...json, ...(auth ? { Authorization: auth } : {}) } }),
          );
        } else if (kind === 'origin') {
          refused(
            `${where} Origin ${origins[i % origins.length]}`,
            await request(h.port, { ...route, headers: { ...json, ...good, Origin: origins[pick(random, origins.length)] } }),
          );
        } else if (kind === 'host') {
          refused(
            `${where} Host ${hosts[i % hosts.length]}`,
            await request(h.port, { ...route, headers: { ...json, ...good, Host: hosts[pick(random, hosts.length)] } }),
          );
        } else if (kind === 'traversal-path') {
          const id = TRAVERSALS[pick(random, TRAVERSALS.length)];
          const encoded = random() < 0.5 ? encodeURIComponent(id) : id.replaceAll('\u0000', '%00');
          const suffix = random() < 0.5 ? '' : '/history';
          const r = await request(h.port, { path: `/api/tasks/${encoded}${suffix}?token=${h.token}` });
          // The symlinked task is listed as a problem (outside-root), never with what it points to.
          if (id === 'escape' && r.status === 200 && !r.body.includes('outside-root') && !suffix)
            tally.violation('secret outside the root served', `${where}: the link out was followed`);
          tally.runs++;
          tally.faults++;
          if (r.body.includes(OUTSIDE)) tally.violation('secret outside the root served', `${where} ${encoded}${suffix}`);
        } else if (kind === 'traversal-query') {
          // A path out in every query parameter a route reads (version, lastEventId, token), and in ones it does not.
          const bad = encodeURIComponent(random() < 0.5 ? TRAVERSALS[pick(random, TRAVERSALS.length)] : path.join(base, 'outside.txt'));
          const queries = [
            { path: `/api/tasks/victim?version=${bad}`, numeric: 'version' },
            { path: `/api/tasks/victim/history?version=${bad}`, numeric: null },
            { path: `/api/tasks/${encodeURIComponent(TRAVERSALS[pick(random, TRAVERSALS.length)])}?version=${bad}`, numeric: 'version' },
            { path: `/api/events?lastEventId=${bad}`, numeric: 'lastEventId' },
            { path: `/api/events?token=${bad}`, numeric: null, tokenOnly: true },
            { path: `/api/tasks?token=${bad}`, numeric: null, tokenOnly: true },
            { path: `/api/tasks?root=${bad}&path=${bad}&taskId=${bad}`, numeric: null },
            { path: `/api/directory?path=${bad}`, numeric: null },
          ];
          const q = queries[pick(random, queries.length)];
          const r = await request(h.port, { path: q.path, headers: q.tokenOnly ? {} : good });
          tally.runs++;
          tally.faults++;
          if (r.body.includes(OUTSIDE)) tally.violation('secret outside the root served', `${where} ${q.path}`);
          // A parameter that must be a number and holds a path is refused, not read as something else.
          const value = q.numeric ? new URLSearchParams(q.path.slice(q.path.indexOf('?') + 1)).get(q.numeric) : null;
          if (value !== null && !/^\d+$/.test(value) && r.status >= 200 && r.status < 300)
            tally.violation('hostile request answered with data', `${where} ${q.path}: ${r.status}`);
          if (q.tokenOnly && (r.status < 400 || r.body.includes(INSIDE)))
            tally.violation('hostile request answered with data', `${where} ${q.path}: ${r.status}`);
          if (q.path.includes('root=') && !r.body.includes('victim'))
            tally.violation('host stopped serving', `${where} ${q.path}: stray parameters changed the answer (${r.status})`);
        } else if (kind === 'traversal-rpc') {
          // Every method with every traversal in turn, so even a short run tries each pair once in a while.
          const combo = rpcCombos++;
          const method = apiMethods[combo % apiMethods.length];
          const id = TRAVERSALS[Math.floor(combo / apiMethods.length) % TRAVERSALS.length];
          const str = random() < 0.5 ? TRAVERSALS[pick(random, TRAVERSALS.length)] : path.join(base, 'outside.txt');
          const r = await request(h.port, {
            method: 'POST',
            path: `/api/rpc/${method}`,
            headers: { ...json, ...good },
            body: JSON.stringify(inputsFor(method, id, str)),
          });
          tally.runs++;
          tally.faults++;
          if (r.body.includes(OUTSIDE)) tally.violation('secret outside the root served', `${where} ${method} ${JSON.stringify(id)}`);
          if (method === 'openDirectory' && r.status === 200 && !r.body.includes(root))
            tally.violation('hostile request answered with data', `${where}: openDirectory moved the host to ${str}`);
        } else if (kind === 'static') {
          const paths = [
            '/../../outside.txt',
            '/%2e%2e/%2e%2e/outside.txt',
            '/leak.txt',
            `/${path.join(base, 'outside.txt')}`,
            '/..%5c..%5coutside.txt',
            '/%2e%2e%2foutside.txt',
            '/static/../../outside.txt',
          ];
          const r = await request(h.port, { path: paths[pick(random, paths.length)] });
          tally.runs++;
          tally.faults++;
          if (r.body.includes(OUTSIDE)) tally.violation('secret outside the root served', `${where}: ${r.status}`);
        } else if (kind === 'oversized') {
          const big = Buffer.alloc(2 * 1024 * 1024 + pick(random, 1024), 0x20);
          const headers: Record<string, string> = { ...json, ...good };
          if (random() < 0.5) headers['Transfer-Encoding'] = 'chunked';
          const r = await request(h.port, {
            method: 'POST',
            path: `/api/rpc/${route.path.startsWith('/api/rpc/') ? route.path.slice(9) : 'resumeTask'}`,
            headers,
            body: Buffer.concat([Buffer.from('{"taskId":"victim","pad":"'), big, Buffer.from('"}')]),
          });
          tally.runs++;
          tally.faults++;
          if (r.status !== 413 && r.status !== 0)
            tally.violation('hostile request answered with data', `${where}: an oversized body got ${r.status}`);
        } else if (kind === 'slow') {
          await slowClients(h, random, tally, where);
        } else {
          await ipc.hostile(kind === 'ipc-foreign', random, tally, where);
        }
      } catch (err) {
        tally.violation('host crashed', `${where}: ${messageOf(err)}`);
      }
      // Only a legitimate client may act, and never on a task that names a path or leads out of the root.
      for (const call of runnerCalls.splice(0)) {
        const pathLike = /[/\\\0]|^\.\.?$/.test(call.taskId) || call.taskId === 'escape';
        if (!kind.startsWith('traversal') || pathLike)
          tally.violation(
            'write reached the runner or the disk',
            `${where}: the runner was asked to ${call.what} ${JSON.stringify(call.taskId)}`,
          );
      }
      // After every hostile request, the legitimate client is still served.
      if (i % 25 === 24 || kind === 'slow' || kind === 'oversized') {
        const ok = await withTimeout(request(h.port, { path: '/api/tasks', headers: good }), 10_000, 'a legitimate request').catch(() => ({
          status: 0,
          body: '',
        }));
        if (ok.status !== 200 || !ok.body.includes('victim'))
          tally.violation('host stopped serving', `${where}: the legitimate client got ${ok.status}`);
      }
      if ((i + 1) % 500 === 0) opts.log(`hostile requests: ${i + 1}/${opts.runs}, ${tally.total} violations`);
    }
    ipc.dispose();
    if ((await hashTree(base)) !== before) tally.violation('write reached the runner or the disk', 'the files under the directory changed');
  } finally {
    await host?.close();
    await service.close();
    await fs.rm(base, { recursive: true, force: true });
  }
  return tally.report();
}

/**
 * Clients that send their headers or body a byte at a time and then stop or
 * vanish, while the legitimate client is served beside them.
 */
async function slowClients(h: HttpHost, random: () => number, tally: Tally, where: string): Promise<void> {
  const sockets: net.Socket[] = [];
  const received: string[] = [];
  const withBody = random() < 0.5;
  for (let k = 0; k < 4; k++) {
    const s = net.connect(h.port, '127.0.0.1');
    s.on('data', (d: Buffer) => received.push(d.toString()));
    s.on('error', () => {});
    sockets.push(s);
  }
  const head = withBody
    ? `POST /api/rpc/resumeTask HTTP/1.1\r\nHost: 127.0.0.1:${h.port}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"taskId":"vic`
    : `GET /api/tasks/victim HTTP/1.1\r\nHost: 127.0.0.1:${h.port}\r\nAuthorization: Bearer ${h.token.slice(0, 20)}`;
  for (let i = 0; i < head.length; i += 16) {
    for (const s of sockets) s.write(head.slice(i, i + 16));
    await new Promise((r) => setTimeout(r, 2));
  }
  const ok = await withTimeout(
    request(h.port, { path: '/api/tasks', headers: { Authorization: `Bearer ${h.token}` } }),
    10_000,
    'a request beside slow clients',
  ).catch(() => ({ status: 0, body: '' }));
  if (ok.status !== 200) tally.violation('host stopped serving', `${where}: beside slow clients the legitimate client got ${ok.status}`);
  for (const s of sockets) s.destroy();
  tally.runs++;
  tally.faults += sockets.length;
  const got = received.join('');
  if (got.includes(INSIDE) || got.includes(OUTSIDE) || /HTTP\/1\.1 2\d\d/.test(got))
    tally.violation('hostile request answered with data', `${where}: a slow client got ${got.slice(0, 200)}`);
}

/** The IPC handlers over the real service, invoked the way Electron would, from senders that are not the app. */
function ipcHarness(service: HostService) {
  const handlers = new Map<string, (event: InvokeEventLike, ...args: unknown[]) => unknown>();
  const ipcMain: IpcMainLike = { handle: (c, l) => void handlers.set(c, l), removeHandler: (c) => void handlers.delete(c) };
  const contents = (id: number): WebContentsLike => ({
    id,
    send: () => {},
    isDestroyed: () => false,
    once: () => undefined,
    on: () => undefined,
  });
  const own = contents(1);
  const dispose = registerIpcHandlers(ipcMain, service, { isOwnWebContents: (s) => s.id === own.id });
  const appFrame: FrameLike = { url: 'waystation://app/index.html', parent: null };
  let ipcCombos = 0;
  const senders: { what: string; event: InvokeEventLike }[] = [
    { what: 'a sub-frame', event: { sender: own, senderFrame: { url: 'waystation://app/index.html', parent: appFrame } } },
    { what: 'a foreign origin', event: { sender: own, senderFrame: { url: 'https://evil.example/', parent: null } } },
    { what: 'a file: page', event: { sender: own, senderFrame: { url: 'file:///tmp/x.html', parent: null } } },
    { what: 'a gone frame', event: { sender: own, senderFrame: null } },
    { what: 'another window', event: { sender: contents(2), senderFrame: appFrame } },
  ];
  return {
    dispose,
    async hostile(foreign: boolean, random: () => number, tally: Tally, where: string) {
      const method = apiMethods[pick(random, apiMethods.length)];
      tally.runs++;
      tally.faults++;
      if (foreign) {
        const s = senders[pick(random, senders.length)];
        const r = (await handlers.get(ipcChannel(method))!(s.event, inputsFor(method, 'victim', 'x'))) as IpcResult;
        if (r.ok || r.error.code !== 'forbidden')
          tally.violation('hostile request answered with data', `${where}: IPC ${method} from ${s.what} was not refused`);
        return;
      }
      // The app's own frame, but every parameter a path out: each method with each traversal in turn.
      const combo = ipcCombos++;
      const ownMethod = apiMethods[combo % apiMethods.length];
      const id = TRAVERSALS[Math.floor(combo / apiMethods.length) % TRAVERSALS.length];
      const r = (await handlers.get(ipcChannel(ownMethod))!(
        { sender: own, senderFrame: appFrame },
        inputsFor(ownMethod, id, TRAVERSALS[pick(random, TRAVERSALS.length)]),
      )) as IpcResult;
      if (JSON.stringify(r).includes(OUTSIDE))
        tally.violation('secret outside the root served', `${where}: IPC ${ownMethod} ${JSON.stringify(id)}`);
    },
  };
}
