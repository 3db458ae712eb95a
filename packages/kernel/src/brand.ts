/**
 * Compile-time brands. A brand costs nothing at run time; it only stops a raw
 * string or number from standing in for a checked value. Values that carry
 * authority (approvals, capabilities) use class instances with private fields
 * instead, because a brand alone can be forged with a cast.
 */
declare const brandTag: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brandTag]: B };
