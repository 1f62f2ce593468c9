/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** How a component is doing right now, best first. */
export type ComponentStatus =
  /** Working, but slower or less reliable than usual. */
  | 'DEGRADED_PERFORMANCE'
  /** Not working. */
  | 'MAJOR_OUTAGE'
  /** Working normally. */
  | 'OPERATIONAL'
  /** Failing for some users or some requests. */
  | 'PARTIAL_OUTAGE'
  /** Taken down or limited on purpose for maintenance. */
  | 'UNDER_MAINTENANCE'
  /** The feed sent a status this gateway does not know yet. Show it as neutral rather than failing. */
  | 'UNKNOWN';

/** A block explorer the verification service can fetch verified sources from. */
export type Explorer =
  /** Etherscan, or an Etherscan-compatible explorer of the chain. */
  | 'ETHERSCAN';

/** How much an incident or maintenance affects users, least first. */
export type Impact =
  /** The network or a core service is down for everyone. */
  | 'CRITICAL'
  /** Planned maintenance. */
  | 'MAINTENANCE'
  /** Many users are affected, or a service is down. */
  | 'MAJOR'
  /** Some users or requests are affected. */
  | 'MINOR'
  /** No noticeable effect. */
  | 'NONE'
  /** The feed sent an impact this gateway does not know yet. */
  | 'UNKNOWN';

/** Where an incident stands, in the order it usually moves. */
export type IncidentStatus =
  /** The cause is known and a fix is under way. */
  | 'IDENTIFIED'
  /** The cause is being looked for. */
  | 'INVESTIGATING'
  /** A fix is in place and being watched. */
  | 'MONITORING'
  /** Over, and a write-up of what happened was posted. */
  | 'POSTMORTEM'
  /** Over. */
  | 'RESOLVED'
  /** The feed sent a status this gateway does not know yet. */
  | 'UNKNOWN';

/** The status an incident or a maintenance had when an update was posted: incident values first, then maintenance values. */
export type IncidentUpdateStatus =
  /** Maintenance: over. */
  | 'COMPLETED'
  /** Incident: the cause is known and a fix is under way. */
  | 'IDENTIFIED'
  /** Incident: the cause is being looked for. */
  | 'INVESTIGATING'
  /** Maintenance: under way. */
  | 'IN_PROGRESS'
  /** Incident: a fix is in place and being watched. */
  | 'MONITORING'
  /** Incident: over, and a write-up of what happened was posted. */
  | 'POSTMORTEM'
  /** Incident: over. */
  | 'RESOLVED'
  /** Maintenance: planned, not started. */
  | 'SCHEDULED'
  /** The feed sent a status this gateway does not know yet. */
  | 'UNKNOWN'
  /** Maintenance: done, results being checked. */
  | 'VERIFYING';

/** Where a maintenance stands, in the order it moves. */
export type MaintenanceStatus =
  /** Over. */
  | 'COMPLETED'
  /** Under way. */
  | 'IN_PROGRESS'
  /** Planned, not started. */
  | 'SCHEDULED'
  /** The feed sent a status this gateway does not know yet. */
  | 'UNKNOWN'
  /** Done; the results are being checked. */
  | 'VERIFYING';

/** The overall state of the page, worst first: what the banner at the top shows. */
export type StatusIndicator =
  /** A critical outage: the network or a core service is down. */
  | 'CRITICAL'
  /** Maintenance is in progress. */
  | 'MAINTENANCE'
  /** A major outage of at least one component. */
  | 'MAJOR'
  /** A minor outage or degraded performance somewhere. */
  | 'MINOR'
  /** All systems operational. */
  | 'NONE'
  /** The feed sent a value this gateway does not know yet. Show a neutral state rather than failing. */
  | 'UNKNOWN';

/** How well the deployed bytecode matches the compiled sources. */
export type VerificationStatus =
  /** Verification failed; see `statusMessage`. */
  | 'ERROR'
  /** Compiled with a Solidity version that added files to its input by mistake; verifiable only with those files. */
  | 'EXTRA_FILE_INPUT_BUG'
  /** The bytecode matches but the metadata differs, e.g. comments or file names. APIv2 calls it `match`. */
  | 'PARTIAL'
  /** Full match: bytecode and metadata (so comments and file names too) match. APIv2 calls it `exact_match`. */
  | 'PERFECT'
  /** The service sent a status this gateway does not know yet. */
  | 'UNKNOWN';

