/**
 * `md-summarizer`: the second article's demo. Summarises each Markdown file
 * of a folder into a summary file (one step, one checkpoint per file), then
 * publishes an index with an HTTP POST as a side effect with a probe.
 *
 * The publish protocol (docs/RUNTIME.md): `POST <url>` with the JSON index and
 * an `Idempotency-Key` header answers 200/201 with `{"id": ...}`, the same id
 * for a repeated key; `GET <url>?key=<key>` answers 200 with that record if a
 * publication with the key exists, 404 if not.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PathOutsideRootError, resolveNamedInsideRoot } from '../store/path-confinement.js';
import type { SideEffect } from '../../shared/checkpoint/schema.js';
import { defineAgent, type ProbeResult } from '../runtime/define-agent.js';
import { documentBlock } from '../llm/document-block.js';

const Options = z.object({
  input: z.string().min(1, 'an --input folder is required'),
  output: z.string().min(1).optional(),
  'publish-url': z.url().optional(),
});
type Options = z.output<typeof Options>;

const Summary = z.object({ file: z.string(), summary_path: z.string(), summary: z.string().min(1) });
const Published = z.object({ index_path: z.string(), published: z.unknown() });

/** Markdown files under a folder, relative, with forward slashes, in a stable order. */
async function markdownFiles(dir: string, prefix = ''): Promise<string[]> {
  const entries = await fs.readdir(path.join(dir, prefix), { withFileTypes: true });
  const out: string[] = [];
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (e.name.startsWith('.')) continue;
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) for (const f of await markdownFiles(dir, rel)) out.push(f);
    else if (e.isFile() && /\.(md|markdown)$/i.test(e.name)) out.push(rel);
  }
  return out;
}

export const SUMMARY_INSTRUCTIONS =
  'You summarise Markdown documents: the title, then the key points in a few sentences taken from the text, then its sections.';

/** The request for one file: the file whole, delimited, so the model (the offline one too) summarises its content and nothing else. */
export function summaryRequest(rel: string, text: string): string {
  return `Summarise the Markdown file ${rel}.\n\n${documentBlock(rel, text)}`;
}

const summaryName = (rel: string) => rel.replace(/\.(md|markdown)$/i, '') + '.summary.md';

/**
 * A path as a task records it (an output folder given, the files a step wrote):
 * relative to the checkpoint directory when inside it, so a directory moved or copied elsewhere writes its
 * summaries into itself, not where it was; absolute when outside it, the one
 * name that place has.
 */
export function recordedPath(p: string, rootDir: string): string {
  const rel = path.relative(rootDir, p);
  if (rel === '') return '.';
  return rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel) ? p : rel.split(path.sep).join('/');
}

/**
 * The folder a recorded output option names, in the directory as it is now.
 * A task created while outputs were recorded absolute keeps writing where it
 * always did.
 */
export function outputFolder(option: string, rootDir: string): string {
  return path.resolve(rootDir, option);
}

/** The output folder of a task that was given none: its own, named by its id. */
export function defaultOutput(rootDir: string, taskId: string): string {
  return path.join(rootDir, 'outputs', taskId);
}

/**
 * The folder a task writes its summaries into, in the directory as it is now.
 *
 * Tasks started before the default went unrecorded hold it as their output
 * option, `outputs/<task>` (absolute before outputs were recorded relative),
 * and a fork carries its parent's options: in a fork, an output folder
 * `outputs/<other task>` of this directory is the default of the task it was
 * forked from (or of that task's own parent), and the fork writes its own
 * folder, leaving that task's files alone.
 */
export function outputDir(option: string | undefined, rootDir: string, taskId: string, forked: boolean): string {
  if (option === undefined) return defaultOutput(rootDir, taskId);
  const folder = outputFolder(option, rootDir);
  return forked && path.dirname(folder) === path.join(rootDir, 'outputs') ? defaultOutput(rootDir, taskId) : folder;
}

/** Ask the publish service whether a publication with this key exists. */
async function probePublish(effect: SideEffect): Promise<ProbeResult> {
  const url = (effect.request as { url?: string } | undefined)?.url;
  if (!url) throw new Error(`effect ${effect.id} has no recorded URL to probe`);
  const probeUrl = new URL(url);
  probeUrl.searchParams.set('key', effect.idempotency_key);
  const res = await fetch(probeUrl, { method: 'GET', signal: AbortSignal.timeout(10_000) });
  if (res.status === 404) return { happened: false };
  if (!res.ok) throw new Error(`the publish service answered ${res.status} to a probe of ${probeUrl.origin}${probeUrl.pathname}`);
  return { happened: true, outcome: publication(await res.json(), effect.idempotency_key) };
}

/**
 * What the step records of a publication: its id and key. The POST answers
 * `{id}` and the probe the whole stored record; keeping the same two fields
 * from either makes a run settled by a probe end exactly like one that was not.
 */
function publication(answer: unknown, key: string): { id: unknown; key: string } {
  return { id: (answer as { id?: unknown } | null)?.id ?? null, key };
}

