/**
 * Turns a registry into running providers: one HTTP provider per entry (each
 * with its own key source — credentials never cross providers), and a role
 * router whose per-role chain is retry + fallback across that role's models,
 * under the registry's cost ceiling, degrading to the `local` role's model
 * when every remote candidate failed.
 */

import { createProvider, type HttpModelProvider } from '../http-provider.js';
import type { FetchFunction } from '../http-transport.js';
import type { KeySource } from '../key-source.js';
import { BudgetProvider, CostMeter } from '../meta/budget.js';
import type { Clock, RandomSource } from '../meta/clock.js';
import { LocalFallbackProvider } from '../meta/local-fallback.js';
import { ReliableProvider } from '../meta/reliable.js';
import { type Route, RouterProvider } from '../meta/router.js';
import type { ModelPrices } from '../pricing.js';
import type { ModelProvider } from '../provider.js';
import type { ModelRegistry, ProviderEntry } from './config.js';

export const LOCAL_ROLE = 'local';

export interface BuildOptions {
  /** Maps a key handle's NAME to its secret; undefined when the secret is not available. */
  readonly resolveKey: (name: string) => KeySource | undefined;
  readonly fetch?: FetchFunction;
  readonly now?: () => number;
  readonly clock?: Clock;
  readonly random?: RandomSource;
}

export interface ModelStack {
  readonly providers: ReadonlyMap<string, HttpModelProvider>;
  readonly router: RouterProvider;
  /** Spend across every remote role chain (local models are not metered against the ceiling). */
  readonly meter: CostMeter;
}

/** A secret that is not available yields no key, which the provider reports as an `auth` error per request. */
const missingKey: KeySource = () => '';

export function buildProvider(entry: ProviderEntry, options: BuildOptions): HttpModelProvider {
  const prices = new Map(
    entry.models.flatMap((model) => (model.prices === undefined ? [] : [[model.id, model.prices] as const])),
  );
  const key = entry.keyName === undefined ? undefined : (options.resolveKey(entry.keyName) ?? missingKey);
  return createProvider(entry.kind, {
    id: entry.id,
    baseUrl: entry.baseUrl,
    headers: entry.headers,
    prices: (model) => prices.get(model),
    ...(key === undefined ? {} : { key }),
    ...(entry.timeouts === undefined ? {} : { timeouts: entry.timeouts }),
    ...(entry.appUrl === undefined ? {} : { appUrl: entry.appUrl }),
    ...(entry.appName === undefined ? {} : { appName: entry.appName }),
    ...(entry.maxTokensField === undefined ? {} : { maxTokensField: entry.maxTokensField }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
}

/** Role → routes, in registry file order (the order is the preference). */
export function registryRoutes(
  registry: ModelRegistry,
  providers: ReadonlyMap<string, ModelProvider>,
): Record<string, Route[]> {
  const routes: Record<string, Route[]> = {};
  for (const entry of registry.providers) {
    const provider = providers.get(entry.id);
    if (provider === undefined) continue;
    for (const model of entry.models) {
      for (const role of model.roles) {
        const route: Route = {
          provider,
          model: model.id,
          ...(model.tools === undefined ? {} : { tools: model.tools }),
          ...(model.contextWindow === undefined ? {} : { contextWindow: model.contextWindow }),
        };
        if (!Object.hasOwn(routes, role)) routes[role] = [];
        routes[role]!.push(route);
      }
    }
  }
  return routes;
}

/** Provider id + model id → the registry's prices for it. */
function pricesByRoute(registry: ModelRegistry): ReadonlyMap<string, ModelPrices> {
  const prices = new Map<string, ModelPrices>();
  for (const entry of registry.providers) {
    for (const model of entry.models) {
      if (model.prices !== undefined) prices.set(`${entry.id}\u0000${model.id}`, model.prices);
    }
  }
  return prices;
}

/** The highest price of each kind among `all`; undefined when any is unknown. */
export function dearestPrices(all: readonly (ModelPrices | undefined)[]): ModelPrices | undefined {
  if (all.length === 0 || all.some((prices) => prices === undefined)) return undefined;
  const known = all as readonly ModelPrices[];
  const highest = (pick: (prices: ModelPrices) => number): number => Math.max(...known.map(pick));
  return {
    inputPerMillion: highest((prices) => prices.inputPerMillion),
    outputPerMillion: highest((prices) => prices.outputPerMillion),
    cacheReadPerMillion: highest((prices) => prices.cacheReadPerMillion ?? prices.inputPerMillion),
    cacheWritePerMillion: highest((prices) => prices.cacheWritePerMillion ?? prices.inputPerMillion),
  };
}

export function buildModelStack(registry: ModelRegistry, options: BuildOptions): ModelStack {
  const providers = new Map(registry.providers.map((entry) => [entry.id, buildProvider(entry, options)] as const));
  const routes = registryRoutes(registry, providers);
  const meter = new CostMeter();
  const retry = registry.retry ?? {};
  const reliable = (chain: readonly Route[]): ReliableProvider =>
    new ReliableProvider({
      candidates: chain.map((route) => ({ provider: route.provider, model: route.model })),
      ...(retry.maxAttemptsPerCandidate === undefined
        ? {}
        : { maxAttemptsPerCandidate: retry.maxAttemptsPerCandidate }),
      backoff: { baseDelayMs: retry.baseDelayMs ?? 500, maxDelayMs: retry.maxDelayMs ?? 30_000 },
      ...(retry.maxRetryAfterMs === undefined ? {} : { maxRetryAfterMs: retry.maxRetryAfterMs }),
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(options.random === undefined ? {} : { random: options.random }),
    });
  const localRoute = routes[LOCAL_ROLE]?.[0];
  const ceiling = registry.budget?.ceilingMicroDollars;
  const ceilingTokens = registry.budget?.ceilingTokens;
  const routeKey = (route: Route): string => `${route.provider.id}\u0000${route.model}`;
  const routePrices = pricesByRoute(registry);
  const localKeys = new Set((routes[LOCAL_ROLE] ?? []).map(routeKey));
  const chain = (chosen: readonly Route[]): ModelProvider => {
    const isLocalChain = chosen.every((route) => localKeys.has(routeKey(route)));
    const remote: ModelProvider =
      ceiling === undefined || isLocalChain
        ? reliable(chosen)
        : new BudgetProvider(reliable(chosen), {
            ceilingMicroDollars: ceiling,
            ...(ceilingTokens === undefined ? {} : { ceilingTokens }),
            meter,
            // The chain may move to any of its models: reserve at the dearest (none if one is unpriced).
            prices: () => dearestPrices(chosen.map((route) => routePrices.get(routeKey(route)))),
          });
    if (localRoute === undefined || isLocalChain) return remote;
    return new LocalFallbackProvider({
      primary: remote,
      local: { provider: localRoute.provider, model: localRoute.model },
    });
  };
  const router = new RouterProvider({
    routes,
    defaultRole: registry.defaultRole,
    chain,
    ...(registry.inputRoles === undefined ? {} : { inputRoles: registry.inputRoles }),
  });
  return { providers, router, meter };
}
