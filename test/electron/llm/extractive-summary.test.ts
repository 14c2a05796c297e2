import { describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatSummary, SEGMENT_PIECE, segmentPieces, summarizeMarkdown, summaryLength } from '../../../electron/llm/extractive-summary.js';
import { offlineReply } from '../../../electron/llm/offline-provider.js';
import { documentBlock } from '../../../electron/llm/document-block.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

const GUIDE = `---
title: ignored front matter
---
# Checkpoints for agents

An agent that crashes at step eight should not redo steps one to seven.
A checkpoint records the task state after every step, so a crashed task resumes from its last checkpoint.
The weather was pleasant that afternoon.

\`\`\`python
def save_checkpoint(state):  # code is not prose
    pass
\`\`\`

## Side effects

- Each side effect gets an idempotency key before it runs.
- A probe asks whether an uncertain effect happened.
- Lunch was at noon.

See [the format](docs/FORMAT.md) for the *checkpoint* files.

## Resuming

Resuming reads the last checkpoint, verifies the recorded artifacts and continues with the first step that is not done.
`;

describe('summarizeMarkdown', () => {
  it('takes the title from the first heading and the sections from the rest', () => {
    const s = summarizeMarkdown(GUIDE);
    expect(s.title).toBe('Checkpoints for agents');
    expect(s.sections).toEqual(['Side effects', 'Resuming']);
  });

  it("chooses the sentences that carry the document's words, not its filler, in document order", () => {
    const s = summarizeMarkdown(GUIDE);
    expect(s.sentences).toHaveLength(summaryLength(10));
    expect(s.sentences).toContain(
      'A checkpoint records the task state after every step, so a crashed task resumes from its last checkpoint.',
    );
    expect(s.sentences.join(' ')).not.toMatch(/weather|Lunch/);
    const order = s.sentences.map((x) => GUIDE.indexOf(x));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('leaves out code, front matter and link targets', () => {
    const all = summarizeMarkdown(GUIDE.replaceAll('pleasant that afternoon', 'checkpoint checkpoint checkpoint'));
    const text = formatSummary(all);
    expect(text).not.toMatch(/save_checkpoint|front matter|docs\/FORMAT\.md|\*checkpoint\*/);
  });

  it('is deterministic, and a function of the document alone', () => {
    expect(formatSummary(summarizeMarkdown(GUIDE))).toBe(formatSummary(summarizeMarkdown(`${GUIDE}`)));
  });

  it('splits Chinese prose into sentences and words', () => {
    const doc = [
      '# 检查点恢复',
      '',
      '## 分析需求',
      '任务跑到第八步时网络超时，前面七步的结果全部作废。检查点保存每一步的任务状态，任务从最后一个检查点恢复。今天天气很好。',
      '',
      '## 编写代码',
      '每个副作用都有幂等键，检查点记录副作用的状态。',
    ].join('\n');
    const s = summarizeMarkdown(doc);
    expect(s.title).toBe('检查点恢复');
    expect(s.sections).toEqual(['分析需求', '编写代码']);
    expect(s.sentences).toContain('检查点保存每一步的任务状态，任务从最后一个检查点恢复。');
    expect(s.sentences).not.toContain('今天天气很好。');
    // Chinese sentences are joined without a space.
    expect(formatSummary(s)).not.toMatch(/。 /);
  });

  it('says so when a document has no prose, and falls back on the given title', () => {
    const s = summarizeMarkdown('```\nonly code\n```\n', 'notes/empty.md');
    expect(s.title).toBe('notes/empty.md');
    expect(formatSummary(s)).toBe('notes/empty.md\n\nThe document has no prose to summarise.');
  });

  it("summarises this repository's own docs: their title, and sentences taken from them", async () => {
    for (const file of ['docs/FORMAT.md', 'docs/RUNTIME.md', 'docs/WRITING-AGENTS.md']) {
      const text = await fs.readFile(path.join(repo, file), 'utf8');
      const s = summarizeMarkdown(text);
      expect(s.title).toBe(/^# (.+)$/m.exec(text)![1].replace(/`/g, ''));
      expect(s.sentences.length).toBeGreaterThanOrEqual(2);
      expect(s.sentences.length).toBeLessThanOrEqual(5);
      // Each sentence's words are in the file, in that order (inline markup between them aside).
      const flat = text.replace(/[`*_[\]]|\]\([^)]*\)/g, '').replace(/\s+/g, ' ');
      for (const sentence of s.sentences) expect(flat).toContain(sentence.slice(0, 24));
    }
  });
});

describe('the offline model', () => {
  it('answers a request carrying a document with the summary of that document', () => {
    const reply = offlineReply([
      { role: 'system', content: 'Summarise.' },
      { role: 'user', content: `Summarise the Markdown file guide.md.\n\n${documentBlock('guide.md', GUIDE)}` },
    ]);
    expect(reply).toBe(formatSummary(summarizeMarkdown(GUIDE)));
    expect(reply).not.toContain('Summarise the Markdown file');
  });
});

describe('a long sentence', () => {
  it('is segmented in pieces cut after whitespace, which give the words of the whole', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ maxLength: 3000 }), fc.constantFrom(' ', '\n', '。', 'word')), { maxLength: 40 }),
        (parts) => {
          const text = parts.join('');
          const pieces = segmentPieces(text);
          expect(pieces.join('')).toBe(text);
          for (const piece of pieces.slice(0, -1)) {
            // Each cut is after whitespace, and a piece is longer than the bound only when no whitespace let it end sooner.
            expect(piece).toMatch(/\s$/);
            if (piece.length > SEGMENT_PIECE) expect(/\s/.test(piece.slice(0, SEGMENT_PIECE))).toBe(false);
          }
        },
      ),
    );
  });

  it('summarises a document of 200,000 distinct words', () => {
    const words = Array.from({ length: 200_000 }, (_, i) => `w${i.toString(36)}x`);
    const doc = `# Many\n\n${words.map((w, i) => (i % 20 === 19 ? `${w}.` : w)).join(' ')}`;
    const summary = summarizeMarkdown(doc, 'many.md');
    expect(summary.words).toBe(200_000);
    expect(summary.sentences).toHaveLength(5);
  });

  it('is never handed to the segmenter whole, and counts the words it would have', () => {
    const words = Array.from({ length: 3000 }, (_, i) => `word${i % 97}`);
    const doc = `# Long\n\n${words.join(' ')} and an ending.`;
    const lengths: number[] = [];
    const originalSegment = Intl.Segmenter.prototype.segment;
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment').mockImplementation(function (this: Intl.Segmenter, input: string) {
      lengths.push(input.length);
      return originalSegment.call(this, input);
    });
    try {
      const summary = summarizeMarkdown(doc, 'long.md');
      expect(Math.max(...lengths)).toBeLessThanOrEqual(SEGMENT_PIECE);
      // 3,000 content words and "ending" ("and", "an" are stop words).
      expect(summary.words).toBe(3001);
    } finally {
      segment.mockRestore();
    }
  });
});
