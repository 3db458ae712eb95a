/**
 * Expected failures of the memory store, as values with a stable `_tag`, each
 * with a message that says what to do next. Anything else the database throws
 * (a lost connection, a schema bug) is rethrown: it must crash loudly.
 */

/** Bad input: an empty or oversized body, an unknown kind, a bad id. */
export interface MemoryInvalid {
  readonly _tag: 'MemoryInvalid';
  readonly field: string;
  readonly reason: string;
}

/** `forget` named a memory that is not there (or an id prefix that matches several). */
export interface MemoryNotFound {
  readonly _tag: 'MemoryNotFound';
  readonly id: string;
  readonly reason: 'absent' | 'ambiguous';
}

/** The state plane could not be opened (locked PGlite directory, migration conflict). */
export interface MemoryStoreUnavailable {
  readonly _tag: 'MemoryStoreUnavailable';
  readonly reason: string;
}

export type MemoryError = MemoryInvalid | MemoryNotFound | MemoryStoreUnavailable;

export const memoryInvalid = (field: string, reason: string): MemoryInvalid => ({
  _tag: 'MemoryInvalid',
  field,
  reason,
});

/** One line for people: what went wrong and what to do. */
export function describeMemoryError(error: MemoryError): string {
  switch (error._tag) {
    case 'MemoryInvalid':
      return `${error.field}: ${error.reason}`;
    case 'MemoryNotFound':
      return error.reason === 'absent'
        ? `no memory ${error.id} in this repository (see crustcore memory list)`
        : `${error.id} matches several memories: give more of the id (see crustcore memory list)`;
    case 'MemoryStoreUnavailable':
      return `the memory store cannot be opened: ${error.reason}`;
  }
}