/** A deployed contract to verify from its verified sources on a block explorer. */
export type VerifyContractInput = {
  /** The contract's address: 0x and 40 hex digits. Mixed case must be a valid EIP-55 checksum. */
  address: string;
  /** Your API key for the explorer, if the service needs one. Sent to the verification service only; never stored, logged or returned. */
  apiKey?: string | null | undefined;
  /** Decimal id of the chain it is deployed on, e.g. "1". See `supportedChains`. */
  chainId: string;
  /** The explorer to fetch the sources from. */
  explorer?: Explorer;
};

export type StatusBannerQueryVariables = Exact<{ [key: string]: never; }>;


export type StatusBannerQuery = { statusPage: { fetchedAt: string, status: { indicator: StatusIndicator, description: string } } };

export type StatusIndicatorQueryVariables = Exact<{ [key: string]: never; }>;


export type StatusIndicatorQuery = { statusPage: { status: { indicator: StatusIndicator } } };

export type ComponentTreeQueryVariables = Exact<{ [key: string]: never; }>;


export type ComponentTreeQuery = { statusPage: { components: Array<{ name: string, status: ComponentStatus, children: Array<{ name: string, status: ComponentStatus }> }> } };

export type ComponentProblemsQueryVariables = Exact<{ [key: string]: never; }>;


export type ComponentProblemsQuery = { statusPage: { components: Array<{ name: string, status: ComponentStatus, group: { name: string } | null, incidents: Array<{ name: string, status: IncidentStatus, updates: Array<{ body: string, displayAt: string }> }> }> } };

export type ComponentByIdQueryVariables = Exact<{
  id: string | number;
}>;


export type ComponentByIdQuery = { component: { name: string, status: ComponentStatus, group: { name: string } | null, maintenances: Array<{ name: string, scheduledFor: string, scheduledUntil: string }> } | null };

export type IncidentByIdQueryVariables = Exact<{
  id: string | number;
}>;


export type IncidentByIdQuery = { incident: { name: string, status: IncidentStatus, impact: Impact, shortlink: string | null, resolvedAt: string | null, updates: Array<{ status: IncidentUpdateStatus, body: string, displayAt: string }> } | null };

export type MaintenanceByIdQueryVariables = Exact<{
  id: string | number;
}>;


export type MaintenanceByIdQuery = { maintenance: { name: string, status: MaintenanceStatus, impact: Impact, shortlink: string | null, scheduledFor: string, scheduledUntil: string } | null };

type EventCard_Incident_Fragment = { name: string, impact: Impact, shortlink: string | null, updates: Array<{ status: IncidentUpdateStatus, body: string, displayAt: string }> };

type EventCard_Maintenance_Fragment = { name: string, impact: Impact, shortlink: string | null, updates: Array<{ status: IncidentUpdateStatus, body: string, displayAt: string }> };

export type EventCardFragment =
  | EventCard_Incident_Fragment
  | EventCard_Maintenance_Fragment
;

export type CurrentEventsQueryVariables = Exact<{ [key: string]: never; }>;


export type CurrentEventsQuery = { statusPage: { incidents: Array<{ status: IncidentStatus, name: string, impact: Impact, shortlink: string | null, updates: Array<{ status: IncidentUpdateStatus, body: string, displayAt: string }> }>, upcomingMaintenances: Array<{ status: MaintenanceStatus, scheduledFor: string, name: string, impact: Impact, shortlink: string | null, updates: Array<{ status: IncidentUpdateStatus, body: string, displayAt: string }> }> | null } };

export type EventHistoryQueryVariables = Exact<{ [key: string]: never; }>;


export type EventHistoryQuery = { statusPage: { incidentHistory: Array<{ name: string, status: IncidentStatus, impact: Impact, resolvedAt: string | null, components: Array<{ name: string, group: { name: string } | null }> }> | null, maintenanceHistory: Array<{ name: string, status: MaintenanceStatus, scheduledFor: string, scheduledUntil: string }> | null } };

export type VerifyContractMutationVariables = Exact<{
  input: VerifyContractInput;
}>;


export type VerifyContractMutation = { verifyContract:
    | { __typename: 'InvalidInputError', field: string, message: string }
    | { __typename: 'RateLimitedError', retryAfterSeconds: number | null, message: string }
    | { __typename: 'UpstreamUnavailableError', message: string }
    | { __typename: 'VerificationPending', verificationId: string, startedAt: string | null }
    | { __typename: 'VerificationRejectedError', status: number, message: string }
    | { __typename: 'VerificationResult', unused: Array<string>, contracts: Array<{ name: string | null, address: string | null, chainId: string | null, status: VerificationStatus, compilerVersion: string | null, storageTimestamp: string | null, files: { found: Array<string>, missing: Array<string> } | null }> }
   };