/** `requested` resolved inside `root`, or an error naming the option and why it is refused. */
function confinedPath(root: string, requested: string, option: string): string {
  try {
    return resolveNamedInsideRoot(root, requested);
  } catch (err) {
    if (!(err instanceof PathOutsideRootError)) throw err;
    throw new Error(
      `the --${option} folder ${JSON.stringify(requested)} is refused: ${err.why}; a task started from the inspector reads and writes only inside ${root}, so name a folder there. No task was created`,
      { cause: err },
    );
  }
}

export const mdSummarizer = defineAgent({
  name: 'md-summarizer',
  description: 'Summarise each Markdown file of --input into --output, then publish an index to --publish-url exactly once.',
  options: Options,
  // Paths are fixed once, at creation, so a resume from another working directory finds the same files: the input
  // absolute, an output folder given as recordedPath records it. The default output is not recorded: it is the
  // task's own folder, DIR/outputs/<task> (defaultOutput), found when the task runs, so a fork writes its own
  // folder, never the one of the task it was forked from. The input folder is checked here, so a start with a wrong
  // one is refused before any version is written.
  resolveOptions: async (o, env): Promise<Options> => {
    // Options a page sent (the inspector) name folders inside the checkpoint directory only, as every path a page
    // names does: ../ , an absolute path or a symbolic link out of it is refused before anything is read.
    if (env.confined) {
      confinedPath(env.rootDir, o.input, 'input');
      if (o.output !== undefined) confinedPath(env.rootDir, o.output, 'output');
    }
    const input = path.resolve(env.baseDir, o.input);
    const stat = await fs.stat(input).catch((err: NodeJS.ErrnoException) => err);
    if (stat instanceof Error || !stat.isDirectory()) {
      const why = stat instanceof Error ? (stat.code === 'ENOENT' ? 'it does not exist' : stat.message) : 'it is not a folder';
      const relative = path.isAbsolute(o.input) ? '' : ` (${JSON.stringify(o.input)} is read relative to ${env.baseDir})`;
      throw new Error(`cannot read the input folder ${input}${relative}: ${why}; no task was created`);
    }
    return o.output === undefined
      ? { ...o, input }
      : { ...o, input, output: recordedPath(path.resolve(env.baseDir, o.output), env.rootDir) };
  },
  goal: (o) => `summarise the Markdown files of ${o.input} and publish an index${o['publish-url'] ? ` to ${o['publish-url']}` : ''}`,
  async plan(o) {
    let files: string[];
    try {
      files = await markdownFiles(o.input);
    } catch (err) {
      throw new Error(`cannot read the input folder ${o.input}: ${(err as Error).message}`, { cause: err });
    }
    return [
      ...files.map((f) => ({ id: `summarize:${f}`, name: `summarize ${f}`, output_schema: Summary })),
      { id: 'publish-index', name: 'write and publish the index', output_schema: Published },
    ];
  },
  probes: { 'http-publish': (effect) => probePublish(effect) },
  async run(ctx) {
    const o = ctx.options;
    // Resolved against the directory as it is now: a folder inside it moved or was copied with it.
    const outDir = outputDir(o.output, ctx.rootDir, ctx.taskId, ctx.forkedFrom !== null);
    const summaries: z.output<typeof Summary>[] = [];
    await ctx.phase('summarize');
    for (const { id } of ctx.plan.filter((s) => s.id.startsWith('summarize:'))) {
      const rel = id.slice('summarize:'.length);
      const result = await ctx.step(id, async () => {
        const text = await fs.readFile(path.join(o.input, rel), 'utf8');
        const reply = await ctx.llm.complete([
          { role: 'system', content: SUMMARY_INSTRUCTIONS },
          { role: 'user', content: summaryRequest(rel, text) },
        ]);
        const summaryPath = path.join(outDir, summaryName(rel));
        await ctx.writeArtifact(summaryPath, `# Summary of ${rel}\n\n${reply.text}\n`, { type: 'summary' });
        return { file: rel, summary_path: recordedPath(summaryPath, ctx.rootDir), summary: reply.text };
      });
      summaries.push(result);
    }

    await ctx.phase('publish');
    await ctx.step('publish-index', async () => {
      const index = {
        task_id: ctx.taskId,
        files: summaries.map((s) => ({ file: s.file, summary: s.summary })),
      };
      const indexPath = path.join(outDir, 'index.json');
      await ctx.writeArtifact(indexPath, JSON.stringify(index, null, 2) + '\n', { type: 'index' });
      const url = o['publish-url'];
      if (!url) {
        ctx.log('no --publish-url given: the index was written but not published');
        return { index_path: recordedPath(indexPath, ctx.rootDir), published: null };
      }
      const published = await ctx.effect({
        type: 'http-publish',
        key: `${ctx.taskId}:publish-index`,
        request: { url, files: index.files.length },
        perform: async (key) => {
          const res = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify(index),
            signal: AbortSignal.timeout(30_000),
          });
          if (!res.ok) throw new Error(`the publish service answered ${res.status} ${res.statusText}`);
          return publication(await res.json(), key);
        },
        probe: probePublish,
      });
      return { index_path: recordedPath(indexPath, ctx.rootDir), published };
    });
  },
});
