/**
 * What a service refuses or fails with, named by meaning. Services never pick an HTTP status:
 * the HTTP layer's error mapper gives each class one (and decides what is worth logging).
 */

export interface DomainErrorOptions {
  /** Body fields beside `detail` (policy and condition-axis errors carry `code` and `stage`). */
  extra?: Record<string, unknown>;
  /** What went wrong underneath: logged, never sent to the client. */
  cause?: unknown;
}

export abstract class DomainError extends Error {
  readonly extra: Readonly<Record<string, unknown>>;

  /** `detail` is the readable message the client receives. */
  constructor(detail: string, options: DomainErrorOptions = {}) {
    super(detail, { cause: options.cause });
    this.name = new.target.name;
    this.extra = options.extra ?? {};
  }
}

/** Any concrete domain error class, for helpers that attach fields to one. */
export type DomainErrorKind = new (detail: string, options?: DomainErrorOptions) => DomainError;

/** The request cannot be accepted as sent: a missing field, a bad value, a name already taken. */
export class InvalidInput extends DomainError {}

/** No valid credentials or session. */
export class Unauthenticated extends DomainError {}

/** Known caller, not allowed to do this. */
export class Forbidden extends DomainError {}

export class NotFound extends DomainError {}

/** The request is valid but clashes with the current state (taken, inactive, no slot left). */
export class Conflict extends DomainError {}

/** Too many attempts of one kind in a short time; the client may try again after `retryAfterSeconds`. */
export class TooManyRequests extends DomainError {
  readonly retryAfterSeconds: number;

  constructor(what: string, retryAfterSeconds: number) {
    super(`Too many ${what}. Try again in ${retryAfterSeconds} seconds.`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Well-formed but semantically invalid content (policy and condition-axis validation). */
export class Unprocessable extends DomainError {}

/** A feature that is switched off or not configured here. */
export class FeatureUnavailable extends DomainError {}

/** A feature that cannot be offered at all in the current configuration or policy state. */
export class FeatureUnsupported extends FeatureUnavailable {}

/** An upstream service answered with an error or with something unusable. */
export class UpstreamFailed extends DomainError {}

/** An upstream service did not answer in time. */
export class UpstreamTimeout extends DomainError {}

/** Something that should not happen did (a write failed, state is inconsistent): our fault. */
export class Failure extends DomainError {}
