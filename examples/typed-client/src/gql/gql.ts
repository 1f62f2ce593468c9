/* eslint-disable */
import * as types from './graphql.ts';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query StatusBanner {\n    statusPage {\n      status {\n        indicator\n        description\n      }\n      fetchedAt\n    }\n  }\n": typeof types.StatusBannerDocument,
    "\n  query StatusIndicator {\n    statusPage {\n      status {\n        indicator\n      }\n    }\n  }\n": typeof types.StatusIndicatorDocument,
    "\n  query ComponentTree {\n    statusPage {\n      components(topLevel: true) {\n        name\n        status\n        children {\n          name\n          status\n        }\n      }\n    }\n  }\n": typeof types.ComponentTreeDocument,
    "\n  query ComponentProblems {\n    statusPage {\n      components(status: [DEGRADED_PERFORMANCE, PARTIAL_OUTAGE, MAJOR_OUTAGE]) {\n        name\n        status\n        group {\n          name\n        }\n        incidents {\n          name\n          status\n          updates {\n            body\n            displayAt\n          }\n        }\n      }\n    }\n  }\n": typeof types.ComponentProblemsDocument,
    "\n  query ComponentById($id: ID!) {\n    component(id: $id) {\n      name\n      status\n      group {\n        name\n      }\n      maintenances {\n        name\n        scheduledFor\n        scheduledUntil\n      }\n    }\n  }\n": typeof types.ComponentByIdDocument,
    "\n  query IncidentById($id: ID!) {\n    incident(id: $id) {\n      name\n      status\n      impact\n      shortlink\n      resolvedAt\n      updates {\n        status\n        body\n        displayAt\n      }\n    }\n  }\n": typeof types.IncidentByIdDocument,
    "\n  query MaintenanceById($id: ID!) {\n    maintenance(id: $id) {\n      name\n      status\n      impact\n      shortlink\n      scheduledFor\n      scheduledUntil\n    }\n  }\n": typeof types.MaintenanceByIdDocument,
    "\n  fragment EventCard on StatusEvent {\n    name\n    impact\n    shortlink\n    updates {\n      status\n      body\n      displayAt\n    }\n  }\n\n  query CurrentEvents {\n    statusPage {\n      incidents {\n        ...EventCard\n        status\n      }\n      upcomingMaintenances {\n        ...EventCard\n        status\n        scheduledFor\n      }\n    }\n  }\n": typeof types.EventCardFragmentDoc,
    "\n  query EventHistory {\n    statusPage {\n      incidentHistory {\n        name\n        status\n        impact\n        resolvedAt\n        components {\n          name\n          group {\n            name\n          }\n        }\n      }\n      maintenanceHistory {\n        name\n        status\n        scheduledFor\n        scheduledUntil\n      }\n    }\n  }\n": typeof types.EventHistoryDocument,
    "\n  mutation VerifyContract($input: VerifyContractInput!) {\n    verifyContract(input: $input) {\n      __typename\n      ... on VerificationResult {\n        contracts {\n          name\n          address\n          chainId\n          status\n          compilerVersion\n          files {\n            found\n            missing\n          }\n          storageTimestamp\n        }\n        unused\n      }\n      ... on VerificationPending {\n        verificationId\n        startedAt\n      }\n      ... on InvalidInputError {\n        field\n        message\n      }\n      ... on VerificationRejectedError {\n        status\n        message\n      }\n      ... on RateLimitedError {\n        retryAfterSeconds\n        message\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n": typeof types.VerifyContractDocument,
    "\n  query VerificationJob($id: ID!) {\n    verificationJob(id: $id) {\n      __typename\n      ... on VerificationPending {\n        startedAt\n      }\n      ... on VerificationResult {\n        alreadyVerified\n        contracts {\n          address\n          status\n          storageTimestamp\n        }\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n": typeof types.VerificationJobDocument,
    "\n  query ContractLookup($chainId: String!, $address: String!) {\n    contract(chainId: $chainId, address: $address) {\n      chainId\n      address\n      verified\n      match\n      creationMatch\n      runtimeMatch\n      verifiedAt\n      matchId\n      name\n      compilerVersion\n    }\n  }\n": typeof types.ContractLookupDocument,
    "\n  query SupportedChains {\n    supportedChains {\n      id\n      name\n      supportsExplorerVerification\n    }\n  }\n": typeof types.SupportedChainsDocument,
    "# The whole status page in one round trip. Press ▶ to run it.\nquery PageTree {\n  statusPage {\n    name\n    url\n    fetchedAt\n    status {\n      indicator\n      description\n    }\n    components(topLevel: true) {\n      ...ComponentSummary\n      children {\n        ...ComponentSummary\n      }\n    }\n    incidents {\n      ...EventSummary\n      status\n      updates {\n        status\n        body\n        displayAt\n      }\n    }\n    scheduledMaintenances {\n      ...EventSummary\n      status\n      scheduledFor\n      scheduledUntil\n    }\n    upcomingMaintenances {\n      ...EventSummary\n      status\n      scheduledFor\n      scheduledUntil\n    }\n  }\n}\n\nfragment ComponentSummary on Component {\n  id\n  name\n  status\n  isGroup\n}\n\nfragment EventSummary on StatusEvent {\n  id\n  name\n  impact\n  shortlink\n  components {\n    id\n    name\n    group {\n      name\n    }\n  }\n}\n": typeof types.PageTreeDocument,
};
const documents: Documents = {
    "\n  query StatusBanner {\n    statusPage {\n      status {\n        indicator\n        description\n      }\n      fetchedAt\n    }\n  }\n": types.StatusBannerDocument,
    "\n  query StatusIndicator {\n    statusPage {\n      status {\n        indicator\n      }\n    }\n  }\n": types.StatusIndicatorDocument,
    "\n  query ComponentTree {\n    statusPage {\n      components(topLevel: true) {\n        name\n        status\n        children {\n          name\n          status\n        }\n      }\n    }\n  }\n": types.ComponentTreeDocument,
    "\n  query ComponentProblems {\n    statusPage {\n      components(status: [DEGRADED_PERFORMANCE, PARTIAL_OUTAGE, MAJOR_OUTAGE]) {\n        name\n        status\n        group {\n          name\n        }\n        incidents {\n          name\n          status\n          updates {\n            body\n            displayAt\n          }\n        }\n      }\n    }\n  }\n": types.ComponentProblemsDocument,
    "\n  query ComponentById($id: ID!) {\n    component(id: $id) {\n      name\n      status\n      group {\n        name\n      }\n      maintenances {\n        name\n        scheduledFor\n        scheduledUntil\n      }\n    }\n  }\n": types.ComponentByIdDocument,
    "\n  query IncidentById($id: ID!) {\n    incident(id: $id) {\n      name\n      status\n      impact\n      shortlink\n      resolvedAt\n      updates {\n        status\n        body\n        displayAt\n      }\n    }\n  }\n": types.IncidentByIdDocument,
    "\n  query MaintenanceById($id: ID!) {\n    maintenance(id: $id) {\n      name\n      status\n      impact\n      shortlink\n      scheduledFor\n      scheduledUntil\n    }\n  }\n": types.MaintenanceByIdDocument,
    "\n  fragment EventCard on StatusEvent {\n    name\n    impact\n    shortlink\n    updates {\n      status\n      body\n      displayAt\n    }\n  }\n\n  query CurrentEvents {\n    statusPage {\n      incidents {\n        ...EventCard\n        status\n      }\n      upcomingMaintenances {\n        ...EventCard\n        status\n        scheduledFor\n      }\n    }\n  }\n": types.EventCardFragmentDoc,
    "\n  query EventHistory {\n    statusPage {\n      incidentHistory {\n        name\n        status\n        impact\n        resolvedAt\n        components {\n          name\n          group {\n            name\n          }\n        }\n      }\n      maintenanceHistory {\n        name\n        status\n        scheduledFor\n        scheduledUntil\n      }\n    }\n  }\n": types.EventHistoryDocument,
    "\n  mutation VerifyContract($input: VerifyContractInput!) {\n    verifyContract(input: $input) {\n      __typename\n      ... on VerificationResult {\n        contracts {\n          name\n          address\n          chainId\n          status\n          compilerVersion\n          files {\n            found\n            missing\n          }\n          storageTimestamp\n        }\n        unused\n      }\n      ... on VerificationPending {\n        verificationId\n        startedAt\n      }\n      ... on InvalidInputError {\n        field\n        message\n      }\n      ... on VerificationRejectedError {\n        status\n        message\n      }\n      ... on RateLimitedError {\n        retryAfterSeconds\n        message\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n": types.VerifyContractDocument,
    "\n  query VerificationJob($id: ID!) {\n    verificationJob(id: $id) {\n      __typename\n      ... on VerificationPending {\n        startedAt\n      }\n      ... on VerificationResult {\n        alreadyVerified\n        contracts {\n          address\n          status\n          storageTimestamp\n        }\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n": types.VerificationJobDocument,
    "\n  query ContractLookup($chainId: String!, $address: String!) {\n    contract(chainId: $chainId, address: $address) {\n      chainId\n      address\n      verified\n      match\n      creationMatch\n      runtimeMatch\n      verifiedAt\n      matchId\n      name\n      compilerVersion\n    }\n  }\n": types.ContractLookupDocument,
    "\n  query SupportedChains {\n    supportedChains {\n      id\n      name\n      supportsExplorerVerification\n    }\n  }\n": types.SupportedChainsDocument,
    "# The whole status page in one round trip. Press ▶ to run it.\nquery PageTree {\n  statusPage {\n    name\n    url\n    fetchedAt\n    status {\n      indicator\n      description\n    }\n    components(topLevel: true) {\n      ...ComponentSummary\n      children {\n        ...ComponentSummary\n      }\n    }\n    incidents {\n      ...EventSummary\n      status\n      updates {\n        status\n        body\n        displayAt\n      }\n    }\n    scheduledMaintenances {\n      ...EventSummary\n      status\n      scheduledFor\n      scheduledUntil\n    }\n    upcomingMaintenances {\n      ...EventSummary\n      status\n      scheduledFor\n      scheduledUntil\n    }\n  }\n}\n\nfragment ComponentSummary on Component {\n  id\n  name\n  status\n  isGroup\n}\n\nfragment EventSummary on StatusEvent {\n  id\n  name\n  impact\n  shortlink\n  components {\n    id\n    name\n    group {\n      name\n    }\n  }\n}\n": types.PageTreeDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query StatusBanner {\n    statusPage {\n      status {\n        indicator\n        description\n      }\n      fetchedAt\n    }\n  }\n"): (typeof documents)["\n  query StatusBanner {\n    statusPage {\n      status {\n        indicator\n        description\n      }\n      fetchedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query StatusIndicator {\n    statusPage {\n      status {\n        indicator\n      }\n    }\n  }\n"): (typeof documents)["\n  query StatusIndicator {\n    statusPage {\n      status {\n        indicator\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ComponentTree {\n    statusPage {\n      components(topLevel: true) {\n        name\n        status\n        children {\n          name\n          status\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ComponentTree {\n    statusPage {\n      components(topLevel: true) {\n        name\n        status\n        children {\n          name\n          status\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ComponentProblems {\n    statusPage {\n      components(status: [DEGRADED_PERFORMANCE, PARTIAL_OUTAGE, MAJOR_OUTAGE]) {\n        name\n        status\n        group {\n          name\n        }\n        incidents {\n          name\n          status\n          updates {\n            body\n            displayAt\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ComponentProblems {\n    statusPage {\n      components(status: [DEGRADED_PERFORMANCE, PARTIAL_OUTAGE, MAJOR_OUTAGE]) {\n        name\n        status\n        group {\n          name\n        }\n        incidents {\n          name\n          status\n          updates {\n            body\n            displayAt\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ComponentById($id: ID!) {\n    component(id: $id) {\n      name\n      status\n      group {\n        name\n      }\n      maintenances {\n        name\n        scheduledFor\n        scheduledUntil\n      }\n    }\n  }\n"): (typeof documents)["\n  query ComponentById($id: ID!) {\n    component(id: $id) {\n      name\n      status\n      group {\n        name\n      }\n      maintenances {\n        name\n        scheduledFor\n        scheduledUntil\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query IncidentById($id: ID!) {\n    incident(id: $id) {\n      name\n      status\n      impact\n      shortlink\n      resolvedAt\n      updates {\n        status\n        body\n        displayAt\n      }\n    }\n  }\n"): (typeof documents)["\n  query IncidentById($id: ID!) {\n    incident(id: $id) {\n      name\n      status\n      impact\n      shortlink\n      resolvedAt\n      updates {\n        status\n        body\n        displayAt\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query MaintenanceById($id: ID!) {\n    maintenance(id: $id) {\n      name\n      status\n      impact\n      shortlink\n      scheduledFor\n      scheduledUntil\n    }\n  }\n"): (typeof documents)["\n  query MaintenanceById($id: ID!) {\n    maintenance(id: $id) {\n      name\n      status\n      impact\n      shortlink\n      scheduledFor\n      scheduledUntil\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment EventCard on StatusEvent {\n    name\n    impact\n    shortlink\n    updates {\n      status\n      body\n      displayAt\n    }\n  }\n\n  query CurrentEvents {\n    statusPage {\n      incidents {\n        ...EventCard\n        status\n      }\n      upcomingMaintenances {\n        ...EventCard\n        status\n        scheduledFor\n      }\n    }\n  }\n"): (typeof documents)["\n  fragment EventCard on StatusEvent {\n    name\n    impact\n    shortlink\n    updates {\n      status\n      body\n      displayAt\n    }\n  }\n\n  query CurrentEvents {\n    statusPage {\n      incidents {\n        ...EventCard\n        status\n      }\n      upcomingMaintenances {\n        ...EventCard\n        status\n        scheduledFor\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query EventHistory {\n    statusPage {\n      incidentHistory {\n        name\n        status\n        impact\n        resolvedAt\n        components {\n          name\n          group {\n            name\n          }\n        }\n      }\n      maintenanceHistory {\n        name\n        status\n        scheduledFor\n        scheduledUntil\n      }\n    }\n  }\n"): (typeof documents)["\n  query EventHistory {\n    statusPage {\n      incidentHistory {\n        name\n        status\n        impact\n        resolvedAt\n        components {\n          name\n          group {\n            name\n          }\n        }\n      }\n      maintenanceHistory {\n        name\n        status\n        scheduledFor\n        scheduledUntil\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation VerifyContract($input: VerifyContractInput!) {\n    verifyContract(input: $input) {\n      __typename\n      ... on VerificationResult {\n        contracts {\n          name\n          address\n          chainId\n          status\n          compilerVersion\n          files {\n            found\n            missing\n          }\n          storageTimestamp\n        }\n        unused\n      }\n      ... on VerificationPending {\n        verificationId\n        startedAt\n      }\n      ... on InvalidInputError {\n        field\n        message\n      }\n      ... on VerificationRejectedError {\n        status\n        message\n      }\n      ... on RateLimitedError {\n        retryAfterSeconds\n        message\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation VerifyContract($input: VerifyContractInput!) {\n    verifyContract(input: $input) {\n      __typename\n      ... on VerificationResult {\n        contracts {\n          name\n          address\n          chainId\n          status\n          compilerVersion\n          files {\n            found\n            missing\n          }\n          storageTimestamp\n        }\n        unused\n      }\n      ... on VerificationPending {\n        verificationId\n        startedAt\n      }\n      ... on InvalidInputError {\n        field\n        message\n      }\n      ... on VerificationRejectedError {\n        status\n        message\n      }\n      ... on RateLimitedError {\n        retryAfterSeconds\n        message\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query VerificationJob($id: ID!) {\n    verificationJob(id: $id) {\n      __typename\n      ... on VerificationPending {\n        startedAt\n      }\n      ... on VerificationResult {\n        alreadyVerified\n        contracts {\n          address\n          status\n          storageTimestamp\n        }\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n"): (typeof documents)["\n  query VerificationJob($id: ID!) {\n    verificationJob(id: $id) {\n      __typename\n      ... on VerificationPending {\n        startedAt\n      }\n      ... on VerificationResult {\n        alreadyVerified\n        contracts {\n          address\n          status\n          storageTimestamp\n        }\n      }\n      ... on Error {\n        message\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ContractLookup($chainId: String!, $address: String!) {\n    contract(chainId: $chainId, address: $address) {\n      chainId\n      address\n      verified\n      match\n      creationMatch\n      runtimeMatch\n      verifiedAt\n      matchId\n      name\n      compilerVersion\n    }\n  }\n"): (typeof documents)["\n  query ContractLookup($chainId: String!, $address: String!) {\n    contract(chainId: $chainId, address: $address) {\n      chainId\n      address\n      verified\n      match\n      creationMatch\n      runtimeMatch\n      verifiedAt\n      matchId\n      name\n      compilerVersion\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SupportedChains {\n    supportedChains {\n      id\n      name\n      supportsExplorerVerification\n    }\n  }\n"): (typeof documents)["\n  query SupportedChains {\n    supportedChains {\n      id\n      name\n      supportsExplorerVerification\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "# The whole status page in one round trip. Press ▶ to run it.\nquery PageTree {\n  statusPage {\n    name\n    url\n    fetchedAt\n    status {\n      indicator\n      description\n    }\n    components(topLevel: true) {\n      ...ComponentSummary\n      children {\n        ...ComponentSummary\n      }\n    }\n    incidents {\n      ...EventSummary\n      status\n      updates {\n        status\n        body\n        displayAt\n      }\n    }\n    scheduledMaintenances {\n      ...EventSummary\n      status\n      scheduledFor\n      scheduledUntil\n    }\n    upcomingMaintenances {\n      ...EventSummary\n      status\n      scheduledFor\n      scheduledUntil\n    }\n  }\n}\n\nfragment ComponentSummary on Component {\n  id\n  name\n  status\n  isGroup\n}\n\nfragment EventSummary on StatusEvent {\n  id\n  name\n  impact\n  shortlink\n  components {\n    id\n    name\n    group {\n      name\n    }\n  }\n}\n"): (typeof documents)["# The whole status page in one round trip. Press ▶ to run it.\nquery PageTree {\n  statusPage {\n    name\n    url\n    fetchedAt\n    status {\n      indicator\n      description\n    }\n    components(topLevel: true) {\n      ...ComponentSummary\n      children {\n        ...ComponentSummary\n      }\n    }\n    incidents {\n      ...EventSummary\n      status\n      updates {\n        status\n        body\n        displayAt\n      }\n    }\n    scheduledMaintenances {\n      ...EventSummary\n      status\n      scheduledFor\n      scheduledUntil\n    }\n    upcomingMaintenances {\n      ...EventSummary\n      status\n      scheduledFor\n      scheduledUntil\n    }\n  }\n}\n\nfragment ComponentSummary on Component {\n  id\n  name\n  status\n  isGroup\n}\n\nfragment EventSummary on StatusEvent {\n  id\n  name\n  impact\n  shortlink\n  components {\n    id\n    name\n    group {\n      name\n    }\n  }\n}\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;