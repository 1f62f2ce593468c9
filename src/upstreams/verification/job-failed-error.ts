import { VerificationRejectedError } from '../../errors/verification-rejected-error.js';
import type { VerificationJob } from './model.js';

/** The HTTP status reported for an APIv2 job that ran and failed (the poll itself answered 200). */
export const FAILED_JOB_STATUS = 422;

/**
 * An APIv2 job that ran and failed (`isJobCompleted` with an `error`): the service's reason, and
 * the job with everything it reported (the bytecodes compared, compiler errors, timings).
 */
export class JobFailedError extends VerificationRejectedError {
  readonly job: VerificationJob;

  constructor(message: string, job: VerificationJob) {
    super(message, FAILED_JOB_STATUS, {
      upstreamCode: job.error?.code,
      errorId: job.error?.errorId ?? undefined,
    });
    this.job = job;
  }
}
