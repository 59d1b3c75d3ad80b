/**
 * A failed request as a technician reads it. The bare error ("connect ECONNREFUSED 127.0.0.1:8600") named a system
 * call; what they need is whether the cloud is down, the address wrong, or the network away. Pure.
 */
export function describeNetworkError(error: unknown, cloudUrl: string): string {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  const host = safeHost(cloudUrl);
  switch (code) {
    case 'ECONNREFUSED':
      return `the cloud at ${cloudUrl} refused the connection (is it running, and is the port right?)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the name ${host} cannot be resolved (no network, or a wrong cloud URL?)`;
    case 'ETIMEDOUT':
    case 'ECONNABORTED':
      return `the cloud at ${cloudUrl} did not answer in time`;
    case 'ECONNRESET':
    case 'EPIPE':
      return `the connection to ${cloudUrl} was cut`;
    case 'ENETUNREACH':
    case 'EHOSTUNREACH':
      return `${host} cannot be reached (no route: is the network up?)`;
    default:
      return message && message !== '' ? message : String(error);
  }
}

function safeHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}
