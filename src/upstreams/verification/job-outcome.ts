import { VerificationRejectedError } from '../../errors/verification-rejected-error.js';
import { errorFor, jobEndpoint } from './apiv2-errors.js';
import type { ContractCache } from './contract-cache.js';
import type {
  Contract,
  VerificationJob,
  VerificationOutcome,
  VerificationPending,
  VerificationResult,
} from './model.js';
import { toContract, toJob } from './v2-model.js';
import type { WireV2Job } from './wire-v2.js';

export interface JobOutcomesOptions {
  /** `VERIFY_JOB_STALE_MS`: a job running longer is reported stale. */
  readonly staleMs: number;
  /** The service's contract lookup, for a job that found the contract already verified. */
  readonly lookUp: ContractCache['get'];
}

/** What an APIv2 job means for the caller: a result, still pending (stale or not), or an error. */
export type JobOutcomes = ReturnType<typeof createJobOutcomes>;

export function createJobOutcomes({ staleMs, lookUp }: JobOutcomesOptions) {
  /** A job known by its id and start only (the gateway stopped waiting before it saw more). */
  function pending(
    verificationId: string,
    startedAt: Date | null,
    job: VerificationJob | null,
  ): VerificationPending {
    const runningMs = startedAt === null ? 0 : Date.now() - startedAt.getTime();
    const stale = startedAt !== null && runningMs > staleMs;
    return {
      kind: 'pending',
      verificationId,
      startedAt,
      stale,
      message: stale ? staleMessage(runningMs, staleMs) : RUNNING_MESSAGE,
      job,
    };
  }

  /** The answer for a contract the service already had verified: the existing match. */
  async function alreadyVerified(
    chainId: string,
    address: string,
    requestId: string | undefined,
    job: VerificationJob | null,
  ): Promise<VerificationResult> {
    const existing = await lookUp(chainId, address, requestId);
    return resultOf(existing?.matchId ?? `${chainId}:${address}`, existing, true, job);
  }

  return {
    pending,
    alreadyVerified,
    /**
     * The outcome of a job as the service reports it. Rejects with the error a failed job stands
     * for (`JobFailedError` with the job, or the error type of its code).
     */
    async outcomeOf(
      wire: WireV2Job,
      apiKey: string | undefined,
      requestId: string | undefined,
    ): Promise<VerificationOutcome> {
      const job = toJob(wire, apiKey);
      if (!wire.isJobCompleted) return pending(wire.verificationId, wire.jobStartTime, job);
      const { error, contract } = wire;
      if (error) {
        if (error.customCode === 'already_verified' && contract) {
          return alreadyVerified(contract.chainId, contract.address, requestId, job);
        }
        throw errorFor(
          error,
          FAILED_JOB_STATUS,
          null,
          apiKey,
          jobEndpoint(wire.verificationId),
          (message) => new JobFailedError(message, job),
        );
      }
      if (!contract) {
        throw new VerificationRejectedError(
          'The verification job finished without a result.',
          FAILED_JOB_STATUS,
        );
      }
      return resultOf(wire.verificationId, toContract(contract), false, job);
    },
  };
}

/** What to tell the user about a job still running in time. */
const RUNNING_MESSAGE =
  'The verification job is still running: follow it with verificationJobChanged(id:), or ask verificationJob(id:) later.';

/**
 * What to tell the user about a job running too long: Sourcify has left jobs "running" for hours
 * (argotorg/sourcify#2880), cannot cancel one, and refuses the contract again while it runs.
 */
function staleMessage(runningMs: number, staleMs: number): string {
  const duration = (ms: number) =>
    ms >= 60_000 ? `${Math.floor(ms / 60_000)} min` : `${Math.floor(ms / 1000)} s`;
  return `This verification job has been running for ${duration(runningMs)}, longer than the ${duration(staleMs)} a job is expected to take: the service may have lost it. It cannot be cancelled, and the service refuses the same contract again (duplicate_verification_request) while it runs. Check contract(chainId:, address:) to see whether the contract got verified anyway; otherwise wait for the service to give the job up (it then fails with job_abandoned) and submit again, or report the job id to the service's maintainers.`;
}

/**
 * An APIv2 answer as a `VerificationResult`: the match, address, chain and time APIv2 reports,
 * and the compilation when the contract was looked up (an already verified one); the fields only
 * the session API reports are null, not made up.
 */
function resultOf(
  verificationId: string,
  contract: Contract | null,
  alreadyVerified: boolean,
  job: VerificationJob | null,
): VerificationResult {
  return {
    kind: 'result',
    alreadyVerified,
    unused: [],
    job,
    contracts: contract
      ? [
          {
            verificationId,
            compiledPath: contract.compilation?.compiledPath ?? null,
            name: contract.compilation?.name ?? null,
            compilerVersion: contract.compilation?.compilerVersion ?? null,
            address: contract.address,
            chainId: contract.chainId,
            files: null,
            status: contract.match ?? 'UNKNOWN',
            statusMessage: null,
            storageTimestamp: contract.verifiedAt,
          },
        ]
      : [],
  };
}

/** The HTTP status reported for an APIv2 job that ran and failed (the poll itself answered 200). */
const FAILED_JOB_STATUS = 422;

/**
 * An APIv2 job that ran and failed (`isJobCompleted` with an `error`): the service's reason, and
 * the job with everything it reported (the bytecodes compared, compiler errors, timings).
 */
class JobFailedError extends VerificationRejectedError {
  readonly job: VerificationJob;

  constructor(message: string, job: VerificationJob) {
    super(message, FAILED_JOB_STATUS, {
      upstreamCode: job.error?.code,
      errorId: job.error?.errorId ?? undefined,
    });
    this.job = job;
  }
}
