/**
 * Every reader of a checkpoint directory run once over `root`, in a process of
 * its own: the CLI's ls, show, history and verify of each task, and the host's
 * listTasks and getTask. Prints one JSON line a reader.
 *
 * A reader that blocks in a synchronous call (opening a named pipe) cannot be
 * timed out from inside its own process; the test that spawns this can.
 */
import { runCli } from '../../../electron/cli/main.js';
import { HostService } from '../../../electron/host/host-service.js';

const [root, ...taskIds] = process.argv.slice(2);

async function cli(args: string[]): Promise<void> {
  let out = '';
  let err = '';
  const code = await runCli(args, { out: (s) => void (out += s), err: (s) => void (err += s), color: false });
  process.stdout.write(`${JSON.stringify({ reader: [args[0], ...args.slice(2, -1)].join(' '), code, out, err })}\n`);
}

await cli(['ls', root, '--json']);
for (const id of taskIds) for (const command of ['show', 'history', 'verify']) await cli([command, root, id, '--json']);

const service = new HostService({ host: 'web', runner: null });
await service.open(root);
const list = await service.listTasks();
process.stdout.write(`${JSON.stringify({ reader: 'listTasks', list })}\n`);
for (const id of taskIds) {
  const detail = await service.getTask({ taskId: id }).catch((e: unknown) => ({ error: String(e) }));
  process.stdout.write(`${JSON.stringify({ reader: `getTask ${id}`, detail })}\n`);
}
await service.close();
