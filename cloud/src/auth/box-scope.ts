import type { Principal } from './tokens.ts';

type Scoped = Pick<Principal, 'boxIds'>;

/** Whether the principal may see and act for the box: a token made for some boxes covers those only. */
export function coversBox(principal: Scoped, boxId: string): boolean {
  return principal.boxIds === null || principal.boxIds.includes(boxId);
}

/** The boxes of `wanted` (null: every box) that the principal covers; null when nothing narrows the choice. */
export function coveredBoxes(principal: Scoped, wanted: readonly string[] | null): string[] | null {
  const allowed = principal.boxIds;
  if (allowed === null) return wanted ? [...wanted] : null;
  return wanted ? wanted.filter((id) => allowed.includes(id)) : [...allowed];
}

export function boxRefusal(boxId: string): string {
  return `this token may not act for box "${boxId}"`;
}
