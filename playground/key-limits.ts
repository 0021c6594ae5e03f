/**
 * The limits a key is minted with (POST /auth/api-keys): the "Limits for a new key" form, read
 * into the request's fields. Empty fields set nothing; the gateway checks the tools and models it
 * names (a 400 naming the field is shown as any API error is).
 */
import { byId } from './dom.js';

export interface KeyLimitFields {
  max_credits?: number;
  max_credits_per_day?: number;
  expires_at?: string;
  tools?: string[];
  models?: string[];
}

/** The form's limits; throws with a message naming the field when one is not what it must be. */
export function readKeyLimits(): KeyLimitFields {
  const limits: KeyLimitFields = {};
  const credits = (id: string, label: string): number | undefined => {
    const text = byId<HTMLInputElement>(id).value.trim();
    if (text === '') return undefined;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 0) throw new Error(`${label} must be a whole number of credits, 0 or more.`);
    return value;
  };
  const list = (id: string): string[] | undefined => {
    const text = byId<HTMLInputElement>(id).value.trim();
    return text === '' ? undefined : text.split(/[\s,]+/).filter(Boolean);
  };
  const max = credits('limit-max-credits', 'Max credits');
  if (max !== undefined) limits.max_credits = max;
  const perDay = credits('limit-per-day', 'Max credits per day');
  if (perDay !== undefined) limits.max_credits_per_day = perDay;
  const expires = byId<HTMLInputElement>('limit-expires').value;
  if (expires) limits.expires_at = new Date(expires).toISOString();
  const tools = list('limit-tools');
  if (tools) limits.tools = tools;
  const models = list('limit-models');
  if (models) limits.models = models;
  return limits;
}

/** How the key's limits read in the status line ("" for none). */
export function describeLimits(limits: KeyLimitFields): string {
  const parts: string[] = [];
  if (limits.max_credits !== undefined) parts.push(`${limits.max_credits} credits`);
  if (limits.max_credits_per_day !== undefined) parts.push(`${limits.max_credits_per_day} a day`);
  if (limits.expires_at) parts.push(`until ${limits.expires_at}`);
  if (limits.tools) parts.push(`tools ${limits.tools.join(', ')}`);
  if (limits.models) parts.push(`models ${limits.models.join(', ')}`);
  return parts.join('; ');
}
