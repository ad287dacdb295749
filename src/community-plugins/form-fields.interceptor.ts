import { CallHandler, ExecutionContext, HttpStatus, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import multer from 'multer';
import { from, Observable, switchMap } from 'rxjs';
import { ApiError } from '../common/api-error';

/** Enough for a 2000-character reason in any script, and nothing else of size. */
const parseFields = multer({ limits: { fieldSize: 16 * 1024, fields: 8, parts: 8, files: 0 } }).none();

/** Text fields of a multipart/form-data body for the review routes; JSON and urlencoded are parsed globally. */
@Injectable()
export class FormFieldsInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const parsed = new Promise<void>((resolve, reject) => {
      parseFields(request, response, (error: unknown) => {
        if (error) reject(new ApiError(HttpStatus.BAD_REQUEST, 'Malformed request body'));
        else resolve();
      });
    });
    return from(parsed).pipe(switchMap(() => next.handle()));
  }
}
