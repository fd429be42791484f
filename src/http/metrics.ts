/**
 * Prometheus metrics (GET /metrics, prom-client): HTTP request counts and latencies per
 * route template, the condition-axis upstream counters and the event streams' counters and
 * index sizes read at scrape time, the script runs, and the process metrics. Each app owns its registry (tests start many apps in one process), and
 * `[metrics] mode` decides who may read it: nobody (404), anyone, or admin sessions.
 */
import { Router, type Request, type RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { StreamCounters } from '../services/game/event-streams.ts';
import type { ScriptCounters } from '../services/scripts/script-service.ts';
import type { EntityStateCounters } from '../integrations/entity-state.ts';
import type { SessionService } from '../services/accounts/session-service.ts';
import { rank } from '../shared/roles.ts';
import { HttpError } from './support/errors.ts';
import { presentedSessionId } from './middleware/auth.ts';

export type MetricsMode = 'off' | 'open' | 'admin';

export const METRICS_FORBIDDEN = 'Metrics require admin or superuser role.';

/** Keys of the upstream counters, in exposition order. */
const UPSTREAM_COUNTERS: readonly (keyof EntityStateCounters)[] = [
  'requests_total',
  'retries_total',
  'timeouts_total',
  'request_exceptions_total',
  'unsupported_total',
  'http_failures_total',
  'json_failures_total',
  'shape_failures_total',
  'success_total',
];

const LABELS = ['method', 'route', 'status'] as const;

export interface Metrics {
  registry: Registry;
  /** Counts and times every request; install before anything that can answer. */
  middleware: RequestHandler;
}

/**
 * The route template that answered (`/status/:session_id`), never the raw path: raw paths
 * carry session ids and would give every session its own series. Requests the contract
 * validator rejected before routing still carry the contract's template; anything else
 * is `unmatched`.
 */
export function routeLabel(req: Request): string {
  const routePath: unknown = req.route?.path;
  if (typeof routePath === 'string') return `${req.baseUrl}${routePath}`;
  const expressRoute = (req as Request & { openapi?: { expressRoute?: unknown } }).openapi?.expressRoute;
  if (typeof expressRoute === 'string') return expressRoute;
  return 'unmatched';
}

export function createMetrics(upstreamCounters: () => EntityStateCounters | null, streamCounters: () => StreamCounters, scriptCounters: () => ScriptCounters): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = new Counter({
    name: 'mud_http_requests_total',
    help: 'HTTP requests by method, route template and status.',
    labelNames: LABELS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'mud_http_request_duration_seconds',
    help: 'HTTP request duration in seconds by method, route template and status.',
    labelNames: LABELS,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  for (const key of UPSTREAM_COUNTERS) {
    new Counter({
      name: `mud_condition_axis_upstream_${key}`,
      help: `Entity-state upstream (condition-axis generation) ${key.replace(/_total$/, '').replace(/_/g, ' ')}; 0 while the integration is builtin.`,
      registers: [registry],
      // Read from the client at scrape time; the client owns the running totals.
      collect() {
        this.reset();
        const value = upstreamCounters()?.[key] ?? 0;
        if (value > 0) this.inc(value);
      },
    });
  }

  // GET /events: the streams own their running totals, as the upstream client does.
  new Gauge({
    name: 'mud_event_streams_open',
    help: 'Event streams open on this instance (GET /events, and the telnet door\'s playing connections).',
    registers: [registry],
    collect() {
      this.set(streamCounters().open);
    },
  });
  new Gauge({
    name: 'mud_event_stream_backlog_bytes',
    help: 'Bytes written to event streams that their clients have not read yet, over all streams of this instance.',
    registers: [registry],
    collect() {
      this.set(streamCounters().backlogBytes);
    },
  });
  // The streams' bookkeeping, so a stream left behind by its close shows as a level that only
  // grows (with no stream open, every index is empty; test/integration/event-stream-churn.test.ts).
  new Gauge({
    name: 'mud_event_stream_index_keys',
    help: 'Keys of the event streams\' indexes on this instance, by index (session, world, room, character).',
    labelNames: ['index'],
    registers: [registry],
    collect() {
      for (const [index, size] of Object.entries(streamCounters().indexes)) this.set({ index }, size.keys);
    },
  });
  new Gauge({
    name: 'mud_event_stream_index_streams',
    help: 'Streams held by the event streams\' indexes on this instance, over all keys of each index (each open stream once per index).',
    labelNames: ['index'],
    registers: [registry],
    collect() {
      for (const [index, size] of Object.entries(streamCounters().indexes)) this.set({ index }, size.streams);
    },
  });
  new Gauge({
    name: 'mud_event_stream_leases_pending',
    help: 'Sessions whose streams opened or closed on this instance since its last write of their leases.',
    registers: [registry],
    collect() {
      this.set(streamCounters().leasesPending);
    },
  });
  new Gauge({
    name: 'mud_event_stream_leased_sessions',
    help: 'Sessions this instance holds a stream lease for (it has open streams of them).',
    registers: [registry],
    collect() {
      this.set(streamCounters().leasedSessions);
    },
  });
  new Gauge({
    name: 'mud_event_stream_linkdead_told',
    help: 'Characters the event streams of this instance heard told link-dead and not back since.',
    registers: [registry],
    collect() {
      this.set(streamCounters().linkdeadTold);
    },
  });
  new Counter({
    name: 'mud_event_stream_events_sent_total',
    help: 'Events sent on event streams (heartbeats not counted).',
    registers: [registry],
    collect() {
      this.reset();
      const sent = streamCounters().eventsSent;
      if (sent > 0) this.inc(sent);
    },
  });
  new Counter({
    name: 'mud_event_streams_ended_total',
    help: 'Event streams the server ended, by reason (not those the client closed).',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(streamCounters().endedByReason)) if (count > 0) this.inc({ reason }, count);
    },
  });

  // Builders' scripts run on this instance (src/services/scripts/).
  new Counter({
    name: 'mud_script_runs_total',
    help: "Runs of builders' scripts on this instance, by outcome (ok, the error kind that ended the run, or budget, shed or changed for one that never ran).",
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [outcome, count] of Object.entries(scriptCounters().runsByOutcome)) if (count > 0) this.inc({ outcome }, count);
    },
  });
  new Counter({
    name: 'mud_script_run_seconds_total',
    help: "Wall time builders' scripts ran in their sandboxes on this instance, seconds.",
    registers: [registry],
    collect() {
      this.reset();
      const seconds = scriptCounters().runSeconds;
      if (seconds > 0) this.inc(seconds);
    },
  });
  new Gauge({
    name: 'mud_script_runs_queued',
    help: "Runs of builders' scripts waiting in the worlds' queues on this instance ([scripts] queue_per_world each).",
    registers: [registry],
    collect() {
      this.set(scriptCounters().queued);
    },
  });

  const middleware: RequestHandler = (req, res, next) => {
    const stopTimer = duration.startTimer();
    res.once('close', () => {
      const labels = { method: req.method, route: routeLabel(req), status: String(res.statusCode) };
      requests.inc(labels);
      stopTimer(labels);
    });
    next();
  };

  return { registry, middleware };
}

export interface MetricsRouterDeps {
  mode: MetricsMode;
  /** Absent when the mode is off. */
  metrics: Metrics | null;
  sessions: SessionService;
}

export function metricsRouter({ mode, metrics, sessions }: MetricsRouterDeps): Router {
  const router = Router();
  router.get('/metrics', async (req, res) => {
    if (mode === 'off' || metrics === null) throw new HttpError(404, 'Not Found');
    if (mode === 'admin') {
      const session = await sessions.validate(presentedSessionId(req, 'query'));
      if (rank(session.role) < rank('admin')) throw new HttpError(403, METRICS_FORBIDDEN);
    }
    const text = await metrics.registry.metrics();
    res.status(200).type(metrics.registry.contentType).send(text);
  });
  return router;
}
