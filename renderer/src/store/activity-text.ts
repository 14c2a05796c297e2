/** What the live activity says of a task's event. */

/** A task-event as a line of the live activity: what happened, to which step. */
export function describeTaskEvent(e: { type: string; step_id?: string; version?: number }): string {
  const step = e.step_id ? `step ${e.step_id}` : null;
  switch (e.type) {
    case 'step-start':
      return `${step ?? 'a step'} started`;
    case 'step-finish':
      return `${step ?? 'a step'} finished`;
    case 'effect':
      return `side effect recorded${step ? ` in ${step}` : ''}`;
    default:
      return [e.type, step, e.version && `v${e.version}`].filter(Boolean).join(' · ');
  }
}
