/**
 * `npm run docs:config`: writes the settings tables of docs/configuration.md from the zod schemas
 * that parse them: the gateway's `configSchema` with its ENV_OVERRIDES (gateway/config.ts), and
 * each tool server's environment schema. A table sits between
 * `<!-- begin generated table "NAME" … -->` and `<!-- end generated table "NAME" -->`; the prose
 * around it is the page's own. test/docs/config-tables.test.ts fails when the page differs from
 * what the schemas give, or a setting has no description.
 *
 * What a row says comes from the schema: the description from `.describe()` (or `.meta({
 * description })`), the default from `.default()` / `.prefault()` ("unset" when optional,
 * "required" otherwise), the variable from ENV_OVERRIDES. `.meta()` adds what the schema cannot
 * say itself: `docEnv` (variables named per model or chain), `docDefault` (a default computed
 * at start, or too long to show), `docKey` (the placeholder a record's keys are shown as).
 *
 * @example
 *   npm run docs:config   # rewrites the tables in docs/configuration.md
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { CONFIG_FILE, configSchema, ENV_OVERRIDES, type EnvOverride } from '../gateway/config.js';
import { knowledgeEnvSchema } from '../tool-servers/knowledge/server.js';
import { onchainEnvSchema } from '../tool-servers/onchain/server.js';
import { utilityEnvSchema } from '../tool-servers/utility/settings.js';
import { webEnvSchema } from '../tool-servers/web/config.js';
import { otelEnvSchema } from '../telemetry/otel-settings.js';
import { gatewayTracingEnvSchema } from '../gateway/tracing/start-tracing.js';

declare module 'zod' {
  interface GlobalMeta {
    /** The Environment column of a setting set by variables named per model or chain (`` `DEPOSIT_TREASURY_<CHAIN>` ``). */
    docEnv?: string;
    /** The Default column where the schema's default is computed at start or too long to show. */
    docDefault?: string;
    /** How a record's keys are shown in a setting's path (`<chain>`). */
    docKey?: string;
  }
}

export const CONFIG_PAGE = 'docs/configuration.md';

/** The gateway's tables: each lists the settings under these top-level keys of the config file, in schema order. */
const GATEWAY_TABLES: Record<string, string[]> = {
  gateway: ['server', 'freeMode', 'dataDir', 'cluster', 'logLevel', 'adminToken'],
  limits: ['limits'],
  accounts: ['accounts', 'usage'],
  x402: ['x402'],
  'models-and-chat': ['models', 'chat'],
  responses: ['responses'],
  deposits: ['deposits'],
  'tool-servers': ['mcpServers'],
};

/** The tool servers' tables: the variables each reads, from its environment schema. */
const SERVER_TABLES: Record<string, z.ZodObject> = {
  onchain: onchainEnvSchema,
  web: webEnvSchema,
  knowledge: knowledgeEnvSchema,
  utility: utilityEnvSchema,
};

const HEADER = '| Setting (file) | Environment | Default | Meaning |\n|---|---|---|---|';

export interface Row {
  setting: string;
  env: string;
  default: string;
  meaning: string;
}

/** The parts of a zod definition this walk reads. */
interface Def {
  type: string;
  innerType?: z.core.$ZodType;
  defaultValue?: unknown;
  shape?: Record<string, z.core.$ZodType>;
  element?: z.core.$ZodType;
  valueType?: z.core.$ZodType;
}

function defOf(schema: z.core.$ZodType): Def {
  return schema._zod.def as unknown as Def;
}

const WRAPPERS = new Set(['default', 'prefault', 'optional', 'nullable', 'readonly']);

/** A schema seen through its wrappers: the metadata on any of them, its default, whether it may be left out. */
interface Field {
  inner: z.core.$ZodType;
  meta: z.GlobalMeta;
  hasDefault: boolean;
  defaultValue?: unknown;
  optional: boolean;
}

function fieldOf(schema: z.core.$ZodType): Field {
  const field: Field = { inner: schema, meta: {}, hasDefault: false, optional: false };
  for (let current = schema; ; current = defOf(current).innerType!) {
    field.meta = { ...z.globalRegistry.get(current), ...field.meta };
    const def = defOf(current);
    if (!WRAPPERS.has(def.type)) {
      field.inner = current;
      return field;
    }
    if ((def.type === 'default' || def.type === 'prefault') && !field.hasDefault) {
      field.hasDefault = true;
      field.defaultValue = def.defaultValue;
    }
    if (def.type === 'optional') field.optional = true;
  }
}

/** `x` as inline code. */
const code = (text: string) => '`' + text + '`';

