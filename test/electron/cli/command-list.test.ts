import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import { commandList, commandsToLoad } from '../../../electron/cli/command-list.js';
import { createContext } from '../../../electron/cli/cli-context.js';

const names = (argv: string[]) => commandsToLoad(argv).map((c) => c.name);
const all = commandList.map((c) => c.name);

describe('the command list', () => {
  it('names each command as its module registers it', async () => {
    const ctx = createContext({ out: () => {}, err: () => {}, color: false }, () => {
      throw new Error('not opened while registering');
    });
    for (const entry of commandList) {
      const program = new Command();
      (await entry.load()).register(program, ctx);
      expect(program.commands.map((c) => c.name())).toEqual([entry.name]);
    }
  });

  it('loads the named command alone, none for --version, and all of them for help or an unknown name', () => {
    expect(names(['ls', '/tmp/x', '--json'])).toEqual(['ls']);
    expect(names(['result', 'DIR', 'TASK', 'STEP', '--version', '2'])).toEqual(['result']);
    expect(names(['--version'])).toEqual([]);
    expect(names(['-V'])).toEqual([]);
    expect(names([])).toEqual(all);
    expect(names(['--help'])).toEqual(all);
    expect(names(['--help', '--version'])).toEqual(all);
    expect(names(['help', 'ls'])).toEqual(all);
    expect(names(['shwo', 'DIR'])).toEqual(all);
  });
});
