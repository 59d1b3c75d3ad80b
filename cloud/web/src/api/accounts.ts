/** Accounts: sign-up/in/out, the current user, and the API tokens devices use. */
import { defineOperation } from './graphql.ts';

export interface User {
  id: string;
  login: string;
  createdAt: string;
}

export interface ApiToken {
  id: string;
  name: string;
  scopes: string[];
  boxIds: string[] | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

const USER = 'id login createdAt';
const API_TOKEN = 'id name scopes boxIds createdAt lastUsedAt expiresAt revokedAt';

/** signUpOpen comes with it, so that the sign-in page knows whether to offer sign-up before it shows. */
export const MeQuery = defineOperation<{ me: User | null; signUpOpen: boolean }>(`query Me { me { ${USER} } signUpOpen }`);

type Credentials = { login: string; password: string };
/** The session token is not selected: the server sets it as an HttpOnly cookie, out of reach of scripts. */
export const SignInMutation = defineOperation<{ signIn: { user: User; expiresAt: string } }, Credentials>(
  `mutation SignIn($login: String!, $password: String!) { signIn(login: $login, password: $password) { user { ${USER} } expiresAt } }`,
);
export const SignUpMutation = defineOperation<{ signUp: { user: User; expiresAt: string } }, Credentials>(
  `mutation SignUp($login: String!, $password: String!) { signUp(login: $login, password: $password) { user { ${USER} } expiresAt } }`,
);
export const SignOutMutation = defineOperation<{ signOut: boolean }>(`mutation SignOut { signOut }`);

export const ApiTokensQuery = defineOperation<{ apiTokens: ApiToken[] }>(`query ApiTokens { apiTokens { ${API_TOKEN} } }`);
export const CreateApiTokenMutation = defineOperation<
  { createApiToken: { token: string; apiToken: ApiToken } },
  { name: string; scopes: string[] | null; boxIds: string[] | null }
>(
  `mutation CreateApiToken($name: String!, $scopes: [String!], $boxIds: [ID!]) {
    createApiToken(name: $name, scopes: $scopes, boxIds: $boxIds) { token apiToken { ${API_TOKEN} } }
  }`,
);
export const RevokeApiTokenMutation = defineOperation<{ revokeApiToken: boolean }, { id: string }>(
  `mutation RevokeApiToken($id: ID!) { revokeApiToken(id: $id) }`,
);

/** A browser the user is signed in on; never its token. */
export interface WebSession {
  id: string;
  /** "Firefox on Windows"; null when the browser did not say. */
  client: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  current: boolean;
}

export const WebSessionsQuery = defineOperation<{ webSessions: WebSession[] }>(
  `query WebSessions { webSessions { id client createdAt lastUsedAt expiresAt current } }`,
);
export const RevokeWebSessionMutation = defineOperation<{ revokeWebSession: boolean }, { id: string }>(
  `mutation RevokeWebSession($id: ID!) { revokeWebSession(id: $id) }`,
);
export const SignOutOtherSessionsMutation = defineOperation<{ signOutOtherSessions: number }>(`mutation SignOutOtherSessions { signOutOtherSessions }`);
export const ChangePasswordMutation = defineOperation<
  { changePassword: { otherSessionsSignedOut: number } },
  { currentPassword: string; newPassword: string }
>(
  `mutation ChangePassword($currentPassword: String!, $newPassword: String!) {
    changePassword(currentPassword: $currentPassword, newPassword: $newPassword) { otherSessionsSignedOut }
  }`,
);

/**
 * The box ids typed in the token form: separated by commas, as its hint says, each trimmed. Split at spaces too, the
 * id "bad box id with / slash" became the boxes bad, box, id, … (box ids may hold spaces, as ingest takes them).
 */
export function boxIdsFromList(text: string): string[] {
  return text
    .split(',')
    .map((boxId) => boxId.trim())
    .filter(Boolean);
}
