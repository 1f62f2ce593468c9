/**
 * Every operation of the API guide (docs/api.md) and the README, named, written with the generated
 * `graphql()` so that each one's result and variables are typed. `npm run generate` turns this file
 * into src/gql/ and the persisted documents manifest: add or change an operation here, then run it.
 */
import { graphql } from './gql/index.ts';

/** README's first query and the API guide's first example: the banner of a status widget. */
export const StatusBanner = graphql(`
  query StatusBanner {
    statusPage {
      status {
        indicator
        description
      }
      fetchedAt
    }
  }
`);

/** The smallest useful query: the banner's indicator alone (the benchmark's tiny query). */
export const StatusIndicator = graphql(`
  query StatusIndicator {
    statusPage {
      status {
        indicator
      }
    }
  }
`);

/** The component tree, groups first, with what is wrong. */
export const ComponentTree = graphql(`
  query ComponentTree {
    statusPage {
      components(topLevel: true) {
        name
        status
        children {
          name
          status
        }
      }
    }
  }
`);

/** Only what is not operational, anywhere in the tree, with its group and incidents. */
export const ComponentProblems = graphql(`
  query ComponentProblems {
    statusPage {
      components(status: [DEGRADED_PERFORMANCE, PARTIAL_OUTAGE, MAJOR_OUTAGE]) {
        name
        status
        group {
          name
        }
        incidents {
          name
          status
          updates {
            body
            displayAt
          }
        }
      }
    }
  }
`);

/** One component by id (an unknown id gives `null`). */
export const ComponentById = graphql(`
  query ComponentById($id: ID!) {
    component(id: $id) {
      name
      status
      group {
        name
      }
      maintenances {
        name
        scheduledFor
        scheduledUntil
      }
    }
  }
`);

/** One incident by id, resolved ones included (an unknown id gives `null`). */
export const IncidentById = graphql(`
  query IncidentById($id: ID!) {
    incident(id: $id) {
      name
      status
      impact
      shortlink
      resolvedAt
      updates {
        status
        body
        displayAt
      }
    }
  }
`);

/** One maintenance by id, completed ones included (an unknown id gives `null`). */
export const MaintenanceById = graphql(`
  query MaintenanceById($id: ID!) {
    maintenance(id: $id) {
      name
      status
      impact
      shortlink
      scheduledFor
      scheduledUntil
    }
  }
`);

/** Incidents and maintenances through the `StatusEvent` interface: one fragment renders both. */
export const CurrentEvents = graphql(`
  fragment EventCard on StatusEvent {
    name
    impact
    shortlink
    updates {
      status
      body
      displayAt
    }
  }

  query CurrentEvents {
    statusPage {
      incidents {
        ...EventCard
        status
      }
      upcomingMaintenances {
        ...EventCard
        status
        scheduledFor
      }
    }
  }
`);

/** Past incidents and maintenances, as a status page shows them under "Past incidents". */
export const EventHistory = graphql(`
  query EventHistory {
    statusPage {
      incidentHistory {
        name
        status
        impact
        resolvedAt
        components {
          name
          group {
            name
          }
        }
      }
      maintenanceHistory {
        name
        status
        scheduledFor
        scheduledUntil
      }
    }
  }
`);

/**
 * Verifies a deployed contract (the API guide's `verifyContract`, with its input as a variable).
 * Expected failures are results: switch on `__typename`.
 */
export const VerifyContract = graphql(`
  mutation VerifyContract($input: VerifyContractInput!) {
    verifyContract(input: $input) {
      __typename
      ... on VerificationResult {
        contracts {
          name
          address
          chainId
          status
          compilerVersion
          files {
            found
            missing
          }
          storageTimestamp
        }
        unused
      }
      ... on VerificationPending {
        verificationId
        startedAt
      }
      ... on InvalidInputError {
        field
        message
      }
      ... on VerificationRejectedError {
        status
        message
      }
      ... on RateLimitedError {
        retryAfterSeconds
        message
      }
      ... on Error {
        message
      }
    }
  }
`);

/** Polls an APIv2 verification job that `verifyContract` answered as `VerificationPending`. */
export const VerificationJob = graphql(`
  query VerificationJob($id: ID!) {
    verificationJob(id: $id) {
      __typename
      ... on VerificationPending {
        startedAt
      }
      ... on VerificationResult {
        alreadyVerified
        contracts {
          address
          status
          storageTimestamp
        }
      }
      ... on Error {
        message
      }
    }
  }
`);

/** A contract's source verification (null when it is not verified). */
export const ContractLookup = graphql(`
  query ContractLookup($chainId: String!, $address: String!) {
    contract(chainId: $chainId, address: $address) {
      chainId
      address
      verified
      match
      creationMatch
      runtimeMatch
      verifiedAt
      matchId
      name
      compilerVersion
    }
  }
`);

/** The chains the verification service verifies contracts on. */
export const SupportedChains = graphql(`
  query SupportedChains {
    supportedChains {
      id
      name
      supportsExplorerVerification
    }
  }
`);

/** The whole status page in one operation: GraphiQL's opening query, from the gateway itself. */
export { PageTreeDocument as PageTree } from './gql/graphql.ts';
