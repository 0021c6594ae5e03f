/** Bounds every provider request shares: a timeout and a response size cap. */
export interface ProviderHttp {
  timeoutMs: number;
  maxBytes: number;
}
