/**
 * The wire protocols a registry entry can name, and their public endpoints.
 */

export type ProviderKind =
  | 'openai-responses'
  | 'openai-chat'
  | 'anthropic'
  | 'gemini'
  | 'openrouter'
  | 'openai-compatible'
  | 'ollama';

export const PROVIDER_KINDS: readonly ProviderKind[] = [
  'openai-responses',
  'openai-chat',
  'anthropic',
  'gemini',
  'openrouter',
  'openai-compatible',
  'ollama',
];

/** Public endpoints' version roots. A registry entry may point anywhere else (proxies, local servers). */
export const DEFAULT_BASE_URLS: Readonly<Record<ProviderKind, string>> = {
  'openai-responses': 'https://api.openai.com/v1',
  'openai-chat': 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
  gemini: 'https://generativelanguage.googleapis.com/v1beta',
  openrouter: 'https://openrouter.ai/api/v1',
  'openai-compatible': 'http://127.0.0.1:8000/v1',
  ollama: 'http://127.0.0.1:11434/v1',
};
