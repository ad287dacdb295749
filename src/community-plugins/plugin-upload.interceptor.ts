import {
  CallHandler,
  ExecutionContext,
  HttpStatus,
  Inject,
  Injectable,
  NestInterceptor,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import multer, { MulterError } from 'multer';
import { from, Observable, switchMap } from 'rxjs';
import { ApiError } from '../common/api-error';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { PLUGIN_FILE_PART } from './plugin-constants';
import { METADATA_FIELDS } from './plugin-metadata';
import { hasPythonExtension } from './plugin-storage';

/** Room for the text fields and the multipart framing around the file. */
const FIELD_SIZE = 16 * 1024;
const MAX_FIELDS = 16;
const MAX_PARTS = 24;
/**
 * After a limit is hit the rest of the body is read and dropped, never kept, so the client
 * gets the answer instead of a broken pipe. A body that goes on this far past the limit is
 * not a mistake, and its connection is closed instead.
 */
const DRAIN_ALLOWANCE = 1024 * 1024;

export const ONLY_PY_FILES = 'Only .py files are accepted';
export const ONE_FILE_ONLY = `Only one file, in part ${PLUGIN_FILE_PART}, is accepted`;
export const INVALID_METADATA = 'Invalid plugin metadata';
export const MALFORMED_BODY = 'Malformed request body';
export const fileTooLarge = (limit: number) => `Plugin file exceeds maximum size of ${limit} bytes`;

/**
 * Parses the multipart upload before the handler runs, in the spec's order: the file name's
 * extension is checked from the part header, before any of the file is read; the size limit
 * stops the parser at the limit, so at most that many bytes of the file are ever held.
 */
@Injectable()
export class PluginUploadInterceptor implements NestInterceptor {
  private readonly parse: ReturnType<ReturnType<typeof multer>['single']>;
  private readonly maxSize: number;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.maxSize = config.pluginUploadMaxSize;
    this.parse = multer({
      storage: multer.memoryStorage(),
      limits: { fileSize: this.maxSize, fieldSize: FIELD_SIZE, fields: MAX_FIELDS, parts: MAX_PARTS },
      fileFilter: (_request, file, accept) => {
        if (hasPythonExtension(file.originalname)) accept(null, true);
        else accept(new ApiError(HttpStatus.BAD_REQUEST, ONLY_PY_FILES));
      },
    }).single(PLUGIN_FILE_PART);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    return from(this.run(http.getRequest<Request>(), http.getResponse<Response>())).pipe(
      switchMap(() => next.handle()),
    );
  }

  private run(request: Request, response: Response): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let received = 0;
      const ceiling = this.maxSize + DRAIN_ALLOWANCE;
      const count = (chunk: Buffer) => {
        received += chunk.length;
        if (received > ceiling) request.destroy();
      };
      this.parse(request, response, (error: unknown) => {
        request.off('data', count);
        if (error) reject(this.translate(error));
        else resolve();
      });
      // After the parser has piped the request, so counting does not start the flow early.
      if (!request.readableEnded) request.on('data', count);
    });
  }

  private translate(error: unknown): Error {
    if (error instanceof ApiError) return error;
    if (error instanceof MulterError) {
      switch (error.code) {
        case 'LIMIT_FILE_SIZE':
          return new ApiError(HttpStatus.PAYLOAD_TOO_LARGE, fileTooLarge(this.maxSize));
        case 'LIMIT_UNEXPECTED_FILE':
        case 'LIMIT_FILE_COUNT':
          return new ApiError(HttpStatus.BAD_REQUEST, ONE_FILE_ONLY);
        case 'LIMIT_FIELD_VALUE':
          if ((METADATA_FIELDS as readonly string[]).includes(error.field ?? '')) {
            return new ApiError(HttpStatus.BAD_REQUEST, INVALID_METADATA, { [error.field!]: 'is too long' });
          }
      }
    }
    // Everything else a parser can say (bad framing, a truncated body, too many parts) is the body's fault.
    return new ApiError(HttpStatus.BAD_REQUEST, MALFORMED_BODY);
  }
}
