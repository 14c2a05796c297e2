/** The CLI run in this process, its output captured. */
import { runCli } from '../../../electron/cli/main.js';

/** Run `waystation ARGS...` without colour; resolves with its exit code, stdout and stderr. */
export async function captureCli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, { out: (s) => void (out += s), err: (s) => void (err += s), color: false });
  return { code, out, err };
}
