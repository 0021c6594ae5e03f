/**
 * A tool's failure, with a machine-readable code the gateway maps to an HTTP status and the
 * model reads inside a chat round. Codes: invalid_arguments (400), not_found (404),
 * url_not_allowed (400), upstream_unavailable (502), timeout (504), internal_error (500).
 */
export type ToolErrorCode = 'invalid_arguments' | 'not_found' | 'url_not_allowed' | 'upstream_unavailable' | 'timeout' | 'internal_error';

export class ToolError extends Error {
  readonly code: ToolErrorCode;
  /** The argument at fault, when there is one. */
  readonly param?: string;

  constructor(code: ToolErrorCode, message: string, options: { param?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'ToolError';
    this.code = code;
    this.param = options.param;
  }
}

/** The JSON carried in the text block of an `isError` result. */
export interface ToolErrorPayload {
  error: { code: ToolErrorCode; message: string; param?: string };
}
