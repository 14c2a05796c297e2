/** Start a new task from one of the available agents: agent, options (from its schema) and recovery mode. */
import { useEffect, useRef, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { AgentInfo } from '../../../shared/api/contract.js';
import type { RecoveryMode } from '../../../shared/checkpoint/schema.js';
import { validateAgainstSchema } from '../../../shared/checkpoint/output-schema.js';
import { useAppStore } from '../store/app-store.js';
import { DialogActions } from './dialog-actions.js';

type Props = Record<string, { type?: string; description?: string; default?: unknown; enum?: unknown[]; title?: string }>;

function defaults(agent: AgentInfo | undefined): Record<string, unknown> {
  const props = (agent?.options_schema?.properties ?? {}) as Props;
  return Object.fromEntries(
    Object.entries(props)
      .filter(([, p]) => p.default !== undefined)
      .map(([k, p]) => [k, p.default]),
  );
}

export function StartTaskDialog() {
  const { open, agents, busy } = useAppStore(
    useShallow((s) => ({ open: s.startDialogOpen, agents: s.agents, busy: Boolean(s.busy.start) })),
  );
  const setOpen = useAppStore((s) => s.setStartDialogOpen);
  const refreshAgents = useAppStore((s) => s.refreshAgents);
  const startTask = useAppStore((s) => s.startTask);
  const dialog = useRef<HTMLDialogElement>(null);
  const startable = agents.filter((a) => !a.problem);
  // A registered agent that does not load, or a bad waystation.config.json, is listed with its reason, never hidden.
  const unavailable = agents.filter((a) => a.problem);
  const [agentName, setAgentName] = useState('');
  const agent = startable.find((a) => a.name === agentName) ?? startable[0];
  const [mode, setMode] = useState<RecoveryMode>('manual');
  const [options, setOptions] = useState<Record<string, unknown> | null>(null);
  const [taskId, setTaskId] = useState('');
  /** Why the last start was refused, until the next attempt. */
  const [failure, setFailure] = useState<string | null>(null);
  const values = options ?? defaults(agent);
  const props = (agent?.options_schema?.properties ?? {}) as Props;
  const required = new Set((agent?.options_schema?.required as string[] | undefined) ?? []);
  const errors = agent ? validateAgainstSchema(agent.options_schema, values) : [];

  useEffect(() => {
    const d = dialog.current;
    if (!d) return;
    if (open && !d.open) d.showModal?.();
    if (!open && d.open) d.close();
  }, [open]);

  // The agents are listed again each time the dialog opens: an agent's module edited since shows its new options.
  useEffect(() => {
    if (open) void refreshAgents();
  }, [open, refreshAgents]);

  const setValue = (key: string, value: unknown) => {
    const next = { ...values };
    if (value === '' || value === undefined) delete next[key];
    else next[key] = value;
    setOptions(next);
  };

  return (
    <dialog ref={dialog} className="dialog" aria-labelledby="start-title" onClose={() => setOpen(false)}>
      <form
        method="dialog"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!agent || errors.length) return;
          setFailure(null);
          const outcome = await startTask({
            agent: agent.name,
            options: values,
            mode,
            ...(taskId.trim() ? { taskId: taskId.trim() } : {}),
          });
          if ('error' in outcome) {
            // The dialog stays open with what was typed, and says why, beside the values to change.
            setFailure(outcome.error);
            return;
          }
          setOptions(null);
          setTaskId('');
          setOpen(false);
        }}
      >
        <h2 id="start-title">New task</h2>
        {startable.length === 0 ? (
          <p className="empty-inline">
            {unavailable.length === 0
              ? 'No agent can be started: register one in waystation.config.json in this directory.'
              : 'No agent can be started: fix the problems below.'}
          </p>
        ) : (
          <>
            <label className="field">
              <span>Agent</span>
              <select
                value={agent?.name ?? ''}
                onChange={(e) => {
                  setAgentName(e.target.value);
                  setOptions(null);
                }}
              >
                {startable.map((a) => (
                  <option key={a.name} value={a.name}>
                    {a.name}
                  </option>
                ))}
                {unavailable.map((a) => (
                  <option key={`unavailable:${a.name}`} value="" disabled title={a.problem}>
                    {a.name} (cannot be started)
                  </option>
                ))}
              </select>
              {agent?.description && <small className="muted">{agent.description}</small>}
            </label>
            <fieldset className="field-group">
              <legend>Options</legend>
              {Object.keys(props).length === 0 && <p className="muted small">This agent takes no options.</p>}
              {Object.entries(props).map(([key, p]) => (
                <OptionField
                  key={key}
                  name={key}
                  prop={p}
                  required={required.has(key)}
                  value={values[key]}
                  onChange={(v) => setValue(key, v)}
                />
              ))}
            </fieldset>
            <label className="field">
              <span>Recovery mode</span>
              <select value={mode} onChange={(e) => setMode(e.target.value as RecoveryMode)}>
                <option value="manual">manual: resume when a human says so</option>
                <option value="auto">auto: resume by itself after a failure</option>
                <option value="confirm">confirm: a human approves each resume plan</option>
              </select>
            </label>
            <label className="field">
              <span>Task id (optional)</span>
              <input value={taskId} onChange={(e) => setTaskId(e.target.value)} placeholder="generated when empty" />
            </label>
            {errors.length > 0 && (
              <ul className="error-list" aria-label="Option errors">
                {errors.map((er) => (
                  <li key={er}>{er}</li>
                ))}
              </ul>
            )}
          </>
        )}
        {failure && (
          <p className="error-text" role="alert" aria-label="Why the task did not start">
            The task did not start: {failure}
          </p>
        )}
        {unavailable.length > 0 && (
          <ul className="error-list" aria-label="Agents that cannot be started">
            {unavailable.map((a) => (
              <li key={a.name}>
                <strong>{a.name}</strong>: {a.problem}
              </li>
            ))}
          </ul>
        )}
        <DialogActions
          onCancel={() => setOpen(false)}
          submit="Start task"
          busyText="Starting…"
          busy={busy}
          disabled={!agent || errors.length > 0}
        />
      </form>
    </dialog>
  );
}

