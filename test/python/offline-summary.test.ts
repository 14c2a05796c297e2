/**
 * The offline model's summary of a document is the same in both languages
 * (electron/llm/extractive-summary.ts, python/waystation/extractive_summary.py):
 * byte for byte for documents written with spaces, the repository's own
 * Markdown among them, and so is the whole reply to a message carrying one.
 * Chinese text is where they may part: its words come from ICU's dictionary
 * in TypeScript and are single ideographs in Python, so only the title, the
 * sections and the text of each sentence are the same there.
 */
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatSummary, summarizeMarkdown } from '../../electron/llm/extractive-summary.js';
import { offlineReply } from '../../electron/llm/offline-provider.js';
import { documentBlock } from '../../electron/llm/document-block.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Run `code` with the Python library importable, handing it `input` as JSON on stdin; resolves to its JSON output. */
function python(code: string, input: unknown): unknown {
  const r = spawnSync('python3', ['-c', code], {
    input: JSON.stringify(input),
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: path.join(repo, 'python') },
    timeout: 120_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

const SUMMARIES = `
import json, sys
from waystation.extractive_summary import format_summary, summarize_markdown
docs = json.load(sys.stdin)
print(json.dumps([format_summary(summarize_markdown(d["text"], d["name"])) for d in docs]))
`;

/** Documents that exercise each part of the rule: front matter, fences, setext headings, lists, quotes, tables, inline marks. */
const MADE_UP = [
  {
    name: 'notes.md',
    text: [
      '---',
      'title: front matter, never prose',
      '---',
      'Release notes',
      '=============',
      '',
      'The runtime saves a checkpoint after every step. It resumes from the last saved step, not from step 1!',
      'Does a resume repeat side effects? No: each effect has an idempotency key.',
      '',
      '```ts',
      'const ignored = "code is not prose.";',
      '```',
      '',
      'Changes',
      '-------',
      '- Faster saves through the runtime, 1.7x in the bench',
      '- The store’s **format** is _unchanged_, see [FORMAT](docs/FORMAT.md) and `waystation verify`',
      '1) Numbered items count as sentences too',
      '',
      '> Quoted text is prose: the checkpoint is the minimal, trusted state.',
      '',
      '| a table | is skipped |',
      '    indented code is skipped too.',
      '<div>HTML is skipped.</div>',
      '',
      '### e.g. U.S.A. 3.14 1,000 c’est l’été naïve café snake_case __dunder__ x',
    ].join('\n'),
  },
  { name: 'empty.md', text: '# Only a title\n' },
  { name: 'no-headings.md', text: 'One sentence alone. And two.' },
];

describe('the offline summary in TypeScript and in Python', () => {
  it("is the same, byte for byte, for the repository's Markdown and for documents made to try the rule", async () => {
    const names = ['README.md', 'docs/ARCHITECTURE.md', 'docs/FORMAT.md', 'docs/RUNTIME.md', 'docs/WRITING-AGENTS.md', 'docs/LANGGRAPH.md', 'docs/POSTGRES.md'];
    const docs = [...(await Promise.all(names.map(async (name) => ({ name, text: await fs.readFile(path.join(repo, name), 'utf8') })))), ...MADE_UP];
    const expected = docs.map((d) => formatSummary(summarizeMarkdown(d.text, d.name)));
    expect(python(SUMMARIES, docs)).toEqual(expected);
    // Not a summary of nothing: the made-up notes' summary has its title, sentences and sections.
    expect(expected[names.length]).toMatch(/^Release notes\n\n.+\n\nSections: Changes; e\.g\. U\.S\.A\./s);
  });

  it('answers a message carrying a document with the same reply, and one without with the same too', () => {
    const conversations = [
      [
        { role: 'system', content: 'You summarise Markdown documents.' },
        { role: 'user', content: `Summarise the Markdown file notes.md.\n\n${documentBlock('notes.md', MADE_UP[0].text)}` },
      ],
      [{ role: 'user', content: `Quote <document name="a &quot;b&quot;">\nline one. line two\n</document> and after` }],
      [{ role: 'user', content: 'Write the code\n# Plan\nFirst do this. Then that.' }],
    ];
    const replies = python(
      `
import json, sys
from waystation.llm import offline_reply
print(json.dumps([offline_reply(c) for c in json.load(sys.stdin)]))
`,
      conversations,
    );
    expect(replies).toEqual(conversations.map((c) => offlineReply(c as Parameters<typeof offlineReply>[0])));
  });

  it('keeps the title, the sections and the sentences of Chinese text; only the choice among them may differ', () => {
    const text = [
      '# 检查点',
      '',
      '长任务常常在中途失败：超时、重启、上下文被截断。从第一步重跑既浪费令牌，又会得到不同的中间结果。',
      '检查点保存让任务继续所需的最小可信状态。它记录阶段、计划和每一步的状态。',
      '',
      '## 恢复',
      '',
      '恢复时先读取检查点，再校验产物的哈希，最后从下一个未完成的步骤继续。副作用用幂等键记录，不会重复执行。',
    ].join('\n');
    const ts = summarizeMarkdown(text, 'zh.md');
    const py = python(
      `
import json, sys
from dataclasses import asdict
from waystation.extractive_summary import summarize_markdown
d = json.load(sys.stdin)
print(json.dumps(asdict(summarize_markdown(d["text"], d["name"]))))
`,
      { name: 'zh.md', text },
    ) as { title: string; sections: string[]; sentences: string[] };
    expect(py.title).toBe(ts.title);
    expect(py.sections).toEqual(ts.sections);
    expect(py.sentences).toHaveLength(ts.sentences.length);
    // Whole sentences of the text, as the TypeScript side cuts them.
    for (const s of py.sentences) {
      expect(text).toContain(s);
      expect(s).toMatch(/。$/);
    }
  });
});