export type VerificationJobQueryVariables = Exact<{
  id: string | number;
}>;


export type VerificationJobQuery = { verificationJob:
    | { __typename: 'InvalidInputError', message: string }
    | { __typename: 'RateLimitedError', message: string }
    | { __typename: 'UpstreamUnavailableError', message: string }
    | { __typename: 'VerificationPending', startedAt: string | null }
    | { __typename: 'VerificationRejectedError', message: string }
    | { __typename: 'VerificationResult', alreadyVerified: boolean, contracts: Array<{ address: string | null, status: VerificationStatus, storageTimestamp: string | null }> }
   | null };

export type ContractLookupQueryVariables = Exact<{
  chainId: string;
  address: string;
}>;


export type ContractLookupQuery = { contract: { chainId: string, address: string, verified: boolean, match: VerificationStatus | null, creationMatch: VerificationStatus | null, runtimeMatch: VerificationStatus | null, verifiedAt: string | null, matchId: string | null, name: string | null, compilerVersion: string | null } | null };

export type SupportedChainsQueryVariables = Exact<{ [key: string]: never; }>;


export type SupportedChainsQuery = { supportedChains: Array<{ id: string, name: string, supportsExplorerVerification: boolean }> };

export type PageTreeQueryVariables = Exact<{ [key: string]: never; }>;


export type PageTreeQuery = { statusPage: { name: string, url: string, fetchedAt: string, status: { indicator: StatusIndicator, description: string }, components: Array<{ id: string, name: string, status: ComponentStatus, isGroup: boolean, children: Array<{ id: string, name: string, status: ComponentStatus, isGroup: boolean }> }>, incidents: Array<{ status: IncidentStatus, id: string, name: string, impact: Impact, shortlink: string | null, updates: Array<{ status: IncidentUpdateStatus, body: string, displayAt: string }>, components: Array<{ id: string, name: string, group: { name: string } | null }> }>, scheduledMaintenances: Array<{ status: MaintenanceStatus, scheduledFor: string, scheduledUntil: string, id: string, name: string, impact: Impact, shortlink: string | null, components: Array<{ id: string, name: string, group: { name: string } | null }> }>, upcomingMaintenances: Array<{ status: MaintenanceStatus, scheduledFor: string, scheduledUntil: string, id: string, name: string, impact: Impact, shortlink: string | null, components: Array<{ id: string, name: string, group: { name: string } | null }> }> | null } };

export type ComponentSummaryFragment = { id: string, name: string, status: ComponentStatus, isGroup: boolean };

type EventSummary_Incident_Fragment = { id: string, name: string, impact: Impact, shortlink: string | null, components: Array<{ id: string, name: string, group: { name: string } | null }> };

type EventSummary_Maintenance_Fragment = { id: string, name: string, impact: Impact, shortlink: string | null, components: Array<{ id: string, name: string, group: { name: string } | null }> };

export type EventSummaryFragment =
  | EventSummary_Incident_Fragment
  | EventSummary_Maintenance_Fragment
;