function OptionField({
  name,
  prop,
  required,
  value,
  onChange,
}: {
  name: string;
  prop: Props[string];
  required: boolean;
  value: unknown;
  onChange(v: unknown): void;
}) {
  const label = `${prop.title ?? name}${required ? ' *' : ''}`;
  if (Array.isArray(prop.enum)) {
    return (
      <label className="field">
        <span>{label}</span>
        <select
          value={value === undefined ? '' : String(value)}
          onChange={(e) => onChange(prop.enum!.find((x) => String(x) === e.target.value))}
        >
          <option value="">—</option>
          {prop.enum.map((x) => (
            <option key={String(x)} value={String(x)}>
              {String(x)}
            </option>
          ))}
        </select>
        {prop.description && <small className="muted">{prop.description}</small>}
      </label>
    );
  }
  if (prop.type === 'boolean') {
    return (
      <label className="check">
        <input type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} /> {label}
        {prop.description && <small className="muted"> {prop.description}</small>}
      </label>
    );
  }
  if (prop.type === 'number' || prop.type === 'integer') {
    return (
      <label className="field">
        <span>{label}</span>
        <input
          type="number"
          value={typeof value === 'number' ? value : ''}
          onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
        />
        {prop.description && <small className="muted">{prop.description}</small>}
      </label>
    );
  }
  if (prop.type === 'string' || prop.type === undefined) {
    return (
      <label className="field">
        <span>{label}</span>
        <input
          value={typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value)}
          onChange={(e) => onChange(e.target.value)}
        />
        {prop.description && <small className="muted">{prop.description}</small>}
      </label>
    );
  }
  // Arrays and objects: JSON, parsed as typed; kept as text while it does not parse.
  return (
    <label className="field">
      <span>{label} (JSON)</span>
      <textarea
        rows={3}
        defaultValue={value === undefined ? '' : JSON.stringify(value, null, 2)}
        onChange={(e) => {
          try {
            onChange(e.target.value.trim() ? JSON.parse(e.target.value) : undefined);
          } catch {
            onChange(e.target.value);
          }
        }}
      />
      {prop.description && <small className="muted">{prop.description}</small>}
    </label>
  );
}
