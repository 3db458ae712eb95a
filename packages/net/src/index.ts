/**
 * @crustcore/net — model providers for CrustCore: one streaming contract,
 * wire dialects for OpenAI (Responses and Chat Completions), Anthropic,
 * Gemini, OpenRouter, Ollama and any OpenAI-compatible server; meta-providers
 * for fallback, routing, budgets and local degradation; a model registry with
 * probing; and record/replay of trajectories.
 */
export { type AssembledTurn, assembleTurn, collectTurn } from './assemble.js';
export { type DecoderContext, type Dialect, joinUrl, type StreamDecoder } from './dialect.js';
export {
  type DoneEvent,
  type ErrorEvent,
  errorEvent,
  isContentEvent,
  isTerminalEvent,
  type JsonObject,
  type ProviderError,
  type ProviderErrorTag,
  type RetryEvent,
  type StopReason,
  type StreamEvent,
  type StreamEventType,
  type TextDeltaEvent,
  type ThinkingDeltaEvent,
  type ThinkingSignatureEvent,
  type ToolCallErrorEvent,
  type ToolCallEvent,
  type UsageEvent,
} from './events.js';
export { classifyHttpError, parseRetryAfter } from './http-errors.js';
export {
  createAnthropicProvider,
  createGeminiProvider,
  createOllamaProvider,
  createOpenAIChatProvider,
  createOpenAICompatibleProvider,
  createOpenAIResponsesProvider,
  createOpenRouterProvider,
  createProvider,
  HttpModelProvider,
  type HttpProviderOptions,
  type OpenAICompatibleOptions,
  type OpenRouterOptions,
} from './http-provider.js';
export { DEFAULT_TIMEOUTS, type FetchFunction, type Timeouts } from './http-transport.js';
export { type ExposableSecret, type KeySource, type KeyUnavailable, readKey } from './key-source.js';
export { type BudgetOptions, BudgetProvider, CostMeter, reservedInputTokens, worstCase } from './meta/budget.js';
export {
  type BackoffPolicy,
  backoffDelayMs,
  type Clock,
  DEFAULT_BACKOFF,
  type RandomSource,
  systemClock,
} from './meta/clock.js';
export { DEFAULT_DEGRADE_ON, type LocalFallbackOptions, LocalFallbackProvider } from './meta/local-fallback.js';
export {
  type FailureDisposition,
  failureDisposition,
  type ProviderCandidate,
  type ReliableOptions,
  ReliableProvider,
} from './meta/reliable.js';
export {
  estimateInputTokens,
  pinnedRoute,
  preRouteKeys,
  type Route,
  type RouterOptions,
  RouterProvider,
  type RouteSelection,
} from './meta/router.js';
export { type NamedPattern, PRE_ROUTER_PATTERNS } from './pre-route/patterns.js';
export {
  type InputKind,
  PRE_ROUTE_HEAD_CHARS,
  type PreRoute,
  preRoute,
  type StackLanguage,
} from './pre-route/pre-router.js';
export {
  costMicroDollars,
  type ModelPrices,
  type PriceLookup,
  type TokenCounts,
  tokenCounts,
  usageEvent,
} from './pricing.js';
export { guardStream, type ModelProvider } from './provider.js';
export { DEFAULT_BASE_URLS, PROVIDER_KINDS, type ProviderKind } from './provider-kind.js';
export { REDACTED, Redactor } from './redaction.js';
export {
  type BuildOptions,
  buildModelStack,
  buildProvider,
  LOCAL_ROLE,
  type ModelStack,
  registryRoutes,
} from './registry/build.js';
export {
  decodeRegistry,
  type ModelEntry,
  type ModelRegistry,
  type ProviderEntry,
  parseRegistry,
  parseSecretHandle,
  type RegistryError,
  type RetrySettings,
  readRegistryFile,
} from './registry/config.js';
export { defaultRegistry, defaultRegistryText } from './registry/default.js';
export {
  type ProbedModel,
  type ProbeOptions,
  type ProbeReport,
  probeProvider,
  probeRegistry,
} from './registry/probe.js';
export { RecordingProvider, type ReplayOptions, ReplayProvider } from './replay/replay-provider.js';
export {
  decodeTrajectory,
  readTrajectoryFile,
  requestFingerprint,
  type Trajectory,
  type TrajectoryError,
  type TrajectoryTurn,
  writeTrajectoryFile,
} from './replay/trajectory.js';
export {
  type AssistantMessage,
  type AssistantPart,
  type CacheHints,
  lastInputMessage,
  type Message,
  type ModelRequest,
  type RouteHints,
  type TextPart,
  type ThinkingLevel,
  type ThinkingPart,
  type ToolCallPart,
  type ToolDefinition,
  type ToolResultMessage,
  type UserMessage,
  withModel,
} from './request.js';
export { DEFAULT_MAX_EVENT_LENGTH, type SseMessage, SseParser, type SseParserOptions } from './sse.js';
export { ANTHROPIC_VERSION, anthropicDialect } from './wire/anthropic.js';
export { GEMINI_SKIP_SIGNATURE, geminiDialect } from './wire/gemini.js';
export { type ChatDialectOptions, openAIChatDialect } from './wire/openai-chat.js';
export { openAIResponsesDialect } from './wire/openai-responses.js';