export const EventCardFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"EventCard"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"StatusEvent"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"impact"}},{"kind":"Field","name":{"kind":"Name","value":"shortlink"}},{"kind":"Field","name":{"kind":"Name","value":"updates"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"body"}},{"kind":"Field","name":{"kind":"Name","value":"displayAt"}}]}}]}}]} as unknown as DocumentNode<EventCardFragment, unknown>;
export const ComponentSummaryFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ComponentSummary"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Component"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"isGroup"}}]}}]} as unknown as DocumentNode<ComponentSummaryFragment, unknown>;
export const EventSummaryFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"EventSummary"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"StatusEvent"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"impact"}},{"kind":"Field","name":{"kind":"Name","value":"shortlink"}},{"kind":"Field","name":{"kind":"Name","value":"components"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"group"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]}}]} as unknown as DocumentNode<EventSummaryFragment, unknown>;
export const StatusBannerDocument = {"__meta__":{"operationType":"query","operationName":"StatusBanner","hash":"sha256:e1ad4d270a7b89b873b68cbde4168f6e42089f9094b4fe5fb9eced5beaf2db9b"}} as unknown as DocumentNode<StatusBannerQuery, StatusBannerQueryVariables>;
export const StatusIndicatorDocument = {"__meta__":{"operationType":"query","operationName":"StatusIndicator","hash":"sha256:826168d2201048b20254e4f98b23b4a45fe1720a69b8bd472a74758b483c7ca2"}} as unknown as DocumentNode<StatusIndicatorQuery, StatusIndicatorQueryVariables>;
export const ComponentTreeDocument = {"__meta__":{"operationType":"query","operationName":"ComponentTree","hash":"sha256:c1f27f23122b5d52bfec5dfbdb87047fcc95515357b971c7ddc903356abe9b6c"}} as unknown as DocumentNode<ComponentTreeQuery, ComponentTreeQueryVariables>;
export const ComponentProblemsDocument = {"__meta__":{"operationType":"query","operationName":"ComponentProblems","hash":"sha256:5b2affc9b9019271d86a47721c8354d7dc498c18b0b45a7c309395eef79ebb83"}} as unknown as DocumentNode<ComponentProblemsQuery, ComponentProblemsQueryVariables>;
export const ComponentByIdDocument = {"__meta__":{"operationType":"query","operationName":"ComponentById","hash":"sha256:88afc36ffd87aa2e880f793efb3b086e25a40f92978283ccdaf2bdee0c758d6f"}} as unknown as DocumentNode<ComponentByIdQuery, ComponentByIdQueryVariables>;
export const IncidentByIdDocument = {"__meta__":{"operationType":"query","operationName":"IncidentById","hash":"sha256:2cb178d754ffdcb35a5ee7c9ac039c041be69cf61280f1eb18b9e244dffe9b6e"}} as unknown as DocumentNode<IncidentByIdQuery, IncidentByIdQueryVariables>;
export const MaintenanceByIdDocument = {"__meta__":{"operationType":"query","operationName":"MaintenanceById","hash":"sha256:74b59629255377d707d9d4d5e2c4f03241eaa97a07a82fecbe9e4de73bb3df79"}} as unknown as DocumentNode<MaintenanceByIdQuery, MaintenanceByIdQueryVariables>;
export const CurrentEventsDocument = {"__meta__":{"operationType":"query","operationName":"CurrentEvents","hash":"sha256:11ab0e290852870a47e6cdef65feb26fd4586222333e3541f5fef23e1c967f37"}} as unknown as DocumentNode<CurrentEventsQuery, CurrentEventsQueryVariables>;
export const EventHistoryDocument = {"__meta__":{"operationType":"query","operationName":"EventHistory","hash":"sha256:b5c9f4714fde85883d9d0ed028447f15c55fe6eac24fbd61e2638d0e683280a6"}} as unknown as DocumentNode<EventHistoryQuery, EventHistoryQueryVariables>;
export const VerifyContractDocument = {"__meta__":{"operationType":"mutation","operationName":"VerifyContract","hash":"sha256:dcdf54fdae0171dfeddb440fe867515163e6b6433186aac64626d9220c5abf94"}} as unknown as DocumentNode<VerifyContractMutation, VerifyContractMutationVariables>;
export const VerificationJobDocument = {"__meta__":{"operationType":"query","operationName":"VerificationJob","hash":"sha256:febb860f50141ef0bc33097ca8db757ba5791335c64ed881737f5f164f24019c"}} as unknown as DocumentNode<VerificationJobQuery, VerificationJobQueryVariables>;
export const ContractLookupDocument = {"__meta__":{"operationType":"query","operationName":"ContractLookup","hash":"sha256:3159183a93b2dc7abbb5630d54ac6a6644fe43bb03e1a490f93139978c8c6042"}} as unknown as DocumentNode<ContractLookupQuery, ContractLookupQueryVariables>;
export const SupportedChainsDocument = {"__meta__":{"operationType":"query","operationName":"SupportedChains","hash":"sha256:6499084613885e82ee2ee2f6d38f064ac07a340819ddd45ac2f952f9f59693d7"}} as unknown as DocumentNode<SupportedChainsQuery, SupportedChainsQueryVariables>;
export const PageTreeDocument = {"__meta__":{"operationType":"query","operationName":"PageTree","hash":"sha256:29c9455bedd3dc0c6e8e2fb03d906763ba31e2a3e1c7af1698190746311dd13e"}} as unknown as DocumentNode<PageTreeQuery, PageTreeQueryVariables>;