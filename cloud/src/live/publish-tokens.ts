import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Publish tokens authorise one session's publisher. A token is an HMAC of the session id and a random salt under
 * a key derived from the deployment secret: the database keeps only the salt and the token's SHA-256, so a copy
 * of the database cannot publish, while any instance can re-derive the token to redeliver START_STREAM.
 */
export class PublishTokens {
  private readonly key: Buffer;

  constructor(secret: Uint8Array) {
    this.key = createHmac('sha256', Buffer.from(secret)).update('hivegate live publish tokens').digest();
  }

  newSalt(): string {
    return randomBytes(16).toString('base64url');
  }

  tokenFor(sessionId: string, salt: string): string {
    return createHmac('sha256', this.key).update(`${sessionId}\n${salt}`).digest('base64url');
  }

  hash(token: string): Buffer {
    return createHash('sha256').update(token).digest();
  }

  matches(token: string, storedHash: Buffer): boolean {
    const given = this.hash(token);
    return given.length === storedHash.length && timingSafeEqual(given, storedHash);
  }
}
