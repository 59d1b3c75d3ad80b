import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Database } from '../db/database.ts';
import type { TokensRepository } from './tokens-repository.ts';

export interface Principal {
  userId: number;
  tokenId: string;
  scopes: string[];
  /** A device-scoped token may act only for these boxes; null means every box of the owner. */
  boxIds: string[] | null;
}

export class AuthError extends Error {}

const ISSUER = 'hivegate';
export const REVOCATION_CHANNEL = 'hivegate_token_revoked';

/** A process would sign tokens with another secret than the service's: tokens it makes would be refused. */
export class SigningSecretMismatchError extends Error {}

/**
 * The configured secret, or one generated once per deployment and kept in the database for every instance.
 *
 * The service (`role: 'service'`) also keeps a fingerprint of the secret it signs with. A tool (the admin CLI) checks
 * its own against it and refuses to go on with another: run without the service's JWT_SECRET, it made tokens that
 * the service refused, with nothing said, and stored a generated secret nobody used.
 *
 * A service whose secret is not the recorded one took it over in silence: every earlier token stopped working, and
 * beside instances still running with the old one, which tokens held depended on which instance answered. It now
 * refuses to start while another instance (seen in pg_stat_activity) signs with another secret, and otherwise says
 * loudly (`warn`) that the tokens issued before are now refused. Stopping every instance is how a secret is changed.
 */
export async function loadSigningSecret(
  db: Database,
  configured: string | undefined,
  role: 'service' | 'tool' = 'service',
  warn: (message: string) => void = () => undefined,
): Promise<Uint8Array> {
  const known = (await db.query<{ value: string }>(`SELECT value FROM server_secrets WHERE name = 'jwt_fingerprint'`)).rows[0]?.value;
  const candidate = configured ?? (await storedSecret(db));
  // A tool checks before a secret is made up: without the service's, it would store one that nobody signs with.
  if (role === 'tool' && known !== undefined && (candidate === undefined || fingerprint(candidate) !== known)) {
    throw new SigningSecretMismatchError(
      configured
        ? 'JWT_SECRET here is not the one the service signs tokens with: the tokens made here would be refused'
        : 'the service signs tokens with its JWT_SECRET: set the same JWT_SECRET here, or the tokens made here would be refused',
    );
  }
  const secret = candidate ?? (await generateSecret(db));
  if (role === 'service' && fingerprint(secret) !== known) {
    if (db.kind === 'postgres' && (await othersSignWithAnotherSecret(db, configured, secret))) {
      throw new SigningSecretMismatchError(
        `JWT_SECRET ${configured ? 'here is not the one another running instance signs tokens with' : 'is unset here, but another running instance signs tokens with a JWT_SECRET of its own'}: tokens would hold on one instance and be refused by the other; give every instance the same JWT_SECRET, or stop them all to change it`,
      );
    }
    if (known !== undefined) {
      warn(
        `${configured ? 'JWT_SECRET is not the secret' : 'JWT_SECRET is unset, and the generated secret is not the one'} tokens were signed with until now: every token issued before (device tokens, sign-in sessions) is now refused; set the previous JWT_SECRET back, or issue new device tokens (cli token create)`,
      );
    }
    await db.query(`INSERT INTO server_secrets (name, value) VALUES ('jwt_fingerprint', $1) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`, [fingerprint(secret)]);
  }
  return new TextEncoder().encode(secret);
}

const SIGNER_PREFIX = 'hivegate jwt:';
const STORED_LABEL = 'stored';
/**
 * Characters of the (base64url) fingerprint shown: 18 bits. application_name is visible to every role on the Postgres
 * server and the salt is no secret, so a longer one let anyone who can connect test guesses at a weak JWT_SECRET
 * offline; 18 bits tell two secrets apart but for one pair in 262 144, where the start falls back to the warning below.
 */
const SIGNER_LABEL_CHARS = 3;
const signerLabel = (secret: string) => fingerprint(secret).slice(0, SIGNER_LABEL_CHARS);

/**
 * The Postgres application_name of a service's connections: a short fingerprint of JWT_SECRET, or "stored" for the
 * generated secret in the database, then this process's instance tag (random, per start). It lets a starting
 * instance see which secrets the running ones sign with, and that there are running ones at all, without a registry
 * of its own. (Builds before the tag named their connections by the fingerprint alone.)
 */
export function signerApplicationName(configured: string | undefined, instanceTag?: string): string {
  return `${SIGNER_PREFIX}${configured ? signerLabel(configured) : STORED_LABEL}${instanceTag ? ` ${instanceTag}` : ''}`;
}

