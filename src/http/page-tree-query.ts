/**
 * The whole status page in one operation: what a status widget renders. GraphiQL opens with it,
 * and the tests and benchmarks use it as the representative heavy query.
 */
export const PAGE_TREE_QUERY = /* GraphQL */ `# The whole status page in one round trip. Press ▶ to run it.
query PageTree {
  statusPage {
    name
    url
    fetchedAt
    status {
      indicator
      description
    }
    components(topLevel: true) {
      ...ComponentSummary
      children {
        ...ComponentSummary
      }
    }
    incidents {
      ...EventSummary
      status
      updates {
        status
        body
        displayAt
      }
    }
    scheduledMaintenances {
      ...EventSummary
      status
      scheduledFor
      scheduledUntil
    }
    upcomingMaintenances {
      ...EventSummary
      status
      scheduledFor
      scheduledUntil
    }
  }
}

fragment ComponentSummary on Component {
  id
  name
  status
  isGroup
}

fragment EventSummary on StatusEvent {
  id
  name
  impact
  shortlink
  components {
    id
    name
    group {
      name
    }
  }
}
`;
