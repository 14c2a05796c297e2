/**
 * `waystation demo [DIR]`: generate the demo checkpoint directory, once.
 */
import type { Command } from 'commander';
import { generateDemoDirectory } from '../../host/demo-directory.js';
import type { CliContext } from '../cli-context.js';
import { directoryToMake } from '../directory-argument.js';
import { shellWord } from '../../../shared/checkpoint/fill-directory.js';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description('generate a demo checkpoint directory (both demo agents, a task in each state), unless DIR exists')
    .argument('[DIR]', 'where to generate it', 'demo-checkpoints')
    .action(async (dir: string) => {
      const result = await generateDemoDirectory(directoryToMake(dir, 'the demo directory'));
      if (!result.created) {
        ctx.io.out(`${dir} already exists; left untouched (delete it to generate the demo again)\n`);
        return;
      }
      ctx.io.out(`generated the demo checkpoint directory ${result.root}:\n`);
      for (const line of result.tasks) ctx.io.out(`  ${line}\n`);
      ctx.io.out(ctx.style.dim(`browse it: waystation serve ${shellWord(dir)}\n`));
    });
}
