// Entry IDs: ULIDs from one monotonic factory per process, so that entries created one after the
// other (the creates of a batch, within one millisecond) get ascending IDs, and the default order
// of lists and queries (ID ascending) is the order they were created in.
import { monotonicFactory } from 'ulid';

export const newEntryId: () => string = monotonicFactory();
