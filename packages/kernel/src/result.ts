/**
 * A tiny tagged result. The kernel returns values, never throws, for every
 * expected failure. fp-ts `Either` is used at io-ts boundaries; this shape is
 * structurally identical (`_tag: 'Left' | 'Right'`) so both interoperate.
 */
export interface Left<E> {
  readonly _tag: 'Left';
  readonly left: E;
}
export interface Right<A> {
  readonly _tag: 'Right';
  readonly right: A;
}
export type Result<E, A> = Left<E> | Right<A>;

export const ok = <A>(right: A): Right<A> => ({ _tag: 'Right', right });
export const err = <E>(left: E): Left<E> => ({ _tag: 'Left', left });
export const isOk = <E, A>(r: Result<E, A>): r is Right<A> => r._tag === 'Right';
export const isErr = <E, A>(r: Result<E, A>): r is Left<E> => r._tag === 'Left';
