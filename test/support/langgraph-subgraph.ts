/**
 * A real LangGraph graph with a subgraph: the parent's `research` node is a
 * compiled StateGraph of its own (draft, then review), so LangGraph writes
 * the subgraph's checkpoints under a non-empty `checkpoint_ns`
 * (`research:<task id>`), beside the parent's. No model is called.
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';

const State = Annotation.Root({
  topic: Annotation<string>(),
  notes: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
  /** What the subgraph found: the parent takes its final value. */
  findings: Annotation<string[]>(),
  summary: Annotation<string>(),
});

/** The subgraph's own state: the topic it is given, and its findings, appended node by node. */
const ResearchState = Annotation.Root({
  topic: Annotation<string>(),
  findings: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

/** The parent graph, compiled with `checkpointer`; its subgraph inherits it. */
export function researchGraph(checkpointer: BaseCheckpointSaver) {
  const research = new StateGraph(ResearchState)
    .addNode('draft', (s) => ({ findings: [`draft about ${s.topic}`] }))
    .addNode('review', (s) => ({ findings: [`reviewed ${s.findings.length} finding(s)`] }))
    .addEdge(START, 'draft')
    .addEdge('draft', 'review')
    .addEdge('review', END)
    .compile();
  return new StateGraph(State)
    .addNode('plan', (s) => ({ notes: [`plan for ${s.topic}`] }))
    .addNode('research', research)
    .addNode('write', (s) => ({ summary: `${s.topic}: ${[...s.notes, ...s.findings].join('; ')}` }))
    .addEdge(START, 'plan')
    .addEdge('plan', 'research')
    .addEdge('research', 'write')
    .addEdge('write', END)
    .compile({ checkpointer });
}

export const SUBGRAPH_THREAD = 'research-thread';
