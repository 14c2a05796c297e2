import { describe, expect, it } from 'vitest';
import {
  createStyle,
  displayWidth,
  formatDuration,
  inlineJson,
  previewValue,
  shouldColor,
  signed,
  stripAnsi,
  table,
  truncateToWidth,
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

describe('displayWidth', () => {
  it('counts East Asian wide characters twice, combining marks and joiners not at all, emoji twice', () => {
    expect(displayWidth('分析需求')).toBe(8);
    expect(displayWidth('编写代码 v2')).toBe(11);
    expect(displayWidth('ｆｕｌｌ')).toBe(8);
    // e followed by a combining acute accent: one column, as é is.
    expect(displayWidth('cafe\u0301')).toBe(4);
    expect(displayWidth('🚀')).toBe(2);
    // A family joined by zero-width joiners, and a flag: one glyph of two columns each.
    expect(displayWidth('👨\u200d👩\u200d👧')).toBe(2);
    expect(displayWidth('🇨🇳')).toBe(2);
    expect(displayWidth(createStyle(true).red('分析'))).toBe(4);
  });

  it('aligns a table whose cells mix Chinese, emoji and combining marks', () => {
    const rows = [
      ['分析需求', 'done'],
      ['deploy 🚀', 'done'],
      ['cafe\u0301', 'done'],
      ['👨\u200d👩\u200d👧 team', 'done'],
    ];
    const lines = table(rows, ['NAME', 'STATUS']).trimEnd().split('\n');
    const statusAt = lines.map((l) => displayWidth(l.slice(0, l.lastIndexOf(l.endsWith('STATUS') ? 'STATUS' : 'done'))));
    expect(new Set(statusAt)).toEqual(new Set([displayWidth('deploy 🚀') + 2]));
  });

  it('lays out 200,000 rows, the versions of a long task, with the widest cell setting each width', () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => [String(i + 1), i === 123_456 ? 'the widest detail' : 'runtime', '1 KiB']);
    const lines = table(rows, ['VERSION', 'DETAIL', 'SIZE']).trimEnd().split('\n');
    expect(lines).toHaveLength(200_001);
    expect(lines[0]).toBe('VERSION  DETAIL             SIZE');
    expect(lines[200_000]).toBe('200000   runtime            1 KiB');
  });
});

describe('truncateToWidth and previewValue', () => {
  it('cuts to the width with an ellipsis, never inside a wide character or a cluster', () => {
    expect(truncateToWidth('short', 10)).toBe('short');
    expect(truncateToWidth('abcdefghij', 5)).toBe('abcd…');
    expect(truncateToWidth('分析需求分析需求', 6)).toBe('分析…');
    expect(displayWidth(truncateToWidth('分析需求分析需求', 6))).toBe(5);
    expect(truncateToWidth('cafe\u0301 au lait', 5)).toBe('cafe\u0301…');
    expect(truncateToWidth('a👨\u200d👩\u200d👧b', 3)).toBe('a…');
  });

  it('previews text as text on one line, and anything else as compact JSON', () => {
    expect(previewValue('line one\n\nline   two', 40)).toBe('line one line two');
    expect(previewValue({ a: [1, 2], b: 'x' }, 40)).toBe('{"a":[1,2],"b":"x"}');
    expect(previewValue(null, 40)).toBe('null');
    expect(previewValue('', 40)).toBe('""');
    expect(previewValue({ text: 'x'.repeat(100) }, 20)).toBe('{"text":"xxxxxxxxxx…');
    expect(inlineJson('分析需求分析需求', 9)).toBe('"分析需…');
  });
});
