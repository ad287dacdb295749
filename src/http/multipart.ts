import { HttpStatus } from '@nestjs/common';
import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../common/api-error';
import { discardBody } from './unread-body';

/** The one file a route takes, and the answers for what can go wrong with it. */
export interface MultipartFileRule {
  /** The part that must carry it; a file in any other part is `unexpected`. */
  field: string;
  maxSize: number;
  /** Checked from the part header, before any of the file is read: null accepts. */
  refuse: (filename: string) => ApiError | null;
  tooLarge: () => ApiError;
  unexpected: () => ApiError;
}

export interface MultipartRules {
  fields: number;
  fieldSize: number;
  parts: number;
  /** Fields whose overlong value is a metadata error (400 with the field named), not a broken body. */
  namedFields?: { names: readonly string[]; message: string };
  /** Without it, any file part is a malformed body. */
  file?: MultipartFileRule;
}

export interface UploadedFile {
  /** As the part header gave it (latin1, as busboy and multer read it). */
  originalname: string;
  buffer: Buffer;
}

export interface MultipartBody {
  fields: Record<string, string | string[]>;
  file?: UploadedFile;
}

export const MALFORMED_BODY = 'Malformed request body';

/**
 * Room for the multipart framing (boundaries, part headers) around the parts the limits allow:
 * a body that goes on past it without reaching a limit (an endless preamble) is malformed.
 */
const FRAMING_ALLOWANCE = 1024 * 1024;

/**
 * Reads a multipart/form-data body with busboy, streaming: each limit stops the parser where
 * it is hit, so no more than the limits are ever held. Every failure is an ApiError with the
 * answer the client gets; this is the one place that decides those answers.
 */
export function readMultipart(request: IncomingMessage, rules: MultipartRules): Promise<MultipartBody> {
  return new Promise<MultipartBody>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: request.headers,
        // busboy reports a limit when it is reached; each rule is the most allowed, so one more.
        limits: {
          fields: rules.fields,
          fieldSize: rules.fieldSize + 1,
          parts: rules.parts + 1,
          files: rules.file ? 1 : 0,
          fileSize: rules.file ? rules.file.maxSize + 1 : undefined,
        },
      });
    } catch {
      // A missing or broken boundary.
      reject(new ApiError(HttpStatus.BAD_REQUEST, MALFORMED_BODY));
      return;
    }

    const fields: Record<string, string | string[]> = Object.create(null) as Record<
      string,
      string | string[]
    >;
    let file: UploadedFile | undefined;
    let settled = false;
    let received = 0;
    const ceiling =
      (rules.file ? rules.file.maxSize : 0) + rules.fields * rules.fieldSize + FRAMING_ALLOWANCE;

    const finish = (error: ApiError | null) => {
      if (settled) return;
      settled = true;
      request.off('data', count);
      if (error) {
        // Answered now, not once the body is in: the rest is dropped as it comes, and the
        // answer closes the connection after the client has read it (unread-body.ts).
        request.unpipe(parser);
        discardBody(request);
        reject(error);
      } else {
        resolve({ fields: { ...fields }, file });
      }
    };
    const malformed = () => finish(new ApiError(HttpStatus.BAD_REQUEST, MALFORMED_BODY));
    const count = (chunk: Buffer) => {
      received += chunk.length;
      if (received > ceiling) malformed();
    };

    parser.on('field', (name, value, info) => {
      if (info.valueTruncated || info.nameTruncated) {
        const named = rules.namedFields;
        if (named && named.names.includes(name)) {
          finish(new ApiError(HttpStatus.BAD_REQUEST, named.message, { [name]: 'is too long' }));
        } else {
          malformed();
        }
        return;
      }
      const previous = fields[name];
      if (previous === undefined) fields[name] = value;
      else fields[name] = Array.isArray(previous) ? [...previous, value] : [previous, value];
    });

    parser.on('file', (name, stream, info) => {
      const rule = rules.file;
      if (!rule) {
        stream.resume();
        malformed();
        return;
      }
      if (name !== rule.field || file !== undefined) {
        stream.resume();
        finish(rule.unexpected());
        return;
      }
      const refusal = rule.refuse(info.filename ?? '');
      if (refusal) {
        stream.resume();
        finish(refusal);
        return;
      }
      stream.on('error', malformed);
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        chunks.push(chunk);
      });
      stream.on('limit', () => {
        chunks.length = 0;
        finish(rule.tooLarge());
      });
      stream.on('end', () => {
        if (!settled) file = { originalname: info.filename ?? '', buffer: Buffer.concat(chunks, size) };
      });
    });

    // A second file is over the `files` limit: the same answer as a file in the wrong part.
    parser.on('filesLimit', () => (rules.file ? finish(rules.file.unexpected()) : malformed()));
    parser.on('fieldsLimit', malformed);
    parser.on('partsLimit', malformed);
    parser.on('error', malformed);
    parser.on('close', () => finish(null));
    request.on('error', malformed);
    request.on('aborted', malformed);

    request.pipe(parser);
    // After piping, so counting does not start the flow before the parser is attached.
    request.on('data', count);
  });
}
