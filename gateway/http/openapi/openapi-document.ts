/**
 * The OpenAPI 3.1 document `GET /openapi.json` serves (routes/openapi.ts), built once at start
 * from the route groups' `RouteDoc`s, whose JSON Schemas come from the same zod schemas the
 * handlers validate with (`z.toJSONSchema`, requests as input, responses as output). The security
 * each route lists follows the running mode: in free mode the gated routes take the wallet header alone.
 *
 * @example
 *   const document = buildOpenApiDocument([...modelRouteDocs, ...toolRouteDocs], { freeMode: true, publicUrl, adminToken: false })
 *   registerOpenApiRoutes(router, document)
 */
import { z } from 'zod';
import { errorBodySchema, type MediaContent, type RouteAccess, type RouteDoc } from './route-doc.js';
import { OUTSIDE_IP_BUDGET } from '../middleware/rate-limit.js';

/** The interface description's version (INTERFACE.md). */
export const API_VERSION = '1.0.0';

export interface OpenApiOptions {
  freeMode: boolean;
  /** PUBLIC_URL: the document's server. */
  publicUrl: string;
  /** Whether ADMIN_TOKEN is set (then `/metrics` needs it). */
  adminToken: boolean;
  /**
   * Paths whose every error, off any route too (a method or a path under it nobody serves), has
   * another body than ErrorBody: listed in the document's `x-error-bodies-by-path` with the
   * schema's name in `components.schemas`, so a reader (and the fuzz test) knows the body of an
   * answer no operation describes.
   */
  errorBodiesByPath?: ErrorBodyByPath[];
}

/** `/v1/messages` and everything under it (any case) answer errors in `body`, named `name` in the document. */
export interface ErrorBodyByPath {
  path: string;
  name: string;
  body: z.ZodType;
}

export type JsonObject = Record<string, unknown>;
type SecurityRequirement = Record<string, string[]>;

const STATUS_TEXT: Record<number, string> = {
  400:
    'Bad request: invalid JSON, a body nested too deep or not decodable with its Content-Encoding, a field that fails validation ' +
    '(`param` names it), a bad `x-wallet-address`, or not valid HTTP (an HTTP/1.1 request without Host)',
  401: 'No key, an unknown, revoked, unverified or expired (`api_key_expired`) key, or a refused SIWE proof (the `code` says which)',
  402:
    "Insufficient credits (`insufficient_credits`, naming the balance), or the API key's own credit limit spent " +
    '(`key_budget_exhausted`: the wallet may still hold credits; never an x402 offer)',
  403:
    'The key belongs to another wallet (`wallet_mismatch`), or its limits refuse the request (`tool_not_allowed`, ' +
    '`model_not_allowed`, `key_not_allowed`)',
  404: 'Unknown model, tool, key or route',
  405: 'Method not allowed for this route (`Allow` lists the methods)',
  406: 'The `Accept` header allows no media type this route answers with',
  409: 'Conflict (too many keys, an idempotency key reused for another grant)',
  413: 'The body is larger than the limit (`request_too_large`)',
  415: 'The body is not JSON (`unsupported_media_type`) or its encoding is unsupported',
  417: 'An `Expect` other than 100-continue (`expectation_failed`)',
  429: 'Rate limited (`rate_limited`); `Retry-After` says when to come back',
  431: 'The request headers are larger than the limit (`request_header_too_large`)',
  500: 'The gateway failed; the detail goes to its log only',
  502: 'The upstream model or a tool server answered badly',
  503: 'The upstream model, a tool server or the store is unavailable',
  504: 'The upstream model or a tool server timed out',
};

/** Statuses every route with this access can answer before its handler runs. */
const ACCESS_ERRORS: Record<RouteAccess, number[]> = {
  open: [],
  wallet: [400, 429],
  gated: [400, 401, 403, 429],
  'key-of-wallet': [400, 401, 403, 429],
  admin: [401, 404],
  'admin-if-set': [401],
};

/** Statuses reading a JSON body can add. */
const BODY_ERRORS = [400, 413, 415];

/** Statuses any request can get from the HTTP server itself, before a route (not valid HTTP, Expect, headers too large). */
const SERVER_ERRORS = [400, 417, 431];

/**
 * Statuses answered before any route's own error shape applies, so always in the plain body too:
 * 417 and 431 only so, 400 (not valid HTTP, no Host) and 429 (the per-IP budget) beside the route's.
 */
const ONLY_BEFORE_ROUTES = [417, 431];
const ALSO_BEFORE_ROUTES = [400, 429];
const PLAIN_ERROR = { $ref: '#/components/schemas/ErrorBody' };

export function buildOpenApiDocument(routes: readonly RouteDoc[], options: OpenApiOptions): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    if (paths[path][route.method]) throw new Error(`Two OpenAPI entries for ${route.method.toUpperCase()} ${route.path}`);
    paths[path][route.method] = operation(route, options);
  }
  const byPath = options.errorBodiesByPath ?? [];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchyard',
      version: API_VERSION,
      description:
        'An OpenAI-compatible chat gateway that runs read-only tools itself over MCP. Callers name their wallet in ' +
        '`x-wallet-address`; with credits on they also send `Authorization: Bearer <key>` (both schemes apply together).' +
        (options.freeMode ? ' This gateway runs in free mode: the wallet header is enough and nothing is charged.' : ''),
    },
    servers: serversOf(options.publicUrl),
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    ...(byPath.length
      ? {
          'x-error-bodies-by-path': byPath.map(({ path, name }) => ({
            path,
            description: `Every error answer on ${path} and any path under it (any case), off its operations too`,
            schema: { $ref: `#/components/schemas/${name}` },
          })),
        }
      : {}),
    components: {
      securitySchemes: {
        walletAddress: { type: 'apiKey', in: 'header', name: 'x-wallet-address', description: '0x + 40 hex; mixed case must be EIP-55' },
        bearerKey: { type: 'http', scheme: 'bearer', description: 'An API key of that wallet (`sy_…`), from POST /auth/api-keys' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'The operator token (`ADMIN_TOKEN`)' },
      },
      schemas: {
        ErrorBody: schemaOf(errorBodySchema, 'output'),
        ...Object.fromEntries(byPath.map(({ name, body }) => [name, schemaOf(body, 'output')])),
      },
      headers: {
        RequestId: { description: "The request id (the client's `x-request-id` when acceptable)", schema: { type: 'string' } },
        RetryAfter: { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } },
      },
    },
  };
}

