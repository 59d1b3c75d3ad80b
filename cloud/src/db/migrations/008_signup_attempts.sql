-- Sign-ups by client address, kept only for the window of the sign-up limit: each costs a password hash and may make
-- an account, and nothing limited how many one client could make. A table rather than an address on users, so that
-- addresses are not kept for as long as the accounts.
CREATE TABLE signup_attempts (
  address text NOT NULL,
  attempted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX signup_attempts_address ON signup_attempts (address, attempted_at);
