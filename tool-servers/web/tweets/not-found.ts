import { ToolError } from '../../kit/index.js';

/** The one answer for a tweet that cannot be shown: deleted, private or never existed. */
export function tweetNotFound(id: string, detail: string): ToolError {
  return new ToolError('not_found', `Tweet ${id} is not available (${detail}).`);
}
