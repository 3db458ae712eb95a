/**
 * A registry holds handles, never credentials. Values in a server's env or
 * headers that look like a credential — by the variable's name or by the
 * value's shape — are refused with the way to keep them in the vault.
 */
import { looksLikeSecretName, looksLikeSecretValue } from '@crustcore/sandbox';

const AUTH_HEADER = /^(authorization|proxy-authorization|x-api-key|api-key|cookie)$/i;
/** `${VAR}` references (Claude Code expands them at start-up) name a value; they are not one. */
const REFERENCE = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/** A message for the first credential-looking value, or null. The value itself is never in the message. */
export function checkNoCredential(server: string, values: Readonly<Record<string, string>>): string | null {
  for (const [name, value] of Object.entries(values)) {
    if (value === '' || REFERENCE.test(value) || value.startsWith('secret://')) continue;
    if (looksLikeSecretName(name) || AUTH_HEADER.test(name) || looksLikeSecretValue(value)) {
      return `server ${server}: ${name} holds what looks like a credential; store it with \`crustcore secret set NAME\` and register the server with \`--auth ${name}=secret://NAME\` instead (the registry keeps handles, never values)`;
    }
  }
  return null;
}