function describeDefault(field: Field, style: 'file' | 'env'): string {
  if (field.meta.docDefault !== undefined) return field.meta.docDefault;
  if (!field.hasDefault) return field.optional ? 'unset' : 'required';
  const value = field.defaultValue;
  if (Array.isArray(value)) {
    if (value.length === 0) return 'none';
    return code(style === 'env' ? value.join(',') : JSON.stringify(value));
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${JSON.stringify(item)}`);
    return code(`{${entries.join(', ')}}`);
  }
  return code(String(value));
}

/** The variables of ENV_OVERRIDES that set `path` or a key inside it. */
function overridesOf(path: string): string[] {
  const named = (override: EnvOverride) => override.path.join('.');
  return ENV_OVERRIDES.flatMap((override) => {
    if (named(override) === path) return [code(override.name) + (override.kind === 'list' ? ' (comma list)' : '')];
    if (named(override).startsWith(path + '.'))
      return [`${code(override.name)} (sets ${code(override.path.slice(path.split('.').length).join('.'))})`];
    return [];
  });
}

/**
 * The rows of the config file's settings under `schema`: a field with a description is one row
 * (what is inside it, such as the fields of `x402.assets`, its description tells); any other
 * object, array or record is walked into. A leaf without a description throws.
 */
export function settingRows(schema: z.core.$ZodType, path: string): Row[] {
  const field = fieldOf(schema);
  const meaning = field.meta.description;
  if (meaning !== undefined) {
    const variables = overridesOf(path);
    if (variables.length > 0 && field.meta.docEnv !== undefined) {
      throw new Error(`${path}: docEnv duplicates what ENV_OVERRIDES says`);
    }
    const env = field.meta.docEnv ?? variables.join(', ');
    return [{ setting: code(path), env, default: describeDefault(field, 'file'), meaning }];
  }
  const def = defOf(field.inner);
  if (def.type === 'object') return Object.entries(def.shape!).flatMap(([key, child]) => settingRows(child, `${path}.${key}`));
  if (def.type === 'array') return settingRows(def.element!, `${path}[]`);
  if (def.type === 'record') {
    if (field.meta.docKey === undefined) throw new Error(`${path}: a record walked into needs .meta({ docKey: '<name>' })`);
    return settingRows(def.valueType!, `${path}.${field.meta.docKey}`);
  }
  throw new Error(`${path} has no description: give it .describe() in its schema`);
}

function gatewayRows(keys: string[]): Row[] {
  const shape = configSchema.shape as Record<string, z.core.$ZodType>;
  const rows = keys.flatMap((key) => {
    if (!(key in shape)) throw new Error(`the config schema has no "${key}"`);
    return settingRows(shape[key], key);
  });
  if (keys.includes('server')) {
    rows.push({ setting: '(file path)', env: code(CONFIG_FILE.env), default: code(CONFIG_FILE.default), meaning: 'Config file to read' });
  }
  return rows;
}

function serverRows(server: string, schema: z.ZodObject): Row[] {
  return envRows(`${server} server`, schema);
}

/** One row per variable of an environment schema, `(who)` in the setting column. */
function envRows(who: string, schema: z.ZodObject): Row[] {
  return Object.entries(schema.shape as Record<string, z.core.$ZodType>).map(([name, child]) => {
    const field = fieldOf(child);
    if (field.meta.description === undefined) throw new Error(`${who}: ${name} has no description: give it .describe()`);
    return { setting: `(${who})`, env: code(name), default: describeDefault(field, 'env'), meaning: field.meta.description };
  });
}

function renderTable(rows: Row[]): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|');
  return [HEADER, ...rows.map((row) => `| ${[row.setting, row.env, row.default, row.meaning].map(cell).join(' | ')} |`)].join('\n');
}

/** Every generated table by name: the gateway's, then one per tool server (`onchain-server`, …). */
export function configTables(): Map<string, string> {
  const tables = new Map<string, string>();
  for (const [name, keys] of Object.entries(GATEWAY_TABLES)) tables.set(name, renderTable(gatewayRows(keys)));
  for (const [server, schema] of Object.entries(SERVER_TABLES)) tables.set(`${server}-server`, renderTable(serverRows(server, schema)));
  // The standard OpenTelemetry variables, read alike by the gateway and each tool server, then the gateway's own.
  tables.set(
    'tracing',
    renderTable([...envRows('gateway and tool servers', otelEnvSchema), ...envRows('gateway', gatewayTracingEnvSchema)]),
  );
  return tables;
}

/** Top-level keys of the config file that no table lists (each one must be in a table). */
export function untabledConfigKeys(): string[] {
  const tabled = new Set(Object.values(GATEWAY_TABLES).flat());
  return Object.keys(configSchema.shape).filter((key) => !tabled.has(key));
}

const BLOCK = /(<!-- begin generated table "([\w-]+)"[^>]*-->\n)[\s\S]*?(<!-- end generated table "\2" -->)/g;

/** `page` with every generated table written afresh; throws when a table has no place in it, or the page names an unknown one. */
export function withConfigTables(page: string, tables = configTables()): string {
  const placed = new Set<string>();
  const written = page.replace(BLOCK, (_, begin: string, name: string, end: string) => {
    const table = tables.get(name);
    if (table === undefined) throw new Error(`${CONFIG_PAGE} has a generated table "${name}" that no schema gives`);
    placed.add(name);
    return `${begin}${table}\n${end}`;
  });
  const missing = [...tables.keys()].filter((name) => !placed.has(name));
  if (missing.length > 0) throw new Error(`${CONFIG_PAGE} has no place for the generated tables ${missing.join(', ')}`);
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const page = readFileSync(CONFIG_PAGE, 'utf8');
  const written = withConfigTables(page);
  if (written === page) console.log(`${CONFIG_PAGE}: up to date`);
  else {
    writeFileSync(CONFIG_PAGE, written);
    console.log(`${CONFIG_PAGE}: tables written`);
  }
}
