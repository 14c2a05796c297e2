import { describe, expect, it } from 'vitest';
import {
  createStyle,
  displayWidth,
  formatDuration,
  inlineJson,
  shouldColor,
  signed,
  stripAnsi,
  table,
} from '../../../electron/cli/output.js';

describe('shouldColor', () => {
  it('colours a terminal and nothing else', () => {
    expect(shouldColor({ isTTY: true }, {})).toBe(true);
    expect(shouldColor({ isTTY: false }, {})).toBe(false);
    expect(shouldColor({}, {})).toBe(false);
    expect(shouldColor({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
  });

  it('lets NO_COLOR switch colour off and FORCE_COLOR switch it on', () => {
    expect(shouldColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(shouldColor({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(shouldColor({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(shouldColor({ isTTY: false }, { FORCE_COLOR: '0' })).toBe(false);
    expect(shouldColor({ isTTY: true }, { NO_COLOR: '1', FORCE_COLOR: '1' })).toBe(false);
  });
});

describe('createStyle', () => {
  it('adds escape codes only when enabled', () => {
    expect(createStyle(false).red('x')).toBe('x');
    expect(createStyle(true).red('x')).not.toBe('x');
    expect(stripAnsi(createStyle(true).bold(createStyle(true).red('x')))).toBe('x');
  });
});

describe('table', () => {
  it('aligns columns by display width, ignoring colour codes and counting wide characters twice', () => {
    const s = createStyle(true);
    expect(displayWidth('分析需求')).toBe(8);
    expect(displayWidth(s.green('done'))).toBe(4);
    const text = stripAnsi(
      table(
        [
          [s.green('done'), 'a'],
          ['分析', 'b'],
        ],
        ['STATUS', 'X'],
      ),
    );
    expect(text.split('\n')).toEqual(['STATUS  X', 'done    a', '分析    b', '']);
  });
});

describe('small renderings', () => {
  it('formats durations, signs and long JSON', () => {
    expect(formatDuration(250)).toBe('250 ms');
    expect(formatDuration(1500)).toBe('1.5 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
    expect(signed(3)).toBe('+3');
    expect(signed(-3)).toBe('-3');
    expect(inlineJson('x'.repeat(100), 10)).toHaveLength(10);
  });
});
