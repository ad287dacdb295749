import http from 'node:http';
import { randomBytes } from 'node:crypto';

export interface HttpResult {
  /** 0 when no response came: a transport error or the client's own timeout. */
  status: number;
  body: unknown;
  /** Milliseconds from sending to the end of the response (or to the failure). */
  ms: number;
  /** Set when no response came: `timeout`, `ECONNRESET`, ... */
  error?: string;
}

export interface RequestOptions {
  token?: string;
  /** A plain object is sent as JSON; a Multipart as multipart/form-data. */
  body?: Record<string, unknown> | Multipart;
  timeoutMs?: number;
}

/** A multipart/form-data body built by hand: text fields, then one file. */
export class Multipart {
  readonly boundary = `----loadtest${randomBytes(12).toString('hex')}`;
  private readonly parts: Buffer[] = [];

  field(name: string, value: string): this {
    this.parts.push(
      Buffer.from(`--${this.boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
    );
    return this;
  }

  file(name: string, filename: string, content: Buffer, contentType = 'text/x-python'): this {
    this.parts.push(
      Buffer.from(
        `--${this.boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\n` +
          `Content-Type: ${contentType}\r\n\r\n`,
      ),
      content,
      Buffer.from('\r\n'),
    );
    return this;
  }

  toBuffer(): Buffer {
    return Buffer.concat([...this.parts, Buffer.from(`--${this.boundary}--\r\n`)]);
  }
}

/**
 * A keep-alive HTTP client for one server on loopback. The scripts must never send traffic
 * anywhere else, so the host is fixed and checked here rather than trusted to each caller.
 */
export class HttpClient {
  private readonly agent: http.Agent;

  constructor(
    readonly host: string,
    readonly port: number,
    maxSockets: number,
    private readonly defaultTimeoutMs = 30_000,
  ) {
    if (host !== '127.0.0.1') throw new Error(`refusing to send traffic to ${host}: loopback only`);
    this.agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  get(path: string, options: RequestOptions = {}): Promise<HttpResult> {
    return this.request('GET', path, options);
  }

  post(path: string, options: RequestOptions = {}): Promise<HttpResult> {
    return this.request('POST', path, options);
  }

  request(method: string, path: string, options: RequestOptions = {}): Promise<HttpResult> {
    const headers: Record<string, string | number> = { accept: 'application/json' };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let payload: Buffer | undefined;
    if (options.body instanceof Multipart) {
      payload = options.body.toBuffer();
      headers['content-type'] = `multipart/form-data; boundary=${options.body.boundary}`;
    } else if (options.body !== undefined) {
      payload = Buffer.from(JSON.stringify(options.body));
      headers['content-type'] = 'application/json';
    }
    if (payload) headers['content-length'] = payload.length;
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    const started = performance.now();

    return new Promise<HttpResult>((resolve) => {
      let settled = false;
      const finish = (result: Omit<HttpResult, 'ms'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...result, ms: performance.now() - started });
      };
      const request = http.request(
        { host: this.host, port: this.port, method, path, headers, agent: this.agent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', (error: NodeJS.ErrnoException) =>
            finish({ status: 0, body: null, error: error.code ?? error.message }),
          );
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = text;
            try {
              body = text === '' ? null : JSON.parse(text);
            } catch {
              // not JSON: kept as text for the report
            }
            finish({ status: response.statusCode ?? 0, body });
          });
        },
      );
      // The client's own bound: a response that never comes is a hang, and is reported as one.
      const timer = setTimeout(() => {
        finish({ status: 0, body: null, error: 'timeout' });
        request.destroy();
      }, timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) =>
        finish({ status: 0, body: null, error: error.code ?? error.message }),
      );
      request.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
