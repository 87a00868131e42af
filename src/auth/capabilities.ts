/** The capabilities that gate writes (SPEC.md §5). Reads need none. */
export const CAPABILITIES = ['operate', 'settings', 'api_keys', 'webhooks'] as const;

export type Capability = (typeof CAPABILITIES)[number];

/** The capabilities in both lists, in canonical order. */
export function intersect(...lists: readonly (readonly Capability[])[]): Capability[] {
  return CAPABILITIES.filter((c) => lists.every((list) => list.includes(c)));
}
