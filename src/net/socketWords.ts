/** Socket error codes in words, for check and delivery messages alike. */
export const SOCKET_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed by the peer',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EHOSTDOWN: 'host down',
  EADDRNOTAVAIL: 'address not available',
};
