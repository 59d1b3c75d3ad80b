-- What a web session was signed in with ("Firefox on Windows", from the User-Agent at sign-in), so that its owner can
-- tell their sign-ins apart on the profile page and end the ones they do not know. Only the coarse name is kept: the
-- whole header is close to a fingerprint. Null for API tokens and for sessions from clients that name no browser.
ALTER TABLE api_tokens ADD COLUMN client text;
