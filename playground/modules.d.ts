/** Modules the bundler resolves that TypeScript cannot see into. */

/** Style sheets: esbuild emits them beside the script that imports them. */
declare module '*.css';

/** swagger-ui-dist ships no types; the one call the docs page makes. */
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  export default function SwaggerUIBundle(options: { url: string; dom_id: string; deepLinking?: boolean }): unknown;
}
