import { describe, expect, it } from 'vitest';
import { NEW_TASK_ID_RE, newTaskIdProblem } from '../../../shared/checkpoint/new-task-id.js';
import { TASK_ID_RE } from '../../../electron/runtime/task-operations.js';

describe('a new task id', () => {
  it('is the rule the runtime applies when it creates a task', () => {
    expect(NEW_TASK_ID_RE.source).toBe(TASK_ID_RE.source);
  });

  it('accepts letters, digits, dots, underscores and dashes after a letter or digit', () => {
    for (const id of ['a', 'notes-2', 'Report_v1.2', '9lives']) expect(newTaskIdProblem(id)).toBeNull();
  });

  it('says what is wrong with one it refuses', () => {
    expect(newTaskIdProblem('-x')).toMatch(/starting with a letter or digit/);
    expect(newTaskIdProblem('a/b')).toMatch(/letters, digits/);
    expect(newTaskIdProblem('has space')).toMatch(/letters, digits/);
    expect(newTaskIdProblem('..')).toMatch(/letters, digits/);
    expect(newTaskIdProblem('x'.repeat(129))).toBe('a task id is at most 128 characters (this one has 129)');
    expect(newTaskIdProblem('taken', ['other', 'taken'])).toBe('a task named taken already exists in this directory');
  });
});
