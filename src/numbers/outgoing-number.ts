/**
 * The number an organization's outbound call goes out from: the oldest of its numbers that
 * the call's agent answers (so a callback reaches the same agent), the id breaking a tie so
 * the answer stays the same while the numbers do; none when the agent answers none. An SQL
 * expression, because `POST /v1/calls` places a call in one statement (see
 * `placeOutboundCall`, the one path that creates outbound calls).
 *
 * @param orgId, agentId SQL expressions for the organization's and the agent's ids.
 */
export const outgoingNumberSql = (orgId: string, agentId: string) =>
  `(SELECT n.phone_number FROM phone_numbers n WHERE n.org_id = ${orgId} AND n.agent_id = ${agentId} ORDER BY n.created_at, n.id LIMIT 1)`;
