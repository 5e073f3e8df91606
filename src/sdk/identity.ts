/**
 * Backend side of signed identity for forms: sign a visitor's identity with the
 * workspace's identity secret (`POST /v1/identity_secret/rotate` shows it once)
 * and hand the token to the page (`<service-form identity="...">`, or
 * `identity_token` in a submission).
 *
 *   const token = await signIdentityToken(process.env.IDENTITY_SECRET!, { email: user.email, name: user.name, sub: user.id })
 */
import { SignJWT } from "jose"

export interface IdentityClaims {
  /** The authoritative e-mail: it replaces whatever the visitor typed. */
  readonly email: string
  readonly name?: string
  /** The user's id in your system. */
  readonly sub?: string
}

/** The longest lifetime the service accepts (`exp` at most 24 h after `iat`); a longer-lived token is refused. */
export const MAX_IDENTITY_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60

export interface SignIdentityOptions {
  /** Lifetime in seconds (default 600; at most an hour is recommended, at most 24 h is accepted). */
  readonly expiresInSeconds?: number
  /** Issue time in Unix seconds; defaults to the system clock. */
  readonly now?: number
}

/** An HS256 JWT with `email`, `name`, `sub`, `iat` and `exp`. */
export const signIdentityToken = (
  secret: string,
  claims: IdentityClaims,
  options: SignIdentityOptions = {}
): Promise<string> => {
  const iat = options.now ?? Math.floor(Date.now() / 1000)
  const lifetime = options.expiresInSeconds ?? 600
  if (!(lifetime > 0 && lifetime <= MAX_IDENTITY_TOKEN_LIFETIME_SECONDS)) {
    return Promise.reject(
      new RangeError(`expiresInSeconds must be positive and at most ${MAX_IDENTITY_TOKEN_LIFETIME_SECONDS} (24 hours)`)
    )
  }
  const payload: Record<string, string> = { email: claims.email }
  if (claims.name !== undefined) payload["name"] = claims.name
  let jwt = new SignJWT(payload).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setIssuedAt(iat).setExpirationTime(iat + lifetime)
  if (claims.sub !== undefined) jwt = jwt.setSubject(claims.sub)
  return jwt.sign(new TextEncoder().encode(secret))
}
