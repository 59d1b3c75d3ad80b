import { compileValidator, Identifier } from '@hivegate/shared';

const checkBoxId = compileValidator(Identifier);
const SHOWN_CHARACTERS = 40;

/**
 * Why a box id given for a token is not one (the shared schemas' rules for `boxId`, which movement ingest applies),
 * naming it and its place in `field`; undefined when every one is. A 300-character id made a token, and an apiary that
 * waited for a box whose counts ingest would never take.
 */
export function boxIdsProblem(boxIds: readonly string[], field: string): string | undefined {
  for (const [index, boxId] of boxIds.entries()) {
    const checked = checkBoxId(boxId);
    if (checked.ok) continue;
    const shown = boxId.length > SHOWN_CHARACTERS ? `${boxId.slice(0, SHOWN_CHARACTERS)}…` : boxId;
    return `${field}[${index}] ${JSON.stringify(shown)} is not a box id: it ${checked.error.replace(/^body /, '')}`;
  }
  return undefined;
}
