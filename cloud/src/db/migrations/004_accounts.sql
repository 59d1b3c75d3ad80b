-- Failed sign-ins, kept briefly to slow down password guessing per login and per address.
CREATE TABLE login_failures (
  login text NOT NULL,
  address text NOT NULL,
  failed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_login ON login_failures (login, failed_at);
CREATE INDEX login_failures_address ON login_failures (address, failed_at);