/** Application names of the service instances other than `mine` connected to this database now. */
export async function otherInstances(db: Database, mine: string): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT DISTINCT application_name AS name FROM pg_stat_activity
     WHERE datname = current_database() AND starts_with(application_name, $1) AND application_name <> $2`,
    [SIGNER_PREFIX, mine],
  );
  return rows.map((row) => row.name);
}

async function othersSignWithAnotherSecret(db: Database, configured: string | undefined, secret: string): Promise<boolean> {
  // This process's own connections (its label, whatever its instance tag) are left out by the label comparison.
  const names = await otherInstances(db, signerApplicationName(configured));
  const ours = signerLabel(secret);
  for (const name of names) {
    const label = name.slice(SIGNER_PREFIX.length).split(' ')[0] ?? '';
    // "stored" and a JWT_SECRET that holds the stored secret are the same signer under two names.
    const theirs = label === STORED_LABEL ? await storedSecret(db).then((stored) => stored && signerLabel(stored)) : label;
    if (theirs !== ours) return true;
  }
  return false;
}

async function storedSecret(db: Database): Promise<string | undefined> {
  return (await db.query<{ value: string }>(`SELECT value FROM server_secrets WHERE name = 'jwt'`)).rows[0]?.value;
}

/** One secret for the whole deployment: the first instance to get here stores it, every other one reads that one. */
async function generateSecret(db: Database): Promise<string> {
  await db.query(`INSERT INTO server_secrets (name, value) VALUES ('jwt', $1) ON CONFLICT (name) DO NOTHING`, [randomBytes(48).toString('base64url')]);
  return (await storedSecret(db))!;
}

/** Tells secrets apart without keeping them: a salted SHA-256. */
function fingerprint(secret: string): string {
  return createHash('sha256').update('hivegate signing secret\n').update(secret).digest('base64url');
}

interface CachedStatus {
  until: number;
  /** Why the token is refused, or undefined when it is good. */
  refusal?: string;
}

/**
 * Issues and verifies the JWTs users and devices present. The signature proves who issued a token; the
 * database says whether it still stands, looked up at most every few seconds per token (and dropped at once on
 * a revocation notice from any instance), so a revoked token stops working within seconds at little cost.
 */
export class TokenService {
  private readonly statusCache = new Map<string, CachedStatus>();
  /** Tokens whose signature was checked recently: devices send the same token thousands of times a day. */
  private readonly verifiedCache = new Map<string, { claims: Principal; until: number }>();
  private readonly lastTouched = new Map<string, number>();
  private unlisten?: () => Promise<void>;

  constructor(
    private readonly db: Database,
    private readonly tokens: TokensRepository,
    private readonly secret: Uint8Array,
    private readonly cacheSeconds: number,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(REVOCATION_CHANNEL, (tokenId) => this.statusCache.delete(tokenId));
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
  }

  async issue(claims: { userId: number; scopes: string[]; boxIds?: string[] | null; name: string; kind?: 'api' | 'session'; expiresAt?: Date; client?: string | null }) {
    const tokenId = randomUUID();
    await this.tokens.create({ id: tokenId, ...claims });
    const jwt = new SignJWT({ scope: claims.scopes.join(' '), ...(claims.boxIds ? { boxes: claims.boxIds } : {}) })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(String(claims.userId))
      .setJti(tokenId)
      .setIssuedAt();
    if (claims.expiresAt) jwt.setExpirationTime(Math.floor(claims.expiresAt.getTime() / 1000));
    return { tokenId, token: await jwt.sign(this.secret) };
  }

  async verify(token: string): Promise<Principal> {
    const now = Date.now();
    const verified = this.verifiedCache.get(token);
    const claims = verified && verified.until > now ? verified.claims : await this.verifySignature(token);
    const refusal = await this.refusalFor(claims.tokenId);
    if (refusal) throw new AuthError(refusal);
    this.touch(claims.tokenId);
    return claims;
  }

  private async verifySignature(token: string): Promise<Principal> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.secret, { issuer: ISSUER, algorithms: ['HS256'] }));
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw new AuthError('token has expired');
      throw new AuthError('token is invalid');
    }
    const tokenId = payload.jti;
    const userId = Number(payload.sub);
    if (!tokenId || !Number.isSafeInteger(userId)) throw new AuthError('token is invalid');
    const scope = typeof payload.scope === 'string' ? payload.scope : '';
    const boxes = Array.isArray(payload.boxes) ? payload.boxes.map(String) : null;
    const claims: Principal = { userId, tokenId, scopes: scope.split(' ').filter(Boolean), boxIds: boxes };
    // Remembered for a minute at most, and never past the token's own expiry.
    const until = Math.min(Date.now() + 60_000, payload.exp ? payload.exp * 1000 : Infinity);
    if (this.verifiedCache.size >= 10_000) this.verifiedCache.clear();
    this.verifiedCache.set(token, { claims, until });
    return claims;
  }

  /**
   * Why a principal verified earlier may no longer act (revoked, expired), or undefined. For a long-lived connection:
   * a subscription is authenticated once, and kept its events flowing after its token was revoked.
   */
  async refusalOf(principal: Principal): Promise<string | undefined> {
    return this.refusalFor(principal.tokenId);
  }

  /** Drops the cached status here and tells the other instances to do the same. */
  async forget(tokenId: string): Promise<void> {
    this.statusCache.delete(tokenId);
    await this.db.notify(REVOCATION_CHANNEL, tokenId);
  }

  private async refusalFor(tokenId: string): Promise<string | undefined> {
    const now = Date.now();
    const cached = this.statusCache.get(tokenId);
    if (cached && cached.until > now) return cached.refusal;
    const status = await this.tokens.status(tokenId);
    const refusal = !status
      ? 'token is not known'
      : status.revokedAt
        ? 'token has been revoked'
        : status.expiresAt && status.expiresAt.getTime() <= now
          ? 'token has expired'
          : undefined;
    if (this.statusCache.size > 50_000) this.statusCache.clear();
    this.statusCache.set(tokenId, { until: now + this.cacheSeconds * 1000, refusal });
    return refusal;
  }

  /** Records last use for the profile page, at most once a minute per token and never in the request's way. */
  private touch(tokenId: string): void {
    const now = Date.now();
    if ((this.lastTouched.get(tokenId) ?? 0) > now - 60_000) return;
    if (this.lastTouched.size > 50_000) this.lastTouched.clear();
    this.lastTouched.set(tokenId, now);
    void this.tokens.touch(tokenId).catch(() => undefined);
  }
}
