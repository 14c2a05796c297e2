/**
 * `waystation serve DIR [--port N]`: browser mode. Serves the built renderer
 * and the API on 127.0.0.1 behind a per-start token, and prints the URL to
 * open. Runs until interrupted; task processes it started are stopped then,
 * their tasks left resumable.
 */
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { startWebServer, type WebServer } from '../../host/web-server.js';
import { trustState } from '../../runtime/directory-trust.js';
import { requireKnownLocation, UsageError, shownLocation, type CliContext, SOURCE_ARGUMENT } from '../cli-context.js';
import { addTrustOption, requireTrust } from '../trust-check.js';

/** Ask the desktop to open the URL; silently does nothing where there is no desktop. */
function openInBrowser(url: string): void {
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args as string[], { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No opener: the URL is printed anyway.
  }
}

/**
 * Print what the host runs as it happens: processes started and how they
 * ended, retries, the agents' own output, and the host's notices (a watcher
 * that stopped, a recovery that gave up). A server console is where someone
 * running browser mode looks when a task does not move.
 */
function logActivity(ctx: CliContext, server: WebServer): () => void {
  const s = ctx.style;
  // From the host's first event (0): the start-up recovery may have begun before the server listened.
  return server.service.subscribe((e) => {
    if (e.type !== 'runner') return;
    const time = s.dim(new Date().toTimeString().slice(0, 8));
    const who = e.taskId ? `${s.bold(e.taskId)} ` : '';
    const what = e.state === 'output' ? e.detail : `${e.state}: ${e.detail}`;
    ctx.io.out(`${time} ${who}${what}\n`);
  }, 0);
}

/** Resolves on the first SIGINT, SIGTERM or SIGHUP; never where the command is given no signals (run in-process). */
function untilSignal(ctx: CliContext): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const off = ctx.io.onSignal?.((signal) => {
      off?.();
      resolve(signal);
    });
  });
}

export function register(program: Command, ctx: CliContext): void {
  const command = program
    .command('serve')
    .description('serve the app and its API on 127.0.0.1 for a browser (prints the URL with its token)')
    .argument('<DIR>', SOURCE_ARGUMENT)
    .option('--port <N>', 'the port to listen on (default: a free one)')
    .option('--read-only', 'browse only: starting, resuming, approving, rejecting and editing are refused')
    .option('--open-url', 'also open the URL in the default browser')
    .option('--quiet', 'print the URL only, not the processes the host starts and their output')
    .addHelpText(
      'after',
      '\nAn untrusted DIR is served read-only: nothing in it is imported, started or resumed until it is trusted\n' +
        '(--trust, the question asked on a terminal, or Trust this folder… in the page). For a database, the folder\n' +
        'trusted is the one its agents and artifacts are read from (the working directory, or WAYSTATION_ARTIFACT_ROOT).\n' +
        'A LangGraph checkpointer is always served read-only: Waystation browses its threads and never runs a graph.',
    );
  addTrustOption(command).action(
    async (dir: string, opts: { port?: string; readOnly?: boolean; openUrl?: boolean; quiet?: boolean; trust?: boolean }) => {
      const found = await requireKnownLocation(ctx, dir);
      const browseOnly = found.kind === 'langgraph-sqlite' || found.kind === 'langgraph-postgres';
      const root = found.kind === 'directory' ? found.dir : dir;
      const readOnly = opts.readOnly || browseOnly;
      if (!readOnly) {
        const codeRoot = ctx.openStore(root).artifactRoot;
        if (opts.trust || (ctx.io.ask && !(await trustState(codeRoot)).trusted)) {
          // Asked before the host opens the directory: a yes means its interrupted tasks resume at once.
          await requireTrust(ctx, codeRoot, { trust: opts.trust, command: 'serve' }).catch((err: unknown) => {
            ctx.io.err(`${err instanceof Error ? err.message : String(err)}; serving it read-only\n`);
          });
        }
      }
      let port = 0;
      if (opts.port !== undefined) {
        if (!/^\d+$/.test(opts.port) || Number(opts.port) > 65535)
          throw new UsageError(`--port ${opts.port}: a port is a number from 0 to 65535`);
        port = Number(opts.port);
      }
      // Waystation never runs a LangGraph graph: a checkpointer is served to be browsed. The URL is printed as soon
      // as the host listens: a browser loads the page while the directory opens (web-server.ts).
      const server = await startWebServer(root, { port, readOnly, detected: found });
      const stopLog = opts.quiet ? () => {} : logActivity(ctx, server);
      const s = ctx.style;
      ctx.io.out(`Waystation is serving ${shownLocation(root)}\n`);
      if (!server.rendererBuilt)
        ctx.io.out(s.yellow('The renderer is not built: run `npm run build:renderer` first; the API works without it.\n'));
      ctx.io.out(`Open ${s.bold(server.http.url)}\n`);
      ctx.io.out(s.dim('Only this URL (its token) opens the app; it changes at every start. Press Ctrl+C to stop.\n'));
      if (opts.openUrl) openInBrowser(server.http.url);
      try {
        await server.opened;
      } catch (err) {
        // Nothing could be opened (a database that cannot be reached, say): the host stops, and the command fails saying why.
        await server.close();
        stopLog();
        throw err;
      }
      const trust = readOnly ? null : await server.service.getDirectoryTrust();
      if (trust && !trust.trusted) ctx.io.out(s.yellow(`${trust.message}\n`));
      const signal = await untilSignal(ctx);
      ctx.io.out(`\n${signal}: stopping; running tasks are left resumable\n`);
      await server.close();
      stopLog();
    },
  );
}
