/**
 * The input folder of the Markdown summariser runs (TypeScript and Python):
 * three small files, so a run has four steps and one publication.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

/** Write the three Markdown files into `dir`/input and return that folder. */
export async function markdownInput(dir: string): Promise<string> {
  const input = path.join(dir, 'input');
  await fs.mkdir(input, { recursive: true });
  await fs.writeFile(path.join(input, 'alpha.md'), '# Alpha\n\nAlpha is first. It leads the way.\n');
  await fs.writeFile(path.join(input, 'beta.md'), '# Beta\n\nBeta follows alpha. It checks the work.\n');
  await fs.writeFile(path.join(input, 'gamma.md'), '# Gamma\n\nGamma closes the set. It publishes.\n');
  return input;
}
