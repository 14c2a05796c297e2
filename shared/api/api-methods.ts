/**
 * The API's method names, apart from their input schemas (contract.ts): the
 * page's first script builds its client from these, so that zod and the
 * contract's schemas load beside the page's first requests, not before them.
 * `test/shared/api/api-methods.test.ts` checks them against the schemas.
 */
import type { ApiMethod } from './contract.js';

export const apiMethods = [
  'getDirectory',
  'openDirectory',
  'chooseDirectory',
  'getDirectoryTrust',
  'trustDirectory',
  'listTasks',
  'getTask',
  'getHistory',
  'getStepResult',
  'getMessages',
  'getEvents',
  'diffVersions',
  'verifyTask',
  'getOverview',
  'listAgents',
  'showNotification',
  'startTask',
  'resumeTask',
  'approveResume',
  'rejectResume',
  'editStepResult',
  'stopTask',
  'forkTask',
  'previewRewind',
  'rewindTask',
  'previewThreadEdit',
  'editThreadState',
] as const satisfies readonly ApiMethod[];
