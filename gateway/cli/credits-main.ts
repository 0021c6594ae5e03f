/** Entry of `npm run credits`: runs the CLI on the process's arguments and prints its JSON. */
import { ConfigError } from '../config.js';
import { CliError, runCreditsCli } from './credits.js';

runCreditsCli(process.argv.slice(2), process.env).then(
  (output) => {
    process.stdout.write(`${JSON.stringify(output)}\n`);
  },
  (err: unknown) => {
    const message =
      err instanceof CliError || err instanceof ConfigError ? err.message : `credits: ${err instanceof Error ? err.message : String(err)}`;
    process.stderr.write(`${message}\n`);
    process.exitCode = 1;
  },
);
