/**
 * How many reads after the last steps of a run each side's read figure rests on: the graph reads its state after
 * each of its last this many steps, and Waystation's reader beside the running task times its reads after as many.
 */
export const READS_AFTER_STEPS = 9;
