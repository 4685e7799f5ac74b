/** A step's refusal: the execution stops as `failed` with this message (no retry). */
export class StepFailed extends Error {}
