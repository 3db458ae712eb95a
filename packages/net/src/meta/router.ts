/**
 * RouterProvider: picks models by role (`implement`, `review`, `summarize`,
 * `local`, …) from the request's route hint, skipping routes that cannot
 * serve the request (no tool support when tools are sent, context window too
 * small), and hands the remaining routes, in preference order, to a chain
 * builder — by default the first route alone; the registry builds a
 * ReliableProvider (with local fallback) over them.
 */
import { errorEvent, type StreamEvent } from '../events.js';
import { type PreRoute, preRoute } from '../pre-route/pre-router.js';
import { guardStream, type ModelProvider } from '../provider.js';
import { lastInputMessage, type ModelRequest, withModel } from '../request.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface Route {
  readonly provider: ModelProvider;
  readonly model: string;
  /** False when the model cannot call tools; absent means unknown (allowed). */
  readonly tools?: boolean;
  /** Context window in tokens; absent means unknown (allowed). */
  readonly contextWindow?: number;
}

export interface RouterOptions {
  /** Role → routes in preference order. */
  readonly routes: Readonly<Record<string, readonly Route[]>>;
  /** Used when the request carries no role hint. */
  readonly defaultRole: string;
  /** Builds the provider that serves a request from its eligible routes (never empty). */
  readonly chain?: (routes: readonly Route[]) => ModelProvider;
  /** Estimate of the request's input tokens, to compare with context windows. */
  readonly estimateInputTokens?: (request: ModelRequest) => number;
  /**
   * Pre-router class → role (`stack-trace`, `stack-trace:python`, `sql`, …; see preRouteKeys), used
   * only when the request carries no role hint: the last input is classified and, on a hit whose
   * class names a role this router has, that role serves it. A miss keeps the default role.
   */
  readonly inputRoles?: Readonly<Record<string, string>>;
  readonly id?: string;
}

/** The keys a pre-route answer can be looked up by, most specific first. */
export function preRouteKeys(route: PreRoute): readonly string[] {
  if (route._tag === 'Miss') return [];
  return route.language === null ? [route.kind] : [`${route.kind}:${route.language}`, route.kind];
}

const inputText = (request: ModelRequest): string => lastInputMessage(request)?.content ?? '';

export type RouteSelection =
  | { readonly _tag: 'Selected'; readonly role: string; readonly routes: readonly Route[] }
  | { readonly _tag: 'UnknownRole'; readonly role: string }
  | { readonly _tag: 'NoEligibleRoute'; readonly role: string; readonly reasons: readonly string[] };

/** About four characters per token for English and code: an estimate for eligibility, not for billing. */
export const estimateInputTokens = (request: ModelRequest): number =>
  Math.ceil(
    (request.system.length + JSON.stringify(request.messages).length + JSON.stringify(request.tools).length) / 4,
  );

/** Serves a request on exactly one route: its provider, asked for its model. */
export const pinnedRoute = (route: Route): ModelProvider => ({
  id: route.provider.id,
  stream: (request, signal) => route.provider.stream(withModel(request, route.model), signal),
});

// ─── the provider ─────────────────────────────────────────────────────────

export class RouterProvider implements ModelProvider {
  readonly id: string;
  readonly #options: RouterOptions;
  readonly #chains = new Map<string, ModelProvider>();

  constructor(options: RouterOptions) {
    this.#options = options;
    this.id = options.id ?? 'router';
  }

  get roles(): readonly string[] {
    return Object.keys(this.#options.routes);
  }

  /** The role for a request: its hint, else the pre-router's pick (when configured), else the default. */
  roleFor(request: ModelRequest): string {
    if (request.route?.role !== undefined) return request.route.role;
    const inputRoles = this.#options.inputRoles;
    if (inputRoles !== undefined) {
      for (const key of preRouteKeys(preRoute(inputText(request)))) {
        const role = Object.hasOwn(inputRoles, key) ? inputRoles[key] : undefined;
        if (role !== undefined && Object.hasOwn(this.#options.routes, role)) return role;
      }
    }
    return this.#options.defaultRole;
  }

  select(request: ModelRequest): RouteSelection {
    const role = this.roleFor(request);
    const routes = Object.hasOwn(this.#options.routes, role) ? this.#options.routes[role] : undefined;
    if (routes === undefined) return { _tag: 'UnknownRole', role };
    const needed = (this.#options.estimateInputTokens ?? estimateInputTokens)(request) + request.maxTokens;
    const reasons: string[] = [];
    const eligible = routes.filter((route) => {
      const name = `${route.provider.id}/${route.model}`;
      if (request.tools.length > 0 && route.tools === false) {
        reasons.push(`${name}: no tool support`);
        return false;
      }
      if (route.contextWindow !== undefined && route.contextWindow < needed) {
        reasons.push(`${name}: context window ${route.contextWindow} < ~${needed} tokens needed`);
        return false;
      }
      return true;
    });
    return eligible.length === 0
      ? { _tag: 'NoEligibleRoute', role, reasons }
      : { _tag: 'Selected', role, routes: eligible };
  }

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    return guardStream(this.id, () => this.#run(request, signal));
  }

  async *#run(request: ModelRequest, signal: AbortSignal | undefined): AsyncGenerator<StreamEvent, void, undefined> {
    const selection = this.select(request);
    if (selection._tag === 'UnknownRole') {
      yield errorEvent({ _tag: 'bad_request', provider: this.id, message: `no routes for role "${selection.role}"` });
      return;
    }
    if (selection._tag === 'NoEligibleRoute') {
      const message = `no route for role "${selection.role}" can serve this request (${selection.reasons.join('; ')})`;
      yield errorEvent({ _tag: 'bad_request', provider: this.id, message });
      return;
    }
    const first = selection.routes[0]!;
    yield* this.#chainFor(selection.routes).stream(withModel(request, first.model), signal);
  }

  /** Chains are cached per eligible subset of a role's routes: a small, bounded set (at most 2^routes per role). */
  #chainFor(routes: readonly Route[]): ModelProvider {
    const key = routes.map((route) => `${route.provider.id}\u0000${route.model}`).join('\u0001');
    let chain = this.#chains.get(key);
    if (chain === undefined) {
      chain = this.#options.chain === undefined ? pinnedRoute(routes[0]!) : this.#options.chain(routes);
      this.#chains.set(key, chain);
    }
    return chain;
  }
}
