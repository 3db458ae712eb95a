/**
 * The gateway's failures as values. Each carries a message that says what
 * went wrong and what to do next, because a person reads it at a prompt.
 */
import type * as t from 'io-ts';

export type GatewayError =
  | { readonly _tag: 'BadRegistryFile'; readonly path: string; readonly message: string }
  | { readonly _tag: 'BadConfigFile'; readonly path: string; readonly message: string }
  | { readonly _tag: 'BadRecord'; readonly message: string }
  | { readonly _tag: 'CredentialValue'; readonly message: string }
  | { readonly _tag: 'UnknownServer'; readonly message: string }
  | { readonly _tag: 'DuplicateServer'; readonly message: string }
  | { readonly _tag: 'NotTrusted'; readonly message: string }
  | { readonly _tag: 'NotAllowedHere'; readonly message: string }
  | { readonly _tag: 'Unsupported'; readonly message: string }
  | { readonly _tag: 'StartFailed'; readonly message: string }
  | { readonly _tag: 'CredentialMissing'; readonly message: string }
  | { readonly _tag: 'Io'; readonly message: string };

export const gatewayError = <T extends GatewayError['_tag']>(
  tag: T,
  message: string,
  extra: Omit<Extract<GatewayError, { _tag: T }>, '_tag' | 'message'> = {} as never,
): GatewayError => ({ _tag: tag, message, ...extra }) as GatewayError;

/** The first few decoding problems as `path: expected type` lines. */
export function describeDecodeErrors(errors: t.Errors): string {
  const lines = errors.slice(0, 4).map((error) => {
    const path = error.context
      .map((entry) => entry.key)
      .filter((key) => key !== '')
      .join('.');
    const expected = error.context[error.context.length - 1]?.type.name ?? 'a valid value';
    return `${path === '' ? '(top level)' : path}: expected ${expected}`;
  });
  return [...new Set(lines)].join('; ');
}
