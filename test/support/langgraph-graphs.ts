/**
 * Real LangGraph graphs, run with a real checkpointer, to build the databases
 * the LangGraph source is tested against: a tool-calling loop, an
 * `interrupt()` resumed with a `Command`, an `updateState`, and a fork from an
 * earlier checkpoint. No model is called: the "model" node answers from the
 * conversation so far, deterministically.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { Command, END, interrupt, MessagesAnnotation, START, StateGraph, Annotation } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';

/** The weather tool's answer, so tests can look for it. */
export const weatherOf = (city: string) => `It is sunny in ${city}, 21°C.`;

/**
 * The model node: asks for the weather tool once per question, then answers
 * with the tool's result.
 */
function fakeModel(state: typeof MessagesAnnotation.State): { messages: BaseMessage[] } {
  const last = state.messages[state.messages.length - 1];
  if (last instanceof ToolMessage || last?.getType() === 'tool') {
    return { messages: [new AIMessage({ content: `The weather: ${String(last.content)}`, id: `ai-answer-${state.messages.length}` })] };
  }
  const question = String(last?.content ?? '');
  const city = /(?:in|about) ([A-Z][a-z]+)/.exec(question)?.[1] ?? 'Paris';
  return {
    messages: [
      new AIMessage({
        content: '',
        id: `ai-call-${state.messages.length}`,
        tool_calls: [{ id: `call-${state.messages.length}`, name: 'get_weather', args: { city }, type: 'tool_call' }],
      }),
    ],
  };
}

function toolsNode(state: typeof MessagesAnnotation.State): { messages: BaseMessage[] } {
  const last = state.messages[state.messages.length - 1] as AIMessage;
  return {
    messages: (last.tool_calls ?? []).map(
      (call) => new ToolMessage({ content: weatherOf(String(call.args.city)), tool_call_id: call.id ?? '', name: call.name }),
    ),
  };
}

/** The tool-calling agent: model -> tools -> model, until the model answers in words. */
export function weatherAgent(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', fakeModel)
    .addNode('tools', toolsNode)
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (s) => {
      const last = s.messages[s.messages.length - 1] as AIMessage;
      return last.tool_calls?.length ? 'tools' : END;
    })
    .addEdge('tools', 'agent')
    .compile({ checkpointer });
}

const ApprovalState = Annotation.Root({
  draft: Annotation<string>(),
  approved: Annotation<boolean | null>(),
  ...MessagesAnnotation.spec,
});

/** A graph that drafts an email and waits for a human to approve it with `interrupt()`. */
export function approvalGraph(checkpointer: BaseCheckpointSaver) {
  return new StateGraph(ApprovalState)
    .addNode('write_draft', (s) => ({ draft: `Dear team, ${String(s.messages[0]?.content ?? '')}`, approved: null }))
    .addNode('review', (s) => {
      const answer = interrupt({ question: 'Send this email?', draft: s.draft }) as { approve: boolean };
      return { approved: answer.approve, messages: [new AIMessage(answer.approve ? 'Email sent.' : 'Email discarded.')] };
    })
    .addEdge(START, 'write_draft')
    .addEdge('write_draft', 'review')
    .addEdge('review', END)
    .compile({ checkpointer });
}

/** Thread ids of the scenario `populate` writes. */
export const THREADS = {
  weather: 'weather-paris',
  weatherTwice: 'weather-two-questions',
  waiting: 'email-waiting',
  approved: 'email-approved',
  edited: 'weather-edited',
} as const;

/**
 * Write the whole scenario through `checkpointer`: two tool-calling threads
 * (one asked twice), one interrupted thread left waiting, one resumed with a
 * Command, one edited with updateState and forked from an earlier checkpoint.
 */
export async function populate(checkpointer: BaseCheckpointSaver): Promise<void> {
  const agent = weatherAgent(checkpointer);
  const cfg = (thread_id: string) => ({ configurable: { thread_id } });
  await agent.invoke({ messages: [new HumanMessage('What is the weather in Paris?')] }, cfg(THREADS.weather));
  await agent.invoke({ messages: [new HumanMessage('What is the weather in Oslo?')] }, cfg(THREADS.weatherTwice));
  await agent.invoke({ messages: [new HumanMessage('And in Rome?')] }, cfg(THREADS.weatherTwice));

  const approval = approvalGraph(checkpointer);
  await approval.invoke({ messages: [new HumanMessage('the release is on Friday.')] }, cfg(THREADS.waiting));
  await approval.invoke({ messages: [new HumanMessage('lunch is at noon.')] }, cfg(THREADS.approved));
  await approval.invoke(new Command({ resume: { approve: true } }), cfg(THREADS.approved));

  await agent.invoke({ messages: [new HumanMessage('What is the weather in Lima?')] }, cfg(THREADS.edited));
  await agent.updateState(cfg(THREADS.edited), { messages: [new HumanMessage('Thanks! Noted.')] });
  // A fork: back to the checkpoint right after the first input, with a different question.
  const history = [];
  for await (const snap of agent.getStateHistory(cfg(THREADS.edited))) history.push(snap);
  const firstLoop = history.find((s) => s.metadata?.source === 'loop' && s.metadata.step === 0);
  if (!firstLoop) throw new Error('the edited thread has no first loop checkpoint to fork from');
  const forked = await agent.updateState(firstLoop.config, { messages: [new HumanMessage('Actually, what about Quito?')] });
  await agent.invoke(null, forked);
}