/**
 * PUBLIC_URL (the address clients use), unless it still names port 0 (nothing set it and the
 * port is ephemeral): then `/`, which readers resolve against where they fetched the document.
 */
function serversOf(publicUrl: string): JsonObject[] {
  return new URL(publicUrl).port === '0' ? [{ url: '/' }] : [{ url: publicUrl }];
}

/** `/auth/api-keys/:id` → `/auth/api-keys/{id}`. */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function operation(route: RouteDoc, options: OpenApiOptions): JsonObject {
  const parameters = [
    ...parametersOf(route.pathParams, 'path'),
    ...parametersOf(route.query, 'query'),
    ...parametersOf(route.headers, 'header'),
    {
      name: 'x-request-id',
      in: 'header',
      required: false,
      description: 'Your own request id, echoed back',
      schema: { type: 'string', maxLength: 64 },
    },
  ];
  const op: JsonObject = {
    tags: [route.tag],
    summary: route.summary,
    operationId: operationId(route),
    security: securityOf(route.access, options),
    parameters,
    responses: responsesOf(route),
  };
  if (route.description) op.description = route.description;
  if (route.body) op.requestBody = { required: true, content: { 'application/json': { schema: schemaOf(route.body, 'input') } } };
  return op;
}

function operationId(route: RouteDoc): string {
  const words = route.path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return [route.method, ...words].map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join('');
}

function securityOf(access: RouteAccess, options: OpenApiOptions): SecurityRequirement[] {
  const walletAndKey = { walletAddress: [], bearerKey: [] };
  switch (access) {
    case 'open':
      return [];
    case 'wallet':
      return [{ walletAddress: [] }];
    case 'gated':
      return options.freeMode ? [{ walletAddress: [] }, walletAndKey] : [walletAndKey];
    case 'key-of-wallet':
      return [walletAndKey];
    case 'admin':
      return [{ adminToken: [] }];
    case 'admin-if-set':
      return options.adminToken ? [{ adminToken: [] }] : [];
  }
}

function responsesOf(route: RouteDoc): JsonObject {
  const requestId = { 'x-request-id': { $ref: '#/components/headers/RequestId' } };
  const extraHeaders = stringHeaders(route.response.headers);
  const responses: JsonObject = {
    200: {
      description: route.response.description,
      headers: { ...requestId, ...extraHeaders },
      content: contentOf(route.response.content),
    },
  };
  const statuses = new Set([
    ...SERVER_ERRORS,
    // The per-IP budget comes before every route but the health probe.
    ...(OUTSIDE_IP_BUDGET.includes(route.path) ? [] : [429]),
    ...ACCESS_ERRORS[route.access],
    ...(route.body ? BODY_ERRORS : []),
    ...(route.errors ?? []),
    500,
  ]);
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const description = STATUS_TEXT[status];
    if (!description) throw new Error(`No description for status ${status} (${route.method.toUpperCase()} ${route.path})`);
    // 429 always says when to come back; a 503 does when it knows (a tool server restarting).
    const retry = status === 429 || status === 503;
    const headers = {
      ...requestId,
      ...(retry ? { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : {}),
      ...stringHeaders(route.errorHeaders?.[status]),
    };
    responses[status] = { description, headers, content: { 'application/json': { schema: errorSchemaOf(route, status) } } };
  }
  return responses;
}

/** The body of a route's error answers of one status (see ONLY_BEFORE_ROUTES, ALSO_BEFORE_ROUTES). */
function errorSchemaOf(route: RouteDoc, status: number): JsonObject {
  const own = route.errorBodies?.[status];
  if (own) return schemaOf(own, 'output');
  if (!route.errorBody || ONLY_BEFORE_ROUTES.includes(status)) return PLAIN_ERROR;
  const routes = schemaOf(route.errorBody, 'output');
  return ALSO_BEFORE_ROUTES.includes(status) ? { anyOf: [routes, PLAIN_ERROR] } : routes;
}

/** Response headers described by name → text, each a string. */
function stringHeaders(described: Record<string, string> | undefined): JsonObject {
  return Object.fromEntries(
    Object.entries(described ?? {}).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
  );
}

function contentOf(content: MediaContent): JsonObject {
  return Object.fromEntries(
    Object.entries(content).map(([mediaType, schema]) => [mediaType, schema ? { schema: schemaOf(schema, 'output') } : {}]),
  );
}

function parametersOf(shape: z.ZodObject | undefined, where: 'path' | 'query' | 'header'): JsonObject[] {
  if (!shape) return [];
  const schema = schemaOf(shape, 'input') as { properties?: Record<string, JsonObject>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    const parameter: JsonObject = { name, in: where, required: where === 'path' || (schema.required ?? []).includes(name), schema: rest };
    if (description !== undefined) parameter.description = description;
    return parameter;
  });
}

/** A zod schema as an OpenAPI 3.1 (JSON Schema 2020-12) schema object, without its `$schema` line. */
function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonObject;
  return rest;
}
