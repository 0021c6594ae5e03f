/**
 * An MCP stdio client transport that spawns the server with exactly the environment we give it.
 * The SDK's StdioClientTransport always merges in its own inherited set (USER, SHELL, TERM, …);
 * a tool server must see only its configured env plus PATH, HOME and NODE_V8_COVERAGE, and the
 * supervisor needs the child's pid and exit status, so we own the child here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { CappedLineSplitter } from './capped-lines.js';

/**
 * Largest JSON-RPC message a child may send (what came since its last newline); tool outputs are
 * far smaller, so past this the child misbehaves and is killed.
 */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Longest stderr line passed on (longer ones are cut). */
const MAX_STDERR_LINE_CHARS = 8192;

export interface ChildProcessTransportOptions {
  command: string;
  args: string[];
  /** The child's whole environment (nothing else is inherited). */
  env: Record<string, string>;
  cwd?: string;
  /** Each stderr line of the child (tool servers log JSON there), cut at MAX_STDERR_LINE_CHARS. */
  onStderrLine?: (line: string) => void;
  /** How long `close()` waits after ending stdin, then after SIGTERM, before escalating. */
  closeGraceMs?: number;
}

/** How a child ended: exit code, or the signal that killed it. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Spawn a stdio MCP server and speak newline-delimited JSON-RPC with it.
 *
 * @example
 *   const transport = new ChildProcessTransport({ command: 'node', args: ['server.js'], env: { PATH } })
 *   await new Client({ name: 'gw', version: '1' }).connect(transport)
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  /** How the child ended, once it has. */
  exit?: ChildExit;
  /** Why we killed the child, when it broke the protocol's bounds. */
  fault?: string;

  private child?: ChildProcess;
  private readonly readBuffer: ReadBuffer;
  private readonly options: ChildProcessTransportOptions;
  private exited?: Promise<void>;

  constructor(options: ChildProcessTransportOptions) {
    this.options = options;
    this.readBuffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  }

  /** The child's pid while it runs (and after, for checks by pid). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('ChildProcessTransport already started');
    return new Promise((resolve, reject) => {
      const child = spawn(this.options.command, this.options.args, {
        env: this.options.env,
        cwd: this.options.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        // Its own process group: a Ctrl-C or a group-wide SIGTERM reaches only the gateway, which
        // drains in-flight tool calls first and then closes its children itself. If the gateway
        // dies outright, the child sees stdin end and exits (tool-servers/kit/run-stdio.ts).
        detached: true,
      });
      this.child = child;
      let markExited!: () => void;
      this.exited = new Promise((done) => (markExited = done));
      let spawned = false;
      child.once('error', (error) => {
        if (!spawned) {
          // Never started (e.g. command not found): there will be no 'exit'.
          this.exit = { code: null, signal: null };
          markExited();
          reject(error);
          return;
        }
        this.onerror?.(error);
      });
      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      // 'exit', not 'close': a grandchild holding the pipes open must not delay "down".
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        markExited();
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      const stderrLines = new CappedLineSplitter(MAX_STDERR_LINE_CHARS, (line) => this.options.onStderrLine?.(line));
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (text: string) => stderrLines.push(text));
    });
  }

  /** Buffer stdout up to the message cap; a child that goes past it is killed and so marked down. */
  private receive(chunk: Buffer): void {
    if (this.fault) return;
    try {
      // Throws once the message still being read (what came since the last newline) passes the cap.
      this.readBuffer.append(chunk);
    } catch {
      this.fault = `sent a message over ${MAX_MESSAGE_BYTES / 1024 / 1024} MiB`;
      this.child?.kill('SIGKILL');
      return;
    }
    this.drain();
  }

  private drain(): void {
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (a stray console.log) is reported, not fatal.
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || this.exit || stdin.destroyed) {
        reject(new Error('Not connected'));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /**
   * Stop the child: end stdin (a well-behaved server exits 0), then SIGTERM, then SIGKILL.
   * Resolves once the process is gone.
   */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || !this.exited) return;
    const grace = this.options.closeGraceMs ?? 2000;
    const gone = () => this.exit !== undefined;
    const waitFor = (ms: number) => Promise.race([this.exited, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
    if (!gone()) {
      child.stdin?.end();
      await waitFor(grace);
    }
    if (!gone()) {
      child.kill('SIGTERM');
      await waitFor(grace);
    }
    if (!gone()) {
      child.kill('SIGKILL');
      await this.exited;
    }
    this.readBuffer.clear();
  }
}
